"""The resolve pipeline as plain functions: plan a run, resolve and write one batch, finish a run.

The Prefect flow (``flows/resolve.py``) and the CLI call exactly these; the flow adds batching
over tasks, retries, logging and artifacts.
"""
from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import logging
import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from citeledger.app_errors import DiskFull, InputError
from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog
from citeledger.catalog.generation_pins import pin_generation, pinned_generation, unpin_generation
from citeledger.config import Config, load_config
from citeledger.engine.process_cache import get_catalog, get_fuzzy, get_remote
from citeledger.index import index_upgrade
from citeledger.inputs.dedupe import OnePass, iter_unique
from citeledger.inputs.files import FETCHED_KINDS, PIPE_OPEN_TIMEOUT, InputSource, discard_spools, prepare_inputs
from citeledger.inputs.papers import collecting_titles
from citeledger.inputs.pdf_papers import pdf_service
from citeledger.inputs.rows import InputLimits, InputReject
from citeledger.ledger.ledger_store import LedgerStore, check_ledger_dir, write_ledger_database
from citeledger.ledger.reads import run_changes
from citeledger.options import at_least, check_run_id
from citeledger.run.batch_codec import pack_references, unpack_references
from citeledger.run.notice_check import write_run_notices
from citeledger.run.remote_run import remote_report, search_report, search_step
from citeledger.run.summary import RunSummary
from citeledger.storage import locking
from citeledger.storage.locking import exclusive
from citeledger.storage.places import CatalogDir, LedgerDir, LedgerPlaces
from citeledger.works.row_schema import works_jsonl_row
from papers.model import PaperLimits
from resolvers.model import STATE_ORDER, Reason, Reference
from resolvers.observation import observation_columns
from resolvers.remote.settings import SEARCH_SOURCES
from resolvers.resolution import apply_rule_chain
from resolvers.search_step import SearchStep

DEFAULT_BATCH_SIZE = 1000  # the one default of the CLI, the flows and limits.batch_size (config)


_GC_LOCK = threading.Lock()
_GC_PAUSES = 0


@contextmanager
def gc_paused() -> Iterator[None]:
    """Resolve a batch without the cyclic garbage collector: a batch makes hundreds of thousands
    of small objects that live until it ends (candidates, comparison forms, evidence), and the
    collector rescanning them is a fifth of the time (1M-work catalog: 588 -> 718 references/s in
    one process, same peak memory: reference counting still frees everything, and the few cycles
    wait for the next collection). Batches in threads share the pause; the last one resumes it."""
    global _GC_PAUSES
    with _GC_LOCK:
        _GC_PAUSES += 1
        if _GC_PAUSES == 1:
            gc.disable()
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES -= 1
            if _GC_PAUSES == 0:
                gc.enable()


def resolve_batch_references(references: Sequence[Reference], catalog: Any, remote: Any = None,
                             search: SearchStep | None = None) -> list:
    """The resolution chain over one batch, with this process's fuzzy matcher and the collector
    paused: what ``run_batch``, ``citeledger eval`` and the benchmarks all run."""
    with gc_paused():
        return apply_rule_chain(references, catalog, get_fuzzy(catalog), remote, search)


def new_run_id() -> str:
    return "run-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class BatchJob:
    """One unit of work for a task: a slice of the run's references and where it goes. The
    references are held compressed (``payload``, see ``batch_codec``): a 3M-reference run plans in tens of MB."""

    run_id: str
    part: str
    catalog_dir: str
    ledger_dir: str
    observed_at: datetime
    catalog_fingerprint: str
    payload: bytes
    size: int
    remote: bool = False
    catalog_generation: str | None = None  # the generation planned on; every batch uses it
    search_budget: int | None = None  # the run's search requests (None: the configured default)
    search_skip_files: tuple[str, ...] = ()  # inputs whose references are not searched (nightly re-runs)

    @property
    def references(self) -> tuple[Reference, ...]:
        return unpack_references(self.payload)


@dataclass
class RunPlan:
    run_id: str
    catalog_dir: str
    ledger_dir: str
    inputs: list[dict[str, Any]]
    observed_at: datetime
    catalog_fingerprint: str
    jobs: list[BatchJob]
    pending: list[BatchJob]
    rejects: list[InputReject]
    resumed: bool
    references: int
    started: float = field(default_factory=time.monotonic)
    catalog_seq: int = 0  # the catalog's ingested_seq when planned (see runs.catalog_seq)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why): in folders, no input


