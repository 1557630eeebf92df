"""The resolve flow: read inputs, map a task over batches of thousands of references, write the ledger.

Only orchestration lives here (batching, retries, progress logs, the run artifact): the flow makes
the steps of a run in order (``citeledger.run``: planning, a task per batch, finishing, the records
as a task of their own before the run's row), each a function the CLI and tests call without Prefect.
"""
from __future__ import annotations

import json
import time
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import unmapped

from citeledger.inputs.rows import InputLimits
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.run import remote_run
from citeledger.run.batches import run_batch
from citeledger.run.finishing import close_run, run_records, settle_run
from citeledger.run.orchestrate import BATCHES_IN_FLIGHT, abandoned_on_failure, check_batches, collect
from citeledger.run.planning import DEFAULT_BATCH_SIZE, BatchJob, RunPlan, log_plan, new_run_id, plan_run
from citeledger.run.summary import RunSummary, state_table
from citeledger.run.task_runners import choose_task_runner, make_task_runner, workers_report_here
from citeledger.storage.places import CatalogPlaces
from flows.flow_options import (
    BatchSize,
    MaxRawChars,
    TaskRunner,
    Workers,
    publish_artifact,
    publish_table,
    record_failed_run,
    this_flow_run,
)
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


def batch_run_name(parameters: dict[str, Any]) -> str:
    """A batch's task run name: its number in the run, of how many, and its references."""
    job = parameters["job"]
    return f"resolve-batch-{parameters['number']}-of-{parameters['batches']}-{job.size}-refs"


@task(name="resolve-batch", task_run_name=batch_run_name, cache_policy=NO_CACHE, retries=2,
      retry_delay_seconds=[1, 5], retry_condition_fn=_retry_transient)
def run_batch_task(job: BatchJob, number: int = 1, batches: int = 1) -> dict[str, int]:
    counts = run_batch(job)
    get_run_logger().info("batch %d of %d: %d references: %s", number, batches, job.size,
                          ", ".join(f"{state} {n}" for state, n in sorted(counts.items()) if n) or "none")
    return counts


def batch_numbers(plan: RunPlan) -> dict[str, Any]:
    """The mapped parameters of the plan's pending batches: each job, its number (its place in the
    whole run, so a resumed run's batch 7 is still batch 7) and the run's batch count."""
    number = {job.part: n for n, job in enumerate(plan.jobs, start=1)}
    return {"job": plan.pending, "number": [number.get(job.part, 0) for job in plan.pending],
            "batches": unmapped(len(plan.jobs))}


@task(name="write-records", cache_policy=NO_CACHE)
def write_records_task(run_id: str, ledger: LedgerStore, catalog: CatalogPlaces) -> list[str]:
    return [str(p) for p in run_records(run_id, ledger, catalog)]


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
    if summary.inputs:
        lines += ["", "**inputs**: " + ", ".join(f"`{path}`" for path in summary.inputs)]
    if summary.timings:
        lines += ["", "| step | seconds |", "|---|---|"]
        lines += [f"| {step} | {seconds} |" for step, seconds in summary.timings.items()]
    for value, title in ((summary.search, "search requests"), (summary.errors, "errors")):
        if value:
            lines += ["", f"**{title}**: " + json.dumps(value, sort_keys=True, default=str)]
    notes = summary.notes()  # circuits that opened, folders' entries left out, changed raw strings
    if notes:
        lines += ["", *[f"- {note}" for note in notes]]
    return "\n".join(lines)


def _collect(futures: list, plan: RunPlan, logger: Any) -> list[str]:
    """Wait for the batches, reporting progress (done, rate, time left); the errors, if any."""
    return collect(futures, [job.size for job in plan.pending], done_order=as_completed, logger=logger)


