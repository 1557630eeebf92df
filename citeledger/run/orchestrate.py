"""A whole resolve run as one call, without Prefect, and the batches run without it.

``resolve_run`` makes the steps of a run in order: ``planning.plan_run``, the pending batches
(``direct_batches``: ``batches.run_batch`` in threads, or in a process pool of its own), then
``finishing`` (``settle_run``, the records of the papers the run touched, ``close_run``): the CLI's
direct path and the library's. The resolve and nightly flows make the same calls themselves, with
their batches and records as Prefect tasks; what they share with this module is
``abandoned_on_failure``, the one home of the try/give-up pattern, and ``check_batches``. Both paths
write the same ledger bytes for the same inputs.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from citeledger import progress
from citeledger.app_errors import RunIncomplete
from citeledger.inputs.rows import InputLimits
from citeledger.processes import die_with_parent, stop_pool
from citeledger.run import remote_run
from citeledger.run.batches import run_batch_retrying
from citeledger.run.finishing import abandon_run, close_run, run_records, settle_run
from citeledger.run.planning import DEFAULT_BATCH_SIZE, RunPlan, log_plan, plan_run
from citeledger.run.summary import RunSummary
from citeledger.run.task_runners import choose_task_runner
from citeledger.storage.places import CatalogDir, LedgerDir
from resolvers.redaction import redact

# Batches resolved at once by the thread runner: resolution is CPU-bound Python (numpy and DuckDB
# release the GIL for part of it), so a few threads keep both cores busy; more only hold more
# batches in memory at once.
BATCHES_IN_FLIGHT = max(2, os.cpu_count() or 2)

log = logging.getLogger("citeledger")


@contextmanager
def abandoned_on_failure(plan: RunPlan) -> Iterator[None]:
    """Inside: a run's batches and its finishing. Any failure (a batch, a step, an interrupt)
    gives the run up: the ledger's writer lock is released, and what was written stays for a
    re-run with the same run id."""
    try:
        yield
    except BaseException:
        abandon_run(plan)
        raise


def check_batches(plan: RunPlan, errors: Sequence[str], failed_hint: str) -> None:
    """The run goes on to its finishing only when every batch was written (``failed_hint``: how
    to finish it, with ``{run_id}``)."""
    if errors:
        raise RunIncomplete(f"{len(errors)} batch(es) failed; {failed_hint.format(run_id=plan.run_id)}: {errors[0]}")


def resolve_run(inputs: Sequence[str], catalog: CatalogDir, ledger: LedgerDir, task_runner: str = "auto",
                workers: int = 2, records: bool = True, logger: Any = log, run_id: str | None = None,
                remote: bool = False, citing_paper: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                max_raw_chars: int = 100_000) -> RunSummary:
    """A whole resolve run: plan, resolve the batches (``direct_batches`` on ``task_runner``),
    finish, the records of the papers it touched written before the run's row (so ``runs`` shows it
    finished only once its records are; ``records`` False: none written)."""
    t0 = time.monotonic()
    plan = log_plan(plan_run(inputs, catalog, ledger, run_id=run_id, batch_size=batch_size,
                             limits=InputLimits(max_raw_chars=max_raw_chars), citing_paper=citing_paper,
                             remote=remote), logger)
    timings = {"plan": time.monotonic() - t0}
    with abandoned_on_failure(plan):
        t1 = time.monotonic()
        check_batches(plan, direct_batches(plan, task_runner, workers) if plan.pending else [],
                      "re-run with --run-id {run_id} to finish")
        summary = settle_run(plan, timings={**timings, "resolve": time.monotonic() - t1})
        written = run_records(plan.run_id, plan.ledger, plan.catalog) if records else None
        if written is not None:
            logger.info("wrote %d citation records under %s/records", len(written), plan.ledger)
        close_run(plan, summary)
    return summary.with_records(len(written)) if written is not None else summary


def direct_batches(plan: RunPlan, task_runner: str = "auto", workers: int = 2) -> list[str]:
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
    except BaseException:  # Ctrl-C, SIGTERM: no further batch, the workers stopped; the run is given up
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