def _resumed_options(ledger_dir: LedgerDir, run_id: str) -> dict[str, Any]:
    """The options an interrupted run was started with (read before any lock: only to check
    the inputs; the run itself is picked up under the lock)."""
    path = LedgerPlaces.of(ledger_dir).manifest(run_id)
    try:
        return json.loads(path.read_text()).get("options", {})
    except (OSError, ValueError):
        return {}


def plan_run(inputs: Sequence[str | Path], catalog_dir: CatalogDir, ledger_dir: LedgerDir,
             run_id: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, limits: InputLimits | None = None,
             citing_paper: str | Mapping[str, str] | None = None, remote: bool = False,
             open_timeout: float = PIPE_OPEN_TIMEOUT, search: Mapping[str, Any] | None = None) -> RunPlan:
    """Check and hash the inputs (pipes spooled once), then take the ledger lock, fix the
    batches, and start (or pick up) the run in the ledger. An input that cannot be read at all
    raises ``InputError`` before the lock: no run begins."""
    batch_size = at_least("batch_size", batch_size, 1)
    check_ledger_dir(ledger_dir)
    limits = limits or InputLimits()
    config = load_config()  # once: the limits below, GROBID and arXiv's clients (pdf_service)
    if limits.max_file_bytes is None:  # the configuration's limits.max_input_bytes (clear reject when over)
        limits = dataclasses.replace(limits, max_file_bytes=config.limits.max_input_bytes)
    if limits.papers is None:  # the configuration's [papers] bounds on one paper
        limits = dataclasses.replace(limits, papers=config.papers)
    run_id = check_run_id(new_run_id() if run_id is None else run_id)
    skipped: list[tuple[str, str]] = []  # what folders held that is no input
    sources = prepare_inputs(inputs, LedgerPlaces.of(ledger_dir).spool, limits.max_file_bytes,
                             _resumed_options(ledger_dir, run_id).get("citing_paper") or citing_paper, open_timeout,
                             skipped)
    try:
        locking.acquire_ledger(ledger_dir)  # one writer per ledger; released by finish_run or death
        _UNFINISHED[str(ledger_dir)] = run_id  # what an interrupt tells the user to re-run
        try:
            plan = _plan_locked(sources, catalog_dir, ledger_dir, run_id, batch_size, limits, citing_paper, remote,
                                dict(search or {}), config)
            plan.skipped = skipped
            return plan
        except BaseException as exc:
            locking.release_ledger(ledger_dir)
            _forget_unbegun(exc, catalog_dir, ledger_dir, run_id)
            raise
    finally:
        discard_spools(sources)


def _forget_unbegun(exc: BaseException, catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str) -> None:
    """A plan that failed (not a full disk or an interrupt: the same id finishes those) leaves no
    run to re-run and, if the run never began, no pinned catalog generation."""
    if isinstance(exc, Exception) and not isinstance(exc, DiskFull):
        _UNFINISHED.pop(str(ledger_dir), None)
        if not LedgerStore(ledger_dir).known_run(run_id):
            unpin_generation(catalog_dir, ledger_dir, run_id)  # a run that never began pins nothing


