"""The nightly flow: take the inbox, refresh the catalog, pick what a grown catalog could change,
resolve it in batches, re-check notices, write the run, rebuild the records of the papers affected.
Each step is a task of the flow run (its graph in the Prefect UI), logging what it counted.

Inbox: reference files (JSONL, CSV, Parquet, ``.bbl``, ``.bib``) dropped into ``inbox``; a
``.bbl``/``.bib`` file's citing paper is its file name without the extension (percent-escapes
decoded: ``hep-th%2F9901001.bib``). A file moves to ``<processed>/<run_id>/`` only once the run
that read it has finished. Which references are re-resolved: see ``citeledger.nightly.steps``.
A second run with nothing new writes nothing to the ledger. The folders must lie under the
configured ``nightly.roots``, side by side (``citeledger.nightly.folders``): a night given others
fails before anything is read or moved.

The flow run is named by the ledger run id (``nightly-<time>-<hex>``, or the id of the interrupted
run it resumes) and the run's row in ``runs`` keeps the flow run's id. A failure (a step, the
timeout ``CITELEDGER_NIGHTLY_TIMEOUT_SECONDS``) is written into ``runs`` by ``record_failed_run``.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, TypeVar

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from citeledger.inputs.rows import InputLimits
from citeledger.nightly import steps
from citeledger.nightly.steps import NightlySummary
from citeledger.records import record_files
from citeledger.run.orchestrate import BATCHES_IN_FLIGHT, abandoned_on_failure, check_batches
from citeledger.run.planning import DEFAULT_BATCH_SIZE
from citeledger.run.summary import RunSummary, state_table, step_table
from flows.flow_options import (
    BatchSize,
    NightlySettings,
    TaskRunner,
    Workers,
    publish_artifact,
    publish_table,
    record_failed_run,
    rename_flow_run,
    this_flow_run,
)
from flows.refresh import refresh_catalog_task
from flows.resolve import resolve_batches, summary_markdown

Result = TypeVar("Result")


@task(name="intake", task_run_name="intake", cache_policy=NO_CACHE)
def intake_task(inbox: str, ledger: str) -> steps.Intake:
    """The inbox's new files, and those a finished run already read (moved, never read again)."""
    intake = steps.take_inbox(inbox, ledger)
    get_run_logger().info("inbox %s: %d new files, %d already read by finished runs", inbox,
                          len(intake.new_files), len(intake.already_processed))
    return intake


@task(name="select-rerun", task_run_name="select-rerun", cache_policy=NO_CACHE)
def select_task(intake: steps.Intake, inbox: str, catalog: str, ledger: str, remote: bool, batch_size: int,
                run_id: str) -> steps.NightlyWork:
    """Tonight's run: an interrupted nightly run resumed, else the new files plus the references a
    grown catalog could change (``steps.select_nightly``), planned into batches."""
    logger = get_run_logger()
    work = steps.resume_nightly(intake, inbox, catalog, ledger, batch_size, InputLimits(), remote)
    if work is None:
        work = steps.select_nightly(intake, catalog, ledger, remote, batch_size, InputLimits(), run_id)
    logger.info("re-resolve: %s; notices pending: %d", dict(work.rerun.why) or "nothing", work.pending_notices)
    if work.plan is None:
        logger.info("nothing to do: no new inbox file, no reference a new work could change, no notice changed")
    else:
        plan = work.plan
        logger.info("run %s: %d inbox files, %d references in %d batches (%d to do%s), %d rejected rows",
                    plan.run_id, len(work.new_files), plan.references, len(plan.jobs), len(plan.pending),
                    ", resuming" if plan.resumed else "", len(plan.rejects))
    return work


@task(name="notices", task_run_name="notices", cache_policy=NO_CACHE)
def notices_task(work: steps.NightlyWork) -> list[dict[str, Any]]:
    """The changed notices of works earlier runs link or cite."""
    notices = steps.nightly_notices(work)
    get_run_logger().info("%d notices of earlier runs' works changed", len(notices))
    return notices


