"""One resolve run, whoever runs its batches: plan, resolve the pending batches, finish or abandon.

The resolve flow (``flows/resolve.py``) hands ``resolve_run`` a mapper that submits Prefect tasks;
the CLI's direct path (no Prefect API configured, see ``preflight.use_flow``) hands it ``direct_batches``,
which runs the same ``pipeline.run_batch`` in threads or in a process pool of its own. The planning,
the try/abandon/finish logic and the records are this module's alone, so both paths write the
same ledger bytes for the same inputs.
"""
from __future__ import annotations

import json
import logging
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from datetime import datetime, timezone
from typing import Any, Callable, Sequence, TypeVar, cast

from citeledger import progress
from citeledger.app_errors import RunIncomplete
from citeledger.inputs.rows import InputLimits
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.processes import die_with_parent, stop_pool
from citeledger.records import files as record_files
from citeledger.records.ledger_reads import latest_run_id
from citeledger.run import pipeline, remote_run
from citeledger.run.summary import RunSummary
from citeledger.run.task_runners import choose_task_runner
from citeledger.storage.places import CatalogDir, CatalogPlaces, LedgerDir, LedgerPlaces
from resolvers.errors import TransientError
from resolvers.redaction import redact

# Batches resolved at once by the thread runner: resolution is CPU-bound Python (numpy and DuckDB
# release the GIL for part of it), so a few threads keep both cores busy; more only hold more
# batches in memory at once.
BATCHES_IN_FLIGHT = max(2, os.cpu_count() or 2)
RETRY_DELAYS = (1, 5)  # seconds before the retries of a batch that failed transiently (as the flow's task)

log = logging.getLogger("citeledger")


def plan_logged(inputs: Sequence[str], catalog: CatalogDir, ledger: LedgerDir, logger: Any, run_id: str | None = None,
                remote: bool = False, citing_paper: str | None = None,
                batch_size: int = pipeline.DEFAULT_BATCH_SIZE, max_raw_chars: int = 100_000) -> pipeline.RunPlan:
    """``pipeline.plan_run``, then say what the run holds."""
    plan = pipeline.plan_run(inputs, catalog, ledger, run_id=run_id, batch_size=batch_size,
                             limits=InputLimits(max_raw_chars=max_raw_chars), citing_paper=citing_paper,
                             remote=remote)
    logger.info("run %s: %d references in %d batches (%d to do%s), %d rejected rows",
                plan.run_id, plan.references, len(plan.jobs), len(plan.pending),
                ", resuming" if plan.resumed else "", len(plan.rejects))
    for reject in plan.rejects[:20]:
        logger.warning("rejected %s", reject.message)
    return plan


Finished = TypeVar("Finished")


def complete_run(plan: pipeline.RunPlan, map_batches: Callable[[pipeline.RunPlan], list[str]],
                 timings: dict[str, float], failed_hint: str,
                 finish: Callable[[dict[str, float]], Finished] | None = None, flow_run_id: str | None = None
                 ) -> Finished:
    """Resolve the pending batches, then ``finish(timings)`` (default: ``pipeline.finish_run``);
    on any failure give the run up (the ledger lock is released, what was written stays for a
    resume). The one home of the try/abandon pattern: the CLI, the resolve and nightly flows."""
    t1 = time.monotonic()
    try:
        errors = map_batches(plan) if plan.pending else []
        if errors:
            raise RunIncomplete(f"{len(errors)} batch(es) failed; {failed_hint.format(run_id=plan.run_id)}: "
                                f"{errors[0]}")
        timings = {**timings, "resolve": time.monotonic() - t1}
        if finish is None:
            return cast(Finished, pipeline.finish_run(plan, timings=timings, flow_run_id=flow_run_id))
        return finish(timings)
    except BaseException:
        pipeline.abandon_run(plan)
        raise


def publish_artifact(markdown: str, key: str, description: str, logger: Any) -> None:
    """A flow run's markdown report in the Prefect UI; a report never fails a run."""
    try:
        # Lazy on purpose: this module also serves the CLI's direct path, which never imports Prefect.
        from prefect.artifacts import create_markdown_artifact

        create_markdown_artifact(markdown=markdown, key=key, description=description)
    except Exception as exc:  # noqa: BLE001 - an artifact is a report, never a reason to fail a run
        logger.warning("could not write the run artifact: %s", exc)


def publish_table(rows: list[dict[str, Any]], key: str, description: str, logger: Any) -> None:
    """A flow run's table (a list of rows) in the Prefect UI; a report never fails a run."""
    try:
        from prefect.artifacts import create_table_artifact

        create_table_artifact(table=rows, key=key, description=description)
    except Exception as exc:  # noqa: BLE001 - an artifact is a report, never a reason to fail a run
        logger.warning("could not write the %s table: %s", key, exc)


def record_failure(ledger_dir: LedgerDir, run_id: str, message: str, trigger: str,
                   flow_run_id: str | None = None) -> dict[str, Any]:
    """A failed attempt at ``run_id`` as its row in the ledger's ``runs`` (``finished_at`` null,
    ``errors`` the failure; see ``LedgerStore.record_failure``): from the run's manifest when it
    began (start, inputs, catalog), else the time now. Returns the row."""
    ledger = LedgerStore(ledger_dir)
    manifest = ledger.places.manifest(run_id)
    began = json.loads(manifest.read_text()) if manifest.exists() else {}
    started = began.get("started_at")
    message = redact(message)  # what a failed step said may name a URL with its credentials
    row = {"run_id": run_id, "finished_at": None, "trigger": trigger, "flow_run_id": flow_run_id,
           "started_at": datetime.fromisoformat(started) if started else datetime.now(timezone.utc),
           "inputs": [i["path"] for i in began.get("inputs", [])],
           "catalog_fingerprint": began.get("catalog_fingerprint"), "errors": json.dumps([f"failed: {message}"])}
    ledger.record_failure(row)
    return row


