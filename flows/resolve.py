"""The resolve flow: read inputs, map a task over batches of thousands of references, write the ledger.

Only orchestration lives here (batching, retries, progress logs, the run artifact); every step
is a function of ``citeledger.pipeline`` that the CLI and tests can call without Prefect.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from citeledger import pipeline
from citeledger.inputs import InputLimits
from citeledger.runners import choose_task_runner, make_task_runner, workers_report_here
from resolvers.errors import RunIncomplete, TransientError


# Batches resolved at once by the default runner: resolution is CPU-bound Python (numpy and DuckDB
# release the GIL for part of it), so a few threads keep both cores busy; more only hold more
# batches in memory at once.
BATCHES_IN_FLIGHT = max(2, os.cpu_count() or 2)


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
def resolve_batch_task(job: pipeline.BatchJob) -> dict[str, int]:
    return pipeline.run_batch(job)


@task(name="write-records", cache_policy=NO_CACHE)
def write_records_task(run_id: str, ledger: str, catalog: str) -> list[str]:
    papers = pipeline.papers_touched(run_id, ledger, catalog)
    return [str(p) for p in pipeline.write_records(papers, ledger, catalog)]


def summary_markdown(summary: dict[str, Any]) -> str:
    lines = [f"# citeledger run `{summary['run_id']}`", "",
             f"{summary['references']} references, {summary['rejects']} rejected rows, "
             f"{summary.get('transitions', 0)} transitions, "
             f"{summary['seconds']} s ({summary['references_per_second']} references/s)", "",
             "| state | count |", "|---|---|"]
    lines += [f"| {state} | {count} |" for state, count in summary["states"].items()]
    for key, title in (("inputs", "inputs"), ("timings", "seconds per step"), ("errors", "errors")):
        if summary.get(key):
            lines += ["", f"**{title}**: " + json.dumps(summary[key], sort_keys=True, default=str)]
    return "\n".join(lines)


def _collect(futures: list, plan: pipeline.RunPlan, logger: Any) -> list[str]:
    """Wait for the batches, logging progress (done, rate, time left); the errors, if any."""
    total = sum(len(j.references) for j in plan.pending)
    sizes = {f.task_run_id: len(job.references) for f, job in zip(futures, plan.pending)}
    started = time.monotonic()
    done = 0
    errors: list[str] = []
    for future in as_completed(futures):
        try:
            future.result()
        except Exception as exc:  # noqa: BLE001 - reported in the run row, then raised by the caller
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        done += sizes[future.task_run_id]
        elapsed = time.monotonic() - started
        rate = done / elapsed if elapsed else 0.0
        eta = (total - done) / rate if rate else float("nan")
        logger.info("%d/%d references, %.0f references/s, about %.0f s left", done, total, rate, eta)
    return errors


def resolve_batches(plan: pipeline.RunPlan, task_runner: str = "auto", dask_address: str | None = None,
                    dask_workers: int = 2) -> list[str]:
    """Map the batch task over the plan's pending batches on the chosen task runner (see
    ``citeledger.runners``); returns the errors of failed batches."""
    logger = get_run_logger()
    if not plan.pending:
        return []
    task_runner = choose_task_runner(task_runner, sum(len(job.references) for job in plan.pending))
    runner = make_task_runner(task_runner, dask_address, dask_workers)
    logger.info("resolving %d batches on %s", len(plan.pending), task_runner)
    if runner is None:
        return _collect(resolve_batch_task.map(plan.pending), plan, logger)
    with workers_report_here(), runner:
        return _collect(list(runner.map(resolve_batch_task, {"job": plan.pending})), plan, logger)


@flow(name="resolve-references", task_runner=ThreadPoolTaskRunner(max_workers=BATCHES_IN_FLIGHT))
def resolve_references(inputs: list[str], catalog: str = "data/catalog", ledger: str = "data/ledger",
                       run_id: str | None = None, remote: bool = False, citing_paper: str | None = None,
                       batch_size: int = pipeline.DEFAULT_BATCH_SIZE, max_raw_chars: int = 100_000,
                       records: bool = True, task_runner: str = "auto", dask_address: str | None = None,
                       dask_workers: int = 2) -> dict[str, Any]:
    """Resolve reference files into the ledger. Given the id of an interrupted run, completes it.
    ``task_runner``: ``auto`` (default: ``processes`` for large runs on several cores, see
    ``citeledger.runners``), ``threads``, ``processes`` (``dask_workers`` of them) or ``dask``
    (``dask_address`` of a scheduler, else a local cluster of ``dask_workers`` processes)."""
    logger = get_run_logger()
    t0 = time.monotonic()
    plan = pipeline.plan_run(inputs, catalog, ledger, run_id=run_id, batch_size=batch_size,
                             limits=InputLimits(max_raw_chars=max_raw_chars), citing_paper=citing_paper,
                             remote=remote)
    logger.info("run %s: %d references in %d batches (%d to do%s), %d rejected rows",
                plan.run_id, plan.references, len(plan.jobs), len(plan.pending),
                ", resuming" if plan.resumed else "", len(plan.rejects))
    for reject in plan.rejects[:20]:
        logger.warning("rejected %s", reject.message)
    t1 = time.monotonic()
    try:
        errors = resolve_batches(plan, task_runner, dask_address, dask_workers)
        if errors:
            raise RunIncomplete(f"{len(errors)} batch(es) failed; re-run with --run-id {plan.run_id} to finish: "
                                f"{errors[0]}")
        t2 = time.monotonic()
        summary = pipeline.finish_run(plan, timings={"plan": t1 - t0, "resolve": t2 - t1})
    except BaseException:
        pipeline.abandon_run(plan)
        raise
    if records:
        written = write_records_task(plan.run_id, ledger, catalog)
        summary["records"] = len(written)
        logger.info("wrote %d citation records under %s/records", len(written), ledger)
    try:
        from prefect.artifacts import create_markdown_artifact

        create_markdown_artifact(markdown=summary_markdown(summary), key="resolve-summary",
                                 description=f"citeledger run {plan.run_id}")
    except Exception as exc:  # noqa: BLE001 - an artifact is a report, never a reason to fail a run
        logger.warning("could not write the run artifact: %s", exc)
    return summary