def _plan_locked(sources: Sequence[InputSource], catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str,
                 batch_size: int, limits: InputLimits, citing_paper: str | Mapping[str, str] | None,
                 remote: bool, search: dict[str, Any], config: Config | None = None) -> RunPlan:
    catalog = planned_catalog(catalog_dir, ledger_dir, run_id)
    input_info = [{"path": s.name, "sha256": s.sha256} for s in sources]
    ledger = LedgerStore(ledger_dir)
    if isinstance(citing_paper, Mapping):
        citing_paper = dict(citing_paper)
    manifest, resumed = ledger.begin_run(run_id, input_info, catalog.fingerprint,
                                         {"batch_size": batch_size, "citing_paper": citing_paper, "remote": remote,
                                          "max_raw_chars": limits.max_raw_chars,
                                          "max_file_bytes": limits.max_file_bytes, **_search_option(search),
                                          "papers": dataclasses.asdict(limits.papers) if limits.papers else None})
    if resumed:  # an interrupted run goes on as it started: same rejects, same batches, same rows
        opts = manifest.options
        batch_size = opts.get("batch_size", batch_size)
        citing_paper = opts.get("citing_paper", citing_paper)
        remote = opts.get("remote", remote)
        search = opts.get("search", search)
        limits = dataclasses.replace(limits, max_raw_chars=opts.get("max_raw_chars", limits.max_raw_chars),
                                     max_file_bytes=opts.get("max_file_bytes", limits.max_file_bytes))
        if opts.get("papers"):  # the bounds the run started with, so it reads each paper the same
            limits = dataclasses.replace(limits, papers=PaperLimits(**opts["papers"]))
    made = dict(run_id=run_id, catalog_dir=str(catalog_dir), ledger_dir=str(ledger_dir),
                observed_at=manifest.observed_at, catalog_fingerprint=catalog.fingerprint, remote=remote,
                catalog_generation=catalog.generation_dir.name, search_budget=search.get("budget"),
                search_skip_files=tuple(search.get("skip_files", ())))
    if not remote and any(s.kind in FETCHED_KINDS for s in sources):
        raise InputError(f"{next(s.name for s in sources if s.kind in FETCHED_KINDS)}: arXiv:ID inputs are "
                         "fetched from arXiv, which needs --remote")
    with pdf_service(None, ledger_dir, remote, config), collecting_titles() as titles:  # PDFs to GROBID when set
        jobs, rejects, count = _read_batches(sources, limits, citing_paper, batch_size, made)
    ledger.write_titles(run_id, [{"run_id": run_id, "citing_paper": paper, "title": title, "title_source": source,
                                  "file": file, "observed_at": manifest.observed_at}
                                 for paper, (title, source, file) in sorted(titles.items())])
    ledger.write_rejects(run_id, "input-rejects", [
        {"run_id": run_id, "file": r.file, "line": r.line, "field": r.field, "reason": r.reason,
         "excerpt": r.excerpt} for r in rejects])
    pending = [j for j in jobs if not ledger.batch_done(run_id, j.part)]
    return RunPlan(run_id, str(catalog_dir), str(ledger_dir), input_info, manifest.observed_at,
                   catalog.fingerprint, jobs, pending, rejects, resumed, count,
                   catalog_seq=catalog.ingested_seq)


def _read_batches(sources: Sequence[InputSource], limits: InputLimits, citing_paper: str | Mapping[str, str] | None,
                  batch_size: int, made: dict[str, Any]) -> tuple[list[BatchJob], list[InputReject], int]:
    """The run's batches from one read of its inputs when no reference repeats (the usual case),
    else from ``iter_unique``, which settles the repeats: the same batches either way."""
    once = OnePass(sources, limits, citing_paper)
    if once.usable:
        cut = _cut_batches(once.items(), batch_size, made)
        if not once.repeats:
            return cut
    return _cut_batches(iter_unique(sources, limits, citing_paper), batch_size, made)


def _search_option(search: dict[str, Any]) -> dict[str, Any]:
    """The run's search scope, kept in its manifest only when set (a resumed run keeps it; the
    manifests of runs without one stay as they were)."""
    return {"search": search} if search else {}


