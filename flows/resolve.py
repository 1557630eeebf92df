"""The resolve flow: read inputs, map a task over batches of thousands of references, write the ledger.

Only orchestration lives here (batching, retries, progress logs, the run artifact); every step
is a function of ``citeledger.run.pipeline`` that the CLI and tests can call without Prefect.
"""
from __future__ import annotations

import json
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from citeledger.run import orchestrate, pipeline
from citeledger.run.orchestrate import BATCHES_IN_FLIGHT
from citeledger.run.summary import RunSummary
from citeledger.run.task_runners import choose_task_runner, make_task_runner, workers_report_here
from resolvers.errors import TransientError


def _retry_transient(task, task_run, state) -> bool:
    """Retry a batch only for errors that may pass (I/O hiccups, remote outages), not for bugs."""
    try:
        state.result()
    except TransientError:
        return True
    except Exception:  # noqa: BLE001 - anything else is permanent
        return False
    return False


@task(name="resolve-batch", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5],
      retry_condition_fn=_retry_transient)
def run_batch_task(job: pipeline.BatchJob) -> dict[str, int]:
    return pipeline.run_batch(job)


@task(name="write-records", cache_policy=NO_CACHE)
def write_records_task(run_id: str, ledger: str, catalog: str) -> list[str]:
    return [str(p) for p in orchestrate.records_of_run(run_id, ledger, catalog)]


def summary_markdown(summary: RunSummary) -> str:
    lines = [f"# citeledger run `{summary.run_id}`", "",
             f"{summary.references} references, {summary.rejects} rejected rows, "
             f"{summary.transitions} transitions, "
             f"{summary.seconds} s ({summary.references_per_second} references/s)", "",
             "| state | count |", "|---|---|"]
    lines += [f"| {state} | {count} |" for state, count in summary.states.items()]
    if summary.reasons:
        lines += ["", "| reason | count |", "|---|---|"]
        lines += [f"| {reason} | {count} |" for reason, count in summary.reasons.items()]
    for value, title in ((summary.inputs, "inputs"), (summary.timings, "seconds per step"),
                         (summary.search, "search requests"), (summary.errors, "errors")):
        if value:
            lines += ["", f"**{title}**: " + json.dumps(value, sort_keys=True, default=str)]
    return "\n".join(lines)


def _collect(futures: list, plan: pipeline.RunPlan, logger: Any) -> list[str]:
    """Wait for the batches, reporting progress (done, rate, time left); the errors, if any."""
    return orchestrate.collect(futures, [job.size for job in plan.pending],
                               done_order=as_completed, logger=logger)


def resolve_batches(plan: pipeline.RunPlan, task_runner: str = "auto", dask_address: str | None = None,
                    dask_workers: int = 2) -> list[str]:
    """Map the batch task over the plan's pending batches on the chosen task runner (see
    ``citeledger.run.task_runners``); returns the errors of failed batches."""
    logger = get_run_logger()
    if not plan.pending:
        return []
    task_runner = choose_task_runner(task_runner, sum(job.size for job in plan.pending),
                                     remote=any(job.remote for job in plan.pending))
    runner = make_task_runner(task_runner, dask_address, dask_workers)
    logger.info("resolving %d batches on %s", len(plan.pending), task_runner)
    if runner is None:
        return _collect(run_batch_task.map(plan.pending), plan, logger)
    with workers_report_here(), runner:
        return _collect(list(runner.map(run_batch_task, {"job": plan.pending})), plan, logger)


@flow(name="resolve-references", task_runner=ThreadPoolTaskRunner(max_workers=BATCHES_IN_FLIGHT))
def resolve_references(inputs: list[str], catalog: str = "data/catalog", ledger: str = "data/ledger",
                       run_id: str | None = None, remote: bool = False, citing_paper: str | None = None,
                       batch_size: int = pipeline.DEFAULT_BATCH_SIZE, max_raw_chars: int = 100_000,
                       records: bool = True, task_runner: str = "auto", dask_address: str | None = None,
                       dask_workers: int = 2) -> dict[str, Any]:
    """Resolve reference files into the ledger. Given the id of an interrupted run, completes it.
    ``task_runner``: ``auto`` (default: ``processes`` for large runs on several cores, see
    ``citeledger.run.task_runners``), ``threads``, ``processes`` (``dask_workers`` of them) or ``dask``
    (``dask_address`` of a scheduler, else a local cluster of ``dask_workers`` processes)."""
    logger = get_run_logger()
    summary = orchestrate.resolve_run(
        inputs, catalog, ledger, lambda plan: resolve_batches(plan, task_runner, dask_address, dask_workers),
        logger, write_records_task if records else None, run_id=run_id, remote=remote,
        citing_paper=citing_paper, batch_size=batch_size, max_raw_chars=max_raw_chars)
    orchestrate.publish_artifact(summary_markdown(summary), "resolve-summary",
                                 f"citeledger run {summary.run_id}", logger)
    return summary.as_dict()