def resolve_batches(plan: RunPlan, task_runner: TaskRunner = "auto", dask_address: str | None = None,
                    dask_workers: int = 2) -> list[str]:
    """Map the batch task over the plan's pending batches on the chosen task runner (see
    ``citeledger.run.task_runners``); returns the errors of failed batches."""
    logger = get_run_logger()
    if not plan.pending:
        return []
    chosen = choose_task_runner(task_runner, sum(job.size for job in plan.pending),
                                remote=any(job.remote for job in plan.pending))
    runner = make_task_runner(chosen, dask_address, dask_workers)
    logger.info("resolving %d batches on %s", len(plan.pending), chosen)
    if runner is None:  # the flow's threads (every remote run): an interrupt stops their remote requests
        with remote_run.remote_stopped_on_interrupt():
            return _collect(run_batch_task.map(**batch_numbers(plan)), plan, logger)
    with workers_report_here(), runner:
        return _collect(list(runner.map(run_batch_task, batch_numbers(plan))), plan, logger)


def resolve_run_name() -> str:
    """The flow run's name: the ledger run id it resolves (given, or a new one)."""
    from prefect.runtime import flow_run

    return flow_run.parameters.get("run_id") or new_run_id()


@flow(name="resolve-references", flow_run_name=resolve_run_name, on_failure=[record_failed_run],
      task_runner=ThreadPoolTaskRunner(max_workers=BATCHES_IN_FLIGHT))
def resolve_references(inputs: list[str], catalog: str = "data/catalog", ledger: str = "data/ledger",
                       run_id: str | None = None, remote: bool = False, citing_paper: str | None = None,
                       batch_size: BatchSize = DEFAULT_BATCH_SIZE, max_raw_chars: MaxRawChars = 100_000,
                       records: bool = True, task_runner: TaskRunner = "auto", dask_address: str | None = None,
                       dask_workers: Workers = 2) -> dict[str, Any]:
    """Resolve reference files into the ledger. Given the id of an interrupted run, completes it.

    Args:
        inputs: Reference files or folders (JSONL, CSV, Parquet, .bbl, .bib, PDF, paper sources).
        catalog: The catalog folder the references are resolved against.
        ledger: The ledger folder the observations and the run row are written to.
        run_id: The ledger run id (the flow run's name); an interrupted run's id completes it. Default: a new one.
        remote: Also ask the configured remote services (off: no network).
        citing_paper: The citing paper of rows that name none.
        batch_size: References per batch task.
        max_raw_chars: Longer reference strings are rejected.
        records: Rebuild the citation records of the papers the run touched.
        task_runner: Where batches run - auto (processes for 20,000 references or more on 2+ cores, else
            threads), threads, processes (a pool of dask_workers) or dask.
        dask_address: Scheduler of an existing Dask cluster (task_runner dask); default a local cluster.
        dask_workers: Processes of the process pool or of a local Dask cluster.
    """
    logger = get_run_logger()
    run_id, flow_run_id = this_flow_run()
    t0 = time.monotonic()
    plan = log_plan(plan_run(inputs, catalog, LedgerStore(ledger), run_id=run_id, batch_size=batch_size,
                             limits=InputLimits(max_raw_chars=max_raw_chars), citing_paper=citing_paper,
                             remote=remote), logger)
    timings = {"plan": time.monotonic() - t0}
    with abandoned_on_failure(plan):
        t1 = time.monotonic()
        check_batches(plan, resolve_batches(plan, task_runner, dask_address, dask_workers),
                      "re-run with --run-id {run_id} to finish")
        summary = settle_run(plan, timings={**timings, "resolve": time.monotonic() - t1})
        written = write_records_task(plan.run_id, plan.ledger, plan.catalog) if records else None
        if written is not None:
            logger.info("wrote %d citation records under %s/records", len(written), plan.ledger)
        summary = close_run(plan, summary, flow_run_id=flow_run_id)
    if written is not None:
        summary = summary.with_records(len(written))
    publish_artifact(summary_markdown(summary), "resolve-summary", f"citeledger run {summary.run_id}", logger)
    publish_table(state_table(summary), "resolve-states", f"references by state, run {summary.run_id}", logger)
    return summary.as_dict()
