"""The nightly flow: refresh the catalog, take the inbox, re-resolve what a grown catalog could
change, re-check notices, rebuild the records of the papers affected.

Inbox: reference files (JSONL, CSV, Parquet, ``.bbl``, ``.bib``) dropped into ``inbox``; a
``.bbl``/``.bib`` file's citing paper is its file name without the extension (percent-escapes
decoded: ``hep-th%2F9901001.bib``). A file moves to ``<processed>/<run_id>/`` only once the run
that read it has finished. Which references are re-resolved: see ``citeledger.nightly``.
A second run with nothing new writes nothing to the ledger.
"""
from __future__ import annotations

import time
from typing import Any

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from citeledger import nightly as steps
from citeledger import pipeline, record_files
from citeledger.inputs import InputLimits
from citeledger.pipeline import DEFAULT_BATCH_SIZE
from flows.refresh import refresh_catalog
from flows.resolve import BATCHES_IN_FLIGHT, resolve_batches, summary_markdown


def nightly_markdown(summary: dict[str, Any], refresh: dict[str, Any]) -> str:
    head = [f"catalog: {refresh['works_before']} -> {refresh['works_after']} works"
            f" from {len(refresh['files'])} source files" + (f"; errors: {refresh['errors']}" if refresh["errors"] else "")]
    if not summary.get("changed"):
        return "\n".join(["# citeledger nightly: nothing to do", "", *head,
                          f"inbox files already read by earlier runs: {len(summary['already_processed'])}"])
    lines = [summary_markdown(summary), "", *head,
             f"inbox files: {len(summary['files'])}; re-resolved: {summary['rerun']}; "
             f"notices changed: {summary['notices_changed']}; records rebuilt: {summary.get('records', 0)}"]
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
        plan = work.plan
        logger.info("run %s: %d inbox files, %d references (%s), %d batches to do%s", plan.run_id,
                    len(work.new_files), plan.references, work.rerun.why, len(plan.pending),
                    ", resuming" if plan.resumed else "")
        try:
            errors = resolve_batches(plan, task_runner, dask_address, dask_workers)
            if errors:
                raise RuntimeError(f"{len(errors)} batch(es) failed; the next nightly run resumes run "
                                   f"{plan.run_id}: {errors[0]}")
            t3 = time.monotonic()
            summary = steps.complete_nightly(work, processed, timings={"refresh": t1 - t0, "plan": t2 - t1,
                                                                        "resolve": t3 - t2})
        except BaseException:
            pipeline.abandon_run(plan)
            raise
        if records and summary["papers"]:
            summary["records"] = len(record_files.write_records(summary["papers"], ledger, catalog))
        logger.info("run %s: %d transitions, %d notices changed, %d records", plan.run_id, summary["transitions"],
                    summary["notices_changed"], summary.get("records", 0))
    summary["refresh"] = refresh
    try:
        from prefect.artifacts import create_markdown_artifact

        create_markdown_artifact(markdown=nightly_markdown(summary, refresh), key="nightly-summary",
                                 description=f"citeledger nightly {summary.get('run_id') or '(idle)'}")
    except Exception as exc:  # noqa: BLE001 - a report, never a reason to fail the night
        logger.warning("could not write the run artifact: %s", exc)
    return summary
