"""The last step of a resolve run: finish it, or give it up.

A run is finished by three calls, in this order, so that whoever runs it (a flow, the CLI, the
nightly) writes the records of its papers itself between the second and the third:

1. ``settle_run``: the run's notices (and the changed notices of works earlier runs link,
   ``recheck_notices``), its summary (counts from the ledger itself, so a resumed run counts
   everything), the works remote services fetched added to the catalog, ``ledger.duckdb``. Each is
   safe to repeat; a run already finished does none of them but its summary;
2. the records of the papers the run touched (``run_records``), when wanted;
3. ``close_run``: the run's row, written last (the row is what marks a run finished, so a run
   stopped before it shows unfinished and a re-run with its id does the steps again), then its
   catalog generation unpinned and the ledger's writer lock released.

``finish_run`` makes the three calls. ``abandon_run`` gives a run up (what was written stays for a
re-run with its id); ``record_failure`` writes a failed attempt as its row in ``runs``.
"""
from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timezone
from typing import Any, Sequence

from citeledger import progress
from citeledger.app_errors import DiskFull
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.catalog.generation_pins import unpin_generation
from citeledger.ledger.ledger_store import LedgerStore, write_ledger_database
from citeledger.ledger.reads import run_changes
from citeledger.records import record_files
from citeledger.records.ledger_reads import latest_run_id
from citeledger.run.batches import gc_paused
from citeledger.run.notice_check import write_run_notices
from citeledger.run.planning import RunPlan, forget_finished_run
from citeledger.run.remote_run import remote_report, search_report
from citeledger.run.summary import RunSummary
from citeledger.storage import locking
from citeledger.storage.places import CatalogDir, LedgerDir
from resolvers.model import STATE_ORDER, Reason
from resolvers.redaction import redact

log = logging.getLogger("citeledger")


def settle_run(plan: RunPlan, errors: list[str] | None = None, timings: dict[str, float] | None = None,
               recheck_notices: list[dict[str, Any]] | None = None) -> RunSummary:
    """The finishing steps before the records (see the module): the run's notices and
    ``recheck_notices``, its summary, the fetched works into the catalog, ``ledger.duckdb`` (only
    when its views changed). A run already finished: its summary alone."""
    ledger = plan.ledger
    finished = ledger.run_finished(plan.run_id)
    if not finished:
        with gc_paused():  # (a row per linked work: allocation, no cycles)
            write_run_notices(plan.ledger, plan.catalog, plan.run_id)
        if recheck_notices:
            ledger.write_notices(plan.run_id, recheck_notices, part="recheck")
    summary = _summarise(plan, ledger, errors or [], timings or {})
    if not finished:
        # Works the remote resolvers fetched join the catalog for the next run; a crash after this
        # step fetches nothing again on resume (the build adds nothing twice).
        fetched = ledger.fetched_work_files(plan.run_id)
        if fetched:
            CatalogStore(plan.catalog).build(fetched)
        write_ledger_database(plan.ledger, plan.catalog)  # (only when its views changed)
    return summary


def run_records(run_id: str, ledger: LedgerDir, catalog: CatalogDir) -> list:
    """The records of every paper the run touched (with a progress report)."""
    return write_records(record_files.papers_touched(run_id, ledger, catalog), ledger, catalog)


def close_run(plan: RunPlan, summary: RunSummary, trigger: str = "resolve", notices_changed: int = 0,
              flow_run_id: str | None = None) -> RunSummary:
    """The run's row (unless the run was finished before), written last: it marks the run
    finished (``notices_changed``: how many ``recheck_notices`` changed; ``flow_run_id``: the
    Prefect flow run that ran it, None for a direct run, kept to join the ledger to Prefect's
    runs). Then the run's catalog generation may go, and the ledger's writer lock is released."""
    ledger = plan.ledger
    if not ledger.run_finished(plan.run_id):
        runs = ledger.places.parts("runs", plan.run_id).parent
        first = not (runs.is_dir() and any(runs.rglob("*.parquet")))  # the ledger's first run row
        ledger.finish_run(_run_row(plan, summary, trigger, notices_changed, flow_run_id))
        if first:  # ledger.duckdb's views are bound when written: its runs view needs a row to read
            _views_after_first_row(plan)
    unpin_generation(plan.catalog, plan.ledger, plan.run_id)  # its catalog may go now
    locking.release_ledger(plan.ledger)
    forget_finished_run(plan.ledger, plan.run_id)
    return summary


def finish_run(plan: RunPlan, errors: list[str] | None = None, trigger: str = "resolve",
               timings: dict[str, float] | None = None, recheck_notices: list[dict[str, Any]] | None = None,
               records: bool = False, flow_run_id: str | None = None) -> RunSummary:
    """``settle_run``, the records of the run's papers (``records``), ``close_run``. A finished run
    given again changes nothing but its records (written again when ``records``)."""
    summary = settle_run(plan, errors, timings, recheck_notices)
    written = run_records(plan.run_id, plan.ledger, plan.catalog) if records else None
    close_run(plan, summary, trigger, len(recheck_notices or []), flow_run_id)
    return summary.with_records(len(written)) if written is not None else summary