def _cut_batches(items: Iterator[Reference | InputReject], batch_size: int, made: dict[str, Any]
                 ) -> tuple[list[BatchJob], list[InputReject], int]:
    """Batches of ``batch_size`` references cut as the rows stream by (only one batch's
    references are ever held as objects); the part name carries a digest of its references."""
    jobs: list[BatchJob] = []
    rejects: list[InputReject] = []
    chunk: list[Reference] = []
    count = 0

    def cut() -> None:
        digest = hashlib.sha256(json.dumps([[r.citing_paper, r.reference_index, r.raw] for r in chunk])
                                .encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
        jobs.append(BatchJob(part=f"part-{len(jobs):06d}-{digest}", payload=pack_references(chunk),
                             size=len(chunk), **made))
        chunk.clear()

    for item in items:
        if isinstance(item, InputReject):
            rejects.append(item)
            continue
        chunk.append(item)
        count += 1
        if len(chunk) == batch_size:
            cut()
    if chunk:
        cut()
    return jobs, rejects, count


# Runs this process planned and has not finished, by ledger: the run id an interrupted command
# names in its "re-run with --run-id" line.
_UNFINISHED: dict[str, str] = {}


def interrupted_run() -> str | None:
    """The run this process was working on when it was stopped, if it did not finish."""
    return next(reversed(_UNFINISHED.values()), None)


def forget_interrupted_runs() -> None:
    """Forget the runs this process was stopped in (it goes on to other work, and an interrupt of
    that should not name them)."""
    _UNFINISHED.clear()


def planned_catalog(catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str) -> ParquetCatalog:
    """The generation a run works on, pinned for it: the one it was first planned on when that
    run is being resumed (later builds keep it, see ``catalog.pinned_generations``), else the live
    one. Pinned before it is checked, so a build that swaps generations meanwhile cannot take it."""
    pinned = pinned_generation(catalog_dir, ledger_dir, run_id)
    if pinned and (Path(catalog_dir) / pinned / "manifest.json").exists():
        bring_up_to_date(catalog_dir, pinned)
        catalog = get_catalog(catalog_dir, pinned)
        pin_generation(catalog_dir, ledger_dir, run_id, pinned)  # now held by this process
        return catalog
    for _ in range(5):
        live = CatalogStore(catalog_dir).current()
        if live is None:
            return get_catalog(catalog_dir)  # raises the one-line "no catalog" error
        pin_generation(catalog_dir, ledger_dir, run_id, live.name)
        if (live / "manifest.json").exists():  # still there once pinned: no build can remove it now
            bring_up_to_date(catalog_dir, live.name)
            return get_catalog(catalog_dir, live.name)
    return get_catalog(catalog_dir)


def bring_up_to_date(catalog_dir: CatalogDir, generation: str) -> None:
    """A generation whose lookup files are of an older format is brought up to date here, once, under
    the catalog's lock and before any worker process opens it (opening a catalog never writes)."""
    gen_dir = Path(catalog_dir) / generation
    if index_upgrade.up_to_date(gen_dir):
        return
    with exclusive(catalog_dir):
        stats = index_upgrade.ensure_index(gen_dir)
    logging.getLogger(__name__).info("catalog generation %s: lookup files brought up to date%s", generation,
                                     f" (index: {stats})" if stats else "")


def run_batch(job: BatchJob) -> dict[str, int]:
    """Resolve one batch and write its observations. Skips a batch already written (resume)."""
    ledger = LedgerStore(job.ledger_dir)
    if ledger.batch_done(job.run_id, job.part):
        return {"skipped": job.size}
    catalog = get_catalog(job.catalog_dir, job.catalog_generation)
    remote = get_remote(job.remote)
    if remote is not None:
        remote.begin_run(job.run_id)  # the run's circuits and remote time (nothing changes for its next batch)
    resolutions = resolve_batch_references(job.references, catalog, remote,
                                           search_step(remote, job.run_id, job.search_budget, job.search_skip_files))
    with gc_paused():  # (thousands of short-lived dicts and strings: no cycles worth a collection of the heap)
        columns = observation_columns(resolutions, job.run_id, job.observed_at, job.catalog_fingerprint)
    fetched = fetched_work_rows(resolutions)
    if fetched:  # kept before the batch is marked done, so a crash cannot lose them
        ledger.write_fetched_works(job.run_id, job.part, fetched)
    ledger.write_observation_columns(job.run_id, job.part, columns)
    counts: dict[str, int] = {}
    for status in columns["status"]:
        counts[status] = counts.get(status, 0) + 1
    return counts


REMOTE_SOURCES = ("arxiv_api", "crossref_api", *SEARCH_SOURCES.values())


def fetched_work_rows(resolutions: Sequence[Any]) -> list[dict[str, Any]]:
    """The works remote services gave the batch's links, as works-JSONL rows for the catalog. A
    work a search found carries its provenance (``fetched_from``: service, query, time), which the
    fetched file keeps for audit and the catalog build ignores."""
    rows: dict[str, dict[str, Any]] = {}
    for r in resolutions:
        work, source = r.verdict.work, r.verdict.resolver_source
        if work is None or source not in REMOTE_SOURCES or work.work_id in rows:
            continue
        row = works_jsonl_row(work)
        search = (r.verdict.evidence or {}).get("search") or []
        if search:
            last = search[-1]
            row["fetched_from"] = {"resolver_source": source, "service": last.get("service"),
                                   "query": last.get("query"), "fetched_at": last.get("fetched_at")}
        rows[work.work_id] = row
    return [rows[k] for k in sorted(rows)]


def abandon_run(plan: RunPlan) -> None:
    """Give up a run without finishing it: release the ledger's writer lock (what was written
    stays; a re-run with the same run id completes it, so its catalog generation stays pinned)."""
    locking.release_ledger(plan.ledger_dir)


def _complete_run(plan: RunPlan, ledger: LedgerStore, records: Callable[[], Any] | None = None) -> None:
    """The finishing steps before the run row, each safe to repeat: a run stopped among them (a
    full disk writing ``ledger.duckdb``, a kill while its records are written) has no run row yet,
    so ``runs`` shows it unfinished and a re-run with its id does them again."""
    # Works the remote resolvers fetched join the catalog for the next run; a crash after this
    # step fetches nothing again on resume (the build adds nothing twice).
    fetched = ledger.fetched_work_files(plan.run_id)
    if fetched:
        CatalogStore(plan.catalog_dir).build(fetched)
    write_ledger_database(plan.ledger_dir, plan.catalog_dir)  # (only when its views changed)
    if records is not None:
        records()


def _views_after_first_row(plan: RunPlan) -> None:
    """``ledger.duckdb`` again after a ledger's first run row, for its runs view. The run is finished
    by then: a failure here (a full disk) is said, and the next run writes the file."""
    try:
        write_ledger_database(plan.ledger_dir, plan.catalog_dir)
    except (DiskFull, OSError) as exc:
        logging.getLogger("citeledger.run").warning("ledger.duckdb keeps no runs view until the next run: %s", exc)


def finish_run(plan: RunPlan, errors: list[str] | None = None, trigger: str = "resolve",
               timings: dict[str, float] | None = None, recheck_notices: list[dict[str, Any]] | None = None,
               records: Callable[[], Any] | None = None, flow_run_id: str | None = None) -> RunSummary:
    """Write the run's notices (and ``recheck_notices``, the changed notices of works linked by
    earlier runs), refresh ``<ledger>/ledger.duckdb``, write the records (``records``, given), and
    only then the run's row (counts from the ledger itself, so a resumed run counts everything):
    the row is what marks a run finished, so it is written last. A finished run given again
    changes nothing but its records (written again when ``records`` is given). ``flow_run_id``:
    the Prefect flow run that ran it (None for a direct run), kept in the row to join the ledger to
    Prefect's runs."""
    ledger = LedgerStore(plan.ledger_dir)
    finished = ledger.run_finished(plan.run_id)
    if not finished:
        with gc_paused():  # (a row per linked work: allocation, no cycles)
            write_run_notices(plan.ledger_dir, plan.catalog_dir, plan.run_id)
        if recheck_notices:
            ledger.write_notices(plan.run_id, recheck_notices, part="recheck")
    summary = _summarise(plan, ledger, errors or [], timings or {})
    if not finished:
        runs = ledger.places.parts("runs", plan.run_id).parent
        first = not (runs.is_dir() and any(runs.rglob("*.parquet")))  # the ledger's first run row
        _complete_run(plan, ledger, records)
        ledger.finish_run(_run_row(plan, summary, trigger, len(recheck_notices or []), flow_run_id))
        if first:  # ledger.duckdb's views are bound when written: its runs view needs a row to read
            _views_after_first_row(plan)
    elif records is not None:
        records()
    unpin_generation(plan.catalog_dir, plan.ledger_dir, plan.run_id)  # its catalog may go now
    locking.release_ledger(plan.ledger_dir)
    if _UNFINISHED.get(str(plan.ledger_dir)) == plan.run_id:
        del _UNFINISHED[str(plan.ledger_dir)]
    return summary


def _summarise(plan: RunPlan, ledger: LedgerStore, errors: list[str], timings: dict[str, float]) -> RunSummary:
    """The run's counts as the ledger holds them (states in deciding order, reasons in enum order)."""
    states = ledger.read_run_counts(plan.run_id) if plan.jobs else {}
    reasons = ledger.read_run_counts(plan.run_id, "reason") if plan.jobs else {}
    known = [r.value for r in Reason]
    seconds = time.monotonic() - plan.started
    changes = run_changes(plan.ledger_dir, plan.run_id) if plan.jobs else (0, 0)
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
