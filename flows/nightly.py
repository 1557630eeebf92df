"""The nightly flow: refresh the catalog, take the inbox, re-resolve what a grown catalog could
change, re-check notices, rebuild the records of the papers affected.

Inbox: reference files (JSONL, CSV, Parquet, ``.bbl``, ``.bib``) dropped into ``inbox``; a
``.bbl``/``.bib`` file's citing paper is its file name without the extension (percent-escapes
decoded: ``hep-th%2F9901001.bib``). A file moves to ``<processed>/<run_id>/`` only once the run
that read it has finished. Which references are re-resolved: see ``citeledger.nightly.steps``.
A second run with nothing new writes nothing to the ledger.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from citeledger.inputs.rows import InputLimits
from citeledger.nightly import steps
from citeledger.nightly.steps import NightlySummary
from citeledger.records import files as record_files
from citeledger.run import orchestrate
from citeledger.run.orchestrate import BATCHES_IN_FLIGHT
from citeledger.run.pipeline import DEFAULT_BATCH_SIZE
from flows.refresh import refresh_catalog
from flows.resolve import resolve_batches, summary_markdown


def nightly_markdown(summary: NightlySummary) -> str:
    refresh = summary.refresh or {}
    head = [f"catalog: {refresh.get('works_before')} -> {refresh.get('works_after')} works"
            f" from {len(refresh.get('files', []))} source files"
            + (f"; errors: {refresh['errors']}" if refresh.get("errors") else "")]
    if summary.run is None:
        return "\n".join(["# citeledger nightly: nothing to do", "", *head,
                          f"inbox files already read by earlier runs: {len(summary.already_processed)}"])
    lines = [summary_markdown(summary.run), "", *head,
             f"inbox files: {len(summary.files)}; re-resolved: {summary.rerun}; "
             f"notices changed: {summary.notices_changed}; records rebuilt: {summary.run.records or 0}"]
    return "\n".join(lines)


@flow(name="nightly", task_runner=ThreadPoolTaskRunner(max_workers=BATCHES_IN_FLIGHT))
def nightly(inbox: str = "data/inbox", processed: str = "data/processed", catalog: str = "data/catalog",
            ledger: str = "data/ledger", catalog_inbox: str | None = "data/catalog-inbox", remote: bool = False,
            batch_size: int = DEFAULT_BATCH_SIZE, records: bool = True, task_runner: str = "auto",
            dask_address: str | None = None, dask_workers: int = 2) -> dict[str, Any]:
    """One unattended night: refresh, resolve the inbox and what could change, re-check notices."""
    logger = get_run_logger()
    t0 = time.monotonic()
    refresh = refresh_catalog(catalog=catalog, catalog_inbox=catalog_inbox, remote=remote)
    t1 = time.monotonic()
    work = steps.prepare_nightly(inbox, catalog, ledger, remote=remote, batch_size=batch_size,
                                 limits=InputLimits())
    t2 = time.monotonic()
    if work.plan is None:
        summary = steps.idle_nightly(work, ledger, catalog, processed, catalog_changed=bool(refresh["files"]))
        logger.info("nothing to do: no new inbox file, no reference a new work could change, no notice changed")
    else:
        summary = _resolve_night(work, processed, {"refresh": t1 - t0, "plan": t2 - t1}, logger,
                                 lambda plan: resolve_batches(plan, task_runner, dask_address, dask_workers))
        if records and summary.papers:
            summary = summary.with_records(len(record_files.write_records(summary.papers, ledger, catalog)))
        run = summary.run
        assert run is not None
        logger.info("run %s: %d transitions, %d notices changed, %d records", run.run_id, run.transitions,
                    summary.notices_changed, run.records or 0)
    summary = dataclasses.replace(summary, refresh=refresh)
    orchestrate.publish_artifact(nightly_markdown(summary), "nightly-summary",
                                 f"citeledger nightly {summary.run_id or '(idle)'}", logger)
    return summary.as_dict()


def _resolve_night(work: steps.NightlyWork, processed: str, timings: dict[str, float], logger: Any,
                   map_batches: Any) -> steps.NightlySummary:
    """Resolve tonight's batches and complete the night (or give the run up for the next night)."""
    plan = work.plan
    assert plan is not None
    logger.info("run %s: %d inbox files, %d references (%s), %d batches to do%s", plan.run_id,
                len(work.new_files), plan.references, work.rerun.why, len(plan.pending),
                ", resuming" if plan.resumed else "")
    return orchestrate.complete_run(plan, map_batches, timings, "the next nightly run resumes run {run_id}",
                                    finish=lambda t: steps.complete_nightly(work, processed, timings=t))