def resolve_run(inputs: Sequence[str], catalog_dir: CatalogDir, ledger_dir: LedgerDir,
                map_batches: Callable[[pipeline.RunPlan], list[str]], logger: Any,
                write_records: Callable[[str, str, str], list] | None = None, flow_run_id: str | None = None,
                **plan_options: Any) -> RunSummary:
    """A whole resolve run: plan, resolve, finish, the records of the papers it touched written
    before the run's row (so ``runs`` shows it finished only once its records are). The ledger and
    the catalog travel as their places (``storage.places``) from here on."""
    catalog, ledger = CatalogPlaces.of(catalog_dir), LedgerPlaces.of(ledger_dir)
    t0 = time.monotonic()
    plan = plan_logged(inputs, catalog, ledger, logger, **plan_options)
    written: list = []

    def records() -> None:
        if write_records is not None:
            written.extend(write_records(plan.run_id, str(ledger), str(catalog)))
            logger.info("wrote %d citation records under %s/records", len(written), ledger)

    summary: RunSummary = complete_run(
        plan, map_batches, {"plan": time.monotonic() - t0}, "re-run with --run-id {run_id} to finish",
        finish=lambda timings: pipeline.finish_run(plan, timings=timings, records=records, flow_run_id=flow_run_id))
    return summary.with_records(len(written)) if write_records is not None else summary


def records_of_run(run_id: str, ledger: str, catalog: str) -> list:
    """The records of every paper the run touched (what the flow's write-records task does)."""
    return write_records(record_files.papers_touched(run_id, ledger, catalog), ledger, catalog)


def build_records(ledger: str, catalog: str, run_id: str | None = None, papers: Sequence[str] | None = None,
                  logger: Any = log) -> list:
    """Records of ``papers``, or of every paper the run ``run_id`` (default: the latest) touched:
    the build-records flow and ``citeledger records`` without a Prefect API."""
    if not papers:
        if run_id:
            record_files.check_run(ledger, run_id)  # a mistyped run id is an error, not "0 records"
        run_id = run_id or latest_run_id(ledger)
        if run_id is None:
            logger.info("the ledger has no run yet: no records to write")
            return []
        papers = record_files.papers_touched(run_id, ledger, catalog)
    logger.info("writing %d citation records", len(papers))
    return write_records(papers, ledger, catalog)


def write_records(papers: Sequence[str], ledger: str, catalog: str) -> list:
    with progress.track(len(papers), "records") as advance:
        return record_files.write_records(papers, ledger, catalog, progress=advance)


def run_batch_retrying(job: pipeline.BatchJob) -> dict[str, int]:
    """``pipeline.run_batch``, retried like the flow's task: only errors that may pass."""
    for delay in (*RETRY_DELAYS, None):
        try:
            return pipeline.run_batch(job)
        except TransientError:
            if delay is None:
                raise
            time.sleep(delay)
    raise AssertionError("unreachable")


def direct_batches(plan: pipeline.RunPlan, task_runner: str = "auto", workers: int = 2) -> list[str]:
    """Run the plan's pending batches without Prefect: threads in this process, or (``processes``,
    or ``auto`` for a large run) a pool of ``process_cache`` processes; returns the failed batches' errors."""
    chosen = choose_task_runner(task_runner, sum(j.size for j in plan.pending),
                                remote=any(j.remote for j in plan.pending))
    log.info("resolving %d batches on %s (direct)", len(plan.pending), chosen)
    if chosen == "processes":
        pool: Any = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=die_with_parent, initargs=(os.getpid(),))
    else:
        pool = ThreadPoolExecutor(max_workers=BATCHES_IN_FLIGHT)
    try:
        with remote_run.remote_stopped_on_interrupt():
            futures = [pool.submit(run_batch_retrying, job) for job in plan.pending]
            return collect(futures, [job.size for job in plan.pending])
    except BaseException:  # Ctrl-C, SIGTERM: no further batch, the workers stopped; complete_run gives the run up
        stop_pool(pool)
        raise
    finally:
        pool.shutdown(wait=True)


def collect(futures: list, sizes: list[int], result: Callable[[Any], Any] = lambda f: f.result(),
            done_order: Callable[[list], Any] = as_completed, logger: Any = None) -> list[str]:
    """Wait for every batch (``sizes``: each one's reference count), advancing the progress
    report; the errors of those that failed. ``result``/``done_order`` adapt Prefect's futures."""
    size_of = {id(f): n for f, n in zip(futures, sizes)}
    errors: list[str] = []
    say = (lambda line: logger.info(line)) if logger is not None else None
    with progress.track(sum(sizes), "references", say) as advance:
        for future in done_order(list(futures)):
            try:
                result(future)
            except Exception as exc:  # noqa: BLE001 - reported in the run row, then raised by the caller
                errors.append(redact(f"{type(exc).__name__}: {exc}"))  # (a URL's credentials hidden)
                continue
            advance(size_of[id(future)])
    return errors