def abandon_run(plan: RunPlan) -> None:
    """Give up a run without finishing it: release the ledger's writer lock (what was written
    stays; a re-run with the same run id completes it, so its catalog generation stays pinned)."""
    locking.release_ledger(plan.ledger)


def _views_after_first_row(plan: RunPlan) -> None:
    """``ledger.duckdb`` again after a ledger's first run row, for its runs view. The run is finished
    by then: a failure here (a full disk) is said, and the next run writes the file."""
    try:
        write_ledger_database(plan.ledger, plan.catalog)
    except (DiskFull, OSError) as exc:
        logging.getLogger("citeledger.run").warning("ledger.duckdb keeps no runs view until the next run: %s", exc)


def _summarise(plan: RunPlan, ledger: LedgerStore, errors: list[str], timings: dict[str, float]) -> RunSummary:
    """The run's counts as the ledger holds them (states in deciding order, reasons in enum order)."""
    states = ledger.read_run_counts(plan.run_id) if plan.jobs else {}
    reasons = ledger.read_run_counts(plan.run_id, "reason") if plan.jobs else {}
    known = [r.value for r in Reason]
    seconds = time.monotonic() - plan.started
    changes = run_changes(plan.ledger, plan.run_id) if plan.jobs else (0, 0)
    resolved_now = sum(j.size for j in plan.pending)
    return RunSummary(
        run_id=plan.run_id, references=plan.references, rejects=len(plan.rejects),
        states={s.value: int(states.get(s.value, 0)) for s in STATE_ORDER},
        reasons={r: int(reasons[r]) for r in [*known, *sorted(set(reasons) - set(known))] if reasons.get(r)},
        seconds=round(seconds, 3), resumed=plan.resumed,
        references_per_second=round(resolved_now / seconds, 1) if seconds > 0 else None,
        transitions=changes[0], reference_changes=changes[1],
        inputs=[i["path"] for i in plan.inputs], timings={k: round(v, 3) for k, v in sorted(timings.items())},
        errors=list(errors), reject_messages=[r.message for r in plan.rejects[:20]],
        search=search_report(plan.run_id, any(j.remote for j in plan.jobs)),
        remote=remote_report(plan.run_id, any(j.remote for j in plan.jobs)),
        skipped=skipped_counts(plan.skipped))


def skipped_counts(skipped: Sequence[tuple[str, str]]) -> dict[str, int]:
    """How many entries of the input folders were left out, by why (``not a paper or a reference
    table (.md)``, ``a citeledger ledger folder``, ...), most first."""
    counts: dict[str, int] = {}
    for _path, why in skipped:
        counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _run_row(plan: RunPlan, summary: RunSummary, trigger: str, notices_changed: int,
             flow_run_id: str | None = None) -> dict[str, Any]:
    """The run's row in ``runs/`` (see ``ledger.RUN_SCHEMA``)."""
    return {"run_id": plan.run_id, "started_at": plan.observed_at, "finished_at": datetime.now(timezone.utc),
            "inputs": summary.inputs, "catalog_fingerprint": plan.catalog_fingerprint,
            "references": plan.references, "rejects": len(plan.rejects),
            "state_counts": json.dumps(summary.states), "seconds": summary.seconds,
            "errors": json.dumps(summary.errors), "trigger": trigger, "catalog_seq": plan.catalog_seq,
            "transitions": summary.transitions, "notices_changed": notices_changed,
            "timings": json.dumps(summary.timings, sort_keys=True), "reason_counts": json.dumps(summary.reasons),
            "reference_changes": summary.reference_changes, "flow_run_id": flow_run_id,
            "remote": json.dumps(summary.remote, sort_keys=True) if summary.remote else None}


def record_failure(ledger_dir: LedgerDir, run_id: str, message: str, trigger: str,
                   flow_run_id: str | None = None) -> dict[str, Any]:
    """A failed attempt at ``run_id`` as its row in the ledger's ``runs`` (``finished_at`` null,
    ``errors`` the failure; see ``LedgerStore.record_failure``): from the run's manifest when it
    began (start, inputs, catalog), else the time now. Returns the row."""
    ledger = LedgerStore.of(ledger_dir)
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


def rebuild_records(ledger: str, catalog: str, run_id: str | None = None, papers: Sequence[str] | None = None,
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


def write_records(papers: Sequence[str], ledger: LedgerDir, catalog: CatalogDir) -> list:
    """The records of ``papers``, with a progress report."""
    with progress.track(len(papers), "records") as advance:
        return record_files.write_records(papers, ledger, catalog, progress=advance)