@task(name="settle-run", task_run_name="settle-run", cache_policy=NO_CACHE)
def settle_task(work: steps.NightlyWork, notices: list[dict[str, Any]], timings: dict[str, float]) -> RunSummary:
    """The run's notices and the changed ones, its counts, fetched works into the catalog,
    ``ledger.duckdb``: all that comes before the records and the run row."""
    return steps.settle_nightly(work, notices, timings)


@task(name="write-run", task_run_name="write-run", cache_policy=NO_CACHE)
def finish_task(work: steps.NightlyWork, processed: str, notices: list[dict[str, Any]], settled: RunSummary,
                papers: list[str], records: int | None, flow_run_id: str | None) -> NightlySummary:
    """After the records: the run row (with this flow run's id), then the inbox files moved to
    ``processed``."""
    summary = steps.close_nightly(work, processed, notices, settled, papers, records, flow_run_id)
    run = summary.run
    assert run is not None
    get_run_logger().info("run %s: %d references, %d transitions, %s; %d inbox files moved", run.run_id,
                          run.references, run.transitions,
                          ", ".join(f"{s} {n}" for s, n in run.states.items() if n) or "no references",
                          len(summary.files))
    return summary


@task(name="records", task_run_name="records", cache_policy=NO_CACHE)
def records_task(papers: list[str], ledger: str, catalog: str) -> int:
    """The citation records of the papers whose references or notices changed."""
    written = len(record_files.write_records(papers, ledger, catalog))
    get_run_logger().info("%d citation records written under %s/records", written, ledger)
    return written


class StepClock:
    """Seconds and counts per step, in the order the steps ran (the step-timing table)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, str] = {}

    def run(self, step: str, call: Callable[..., Result], *args: Any) -> Result:
        t0 = time.monotonic()
        try:
            return call(*args)
        finally:
            self.seconds[step] = self.seconds.get(step, 0.0) + time.monotonic() - t0


def nightly_run_name() -> str:
    """The flow run's name: a new nightly run id (renamed to the resumed run's id when it resumes one)."""
    return steps.new_nightly_run_id()


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


@flow(name="nightly", flow_run_name=nightly_run_name, on_failure=[record_failed_run],
      timeout_seconds=NightlySettings().timeout_seconds,
      task_runner=ThreadPoolTaskRunner(max_workers=BATCHES_IN_FLIGHT))
def nightly(inbox: str = "data/inbox", processed: str = "data/processed", catalog: str = "data/catalog",
            ledger: str = "data/ledger", catalog_inbox: str | None = "data/catalog-inbox", remote: bool = False,
            batch_size: BatchSize = DEFAULT_BATCH_SIZE, records: bool = True, task_runner: TaskRunner = "auto",
            dask_address: str | None = None, dask_workers: Workers = 2, site: str | None = None) -> dict[str, Any]:
    """One unattended night: take the inbox, refresh the catalog, re-resolve what could change, re-check notices.

    Args:
        inbox: Folder of new reference files (JSONL, CSV, Parquet, .bbl, .bib, PDF, paper folders).
        processed: Where inbox files go, under the run id, once their run has finished.
        catalog: The catalog folder.
        ledger: The ledger folder: observations, notices, the run's row in `runs`.
        catalog_inbox: Folder of new catalog source files built into the catalog first (None: none).
        remote: Harvest and resolve with the configured remote services (off: no network).
        batch_size: References per batch task.
        records: Rebuild the citation records of the papers whose references or notices changed.
        task_runner: Where batches run - auto (processes for 20,000 references or more on 2+ cores, else
            threads), threads, processes (a pool of dask_workers) or dask.
        dask_address: Scheduler of an existing Dask cluster (task_runner dask); default a local cluster.
        dask_workers: Processes of the process pool or of a local Dask cluster.
        site: A folder to bring the ledger's static site up to date in, last (only the pages that
            changed are made again; None: no site).
    """
    logger = get_run_logger()
    run_id, flow_run_id = this_flow_run()
    steps.nightly_folders(inbox, processed, catalog, ledger, catalog_inbox, site)  # before anything is read or moved
    clock = StepClock()
    intake = clock.run("intake", intake_task, inbox, ledger)
    clock.counts["intake"] = "{new_files} new files, {already_processed} already read".format(**intake.counts())
    refresh = clock.run("refresh-catalog", refresh_catalog_task, catalog, catalog_inbox, remote)
    clock.counts["refresh-catalog"] = f"{refresh['works_before']} -> {refresh['works_after']} works"
    work = clock.run("select-rerun", select_task, intake, inbox, catalog, ledger, remote, batch_size, run_id)
    if work.plan is None:
        clock.counts["select-rerun"] = "nothing to do"
        summary = steps.idle_nightly(work, ledger, catalog, processed, catalog_changed=bool(refresh["files"]))
    else:
        rename_flow_run(work.plan.run_id)  # a resumed run keeps its id
        clock.counts["select-rerun"] = f"{work.plan.references} references, {len(work.plan.pending)} batches to do"
        with abandoned_on_failure(work.plan):  # a failed step gives the run up for the next night
            errors = clock.run("resolve-batches", resolve_batches, work.plan, task_runner, dask_address, dask_workers)
            check_batches(work.plan, errors, "the next nightly run resumes run {run_id}")
            summary = _finish_night(work, processed, clock, flow_run_id, ledger, catalog, records)
    summary = dataclasses.replace(summary, refresh=refresh)
    if site:
        clock.counts["site"] = clock.run("site", site_task, site, ledger, catalog)
    _publish(summary, clock, logger)
    return summary.as_dict()


@task(name="site", task_run_name="site", cache_policy=NO_CACHE)
def site_task(out: str, ledger: str, catalog: str) -> str:
    """The ledger's static site in ``out``, made again where the night changed it (``citeledger site``)."""
    from citeledger.site.site_files import build_site

    report = build_site(out, ledger, catalog)
    said = (f"{report.papers} papers, {report.written} files written, {report.kept} unchanged"
            + (f", {len(report.left_out)} record files left out" if report.left_out else ""))
    get_run_logger().info("site %s: %s", out, said)
    return said


def _finish_night(work: steps.NightlyWork, processed: str, clock: StepClock, flow_run_id: str | None,
                  ledger: str, catalog: str, records: bool) -> NightlySummary:
    """After tonight's batches: the notices, the run settled, the records of the papers the night
    changed (a task of their own), then the run row and the inbox files (``write-run``)."""
    plan = work.plan
    assert plan is not None
    size = plan.jobs[0].size if plan.jobs else 0
    clock.counts["resolve-batches"] = f"{len(plan.pending)} batches of up to {size} references"
    notices = clock.run("notices", notices_task, work)
    clock.counts["notices"] = f"{len(notices)} changed"
    settled = clock.run("write-run", settle_task, work, notices, dict(clock.seconds))
    papers = steps.changed_papers(work, notices)
    written = None if not records else 0
    if records and papers:
        written = clock.run("records", records_task, papers, ledger, catalog)
        clock.counts["records"] = f"{written} records"
    summary = clock.run("write-run", finish_task, work, processed, notices, settled, papers, written, flow_run_id)
    clock.counts["write-run"] = f"{summary.run.transitions if summary.run else 0} transitions"
    return summary


def _publish(summary: NightlySummary, clock: StepClock, logger: Any) -> None:
    """The night's report (markdown), its references by state and its step timings (tables)."""
    name = summary.run_id or "(idle)"
    publish_artifact(nightly_markdown(summary), "nightly-summary", f"citeledger nightly {name}", logger)
    if summary.run is not None:
        publish_table(state_table(summary.run), "nightly-states", f"references by state, run {name}", logger)
    publish_table(step_table(clock.seconds, clock.counts), "nightly-steps", f"seconds per step, nightly {name}",
                  logger)
