"""The resolve pipeline as plain functions: plan a run, resolve and write one batch, finish a run.

The Prefect flow (``flows/resolve.py``) and the CLI call exactly these; the flow adds batching
over tasks, retries, logging and artifacts.
"""
from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import secrets
import threading
import time
import zlib
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from resolvers.errors import DiskFull
from resolvers.model import Reference, Status, STATE_ORDER
from resolvers.observation import observation_row
from resolvers.resolution import resolve_batch

from . import locking
from .input_files import PIPE_OPEN_TIMEOUT, InputSource, discard_spools, prepare_inputs
from .inputs import InputLimits, InputReject, read_references
from .catalog import ParquetCatalog
from .ledger import LedgerStore
from .options import check_run_id

DEFAULT_BATCH_SIZE = 5000


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


def resolve_references(references: Sequence[Reference], catalog: Any, remote: Any = None) -> list:
    """The resolution chain over one batch, with this process's fuzzy matcher and the collector
    paused: what ``run_batch``, ``citeledger eval`` and the benchmarks all run."""
    with gc_paused():
        return resolve_batch(references, catalog, get_fuzzy(catalog), remote)


def new_run_id() -> str:
    return "run-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class BatchJob:
    """One unit of work for a task: a slice of the run's references and where it goes. The
    references are held compressed (``payload``): a 3M-reference run plans in tens of MB."""

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

    @property
    def references(self) -> tuple[Reference, ...]:
        rows = json.loads(zlib.decompress(self.payload).decode("utf-8", "surrogatepass"))
        return tuple(Reference(*row) for row in rows)


def pack_references(references: Sequence[Reference]) -> bytes:
    rows = [[r.citing_paper, r.reference_index, r.raw, r.source, r.file, r.line] for r in references]
    return zlib.compress(json.dumps(rows, ensure_ascii=False).encode("utf-8", "surrogatepass"), 1)


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


def read_inputs(paths: Sequence[str | Path], limits: InputLimits,
                citing_paper: str | Mapping[str, str] | None = None) -> tuple[list[Reference], list[InputReject]]:
    """Every row of every input as a reference or a reject (``iter_unique``), as two lists."""
    sources = prepare_inputs(paths, None, limits.max_file_bytes, citing_paper)
    references: list[Reference] = []
    rejects: list[InputReject] = []
    try:
        for item in iter_unique(sources, limits, citing_paper):
            (rejects if isinstance(item, InputReject) else references).append(item)
    finally:
        discard_spools(sources)
    return references, rejects


def _read_all(sources: Sequence[InputSource], limits: InputLimits,
              citing_paper: str | Mapping[str, str] | None) -> Iterator[Reference | InputReject]:
    for source in sources:
        paper = citing_paper.get(source.name) if isinstance(citing_paper, Mapping) else citing_paper
        yield from read_references(source.path, limits, paper, source.name, source.kind)


@dataclass(frozen=True)
class _Settled:
    keep: tuple[str, int] | None  # the location whose row stays, None when the duplicates conflict
    reason: str


def _duplicates(sources: Sequence[InputSource], limits: InputLimits,
                citing_paper: str | Mapping[str, str] | None) -> dict[tuple[str, int], _Settled]:
    """How each (citing_paper, reference_index) seen more than once is settled. One pass keeps
    8 bytes a row (a hash of the key), a second one looks only at keys whose hash repeats."""
    import numpy as np

    hashes = array("q")
    for item in _read_all(sources, limits, citing_paper):
        if isinstance(item, Reference):
            hashes.append(hash((item.citing_paper, item.reference_index)))
    if len(hashes) < 2:
        return {}
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    suspects = set(np.unique(ordered[1:][ordered[1:] == ordered[:-1]]).tolist())
    del hashes, ordered
    if not suspects:
        return {}
    seen: dict[tuple[str, int], list[tuple[str, int, str]]] = {}
    for item in _read_all(sources, limits, citing_paper):
        if isinstance(item, Reference) and hash(key := (item.citing_paper, item.reference_index)) in suspects:
            content = hashlib.sha256(json.dumps([item.raw, item.source]).encode("utf-8", "surrogatepass"))
            seen.setdefault(key, []).append((str(item.file), int(item.line or 0), content.hexdigest()))
    return {key: _settle(key, rows) for key, rows in seen.items() if len(rows) > 1}


def _settle(key: tuple[str, int], rows: list[tuple[str, int, str]]) -> _Settled:
    """Identical rows keep one (the first by file name and line, whatever the order of the
    inputs); rows that disagree are all rejected, naming every place: nothing silently wins."""
    rows = sorted(rows)
    places = [f"{file}:{line}" for file, line, _ in rows]
    where = ", ".join(places[:10]) + (f" and {len(places) - 10} more" if len(places) > 10 else "")
    if len({content for _, _, content in rows}) == 1:
        return _Settled((rows[0][0], rows[0][1]), f"duplicate reference {key}: the same row is kept from {places[0]}")
    return _Settled(None, f"conflicting duplicates of reference {key} at {where}: none is kept")


def iter_unique(sources: Sequence[InputSource], limits: InputLimits,
                citing_paper: str | Mapping[str, str] | None = None) -> Iterator[Reference | InputReject]:
    """Every row of every input, streamed, as a reference or a reject; a reference whose
    (citing_paper, reference_index) repeats is settled the same whatever the order of the inputs."""
    settled = _duplicates(sources, limits, citing_paper)
    for item in _read_all(sources, limits, citing_paper):
        if settled and isinstance(item, Reference):
            rule = settled.get((item.citing_paper, item.reference_index))
            if rule is not None and rule.keep != (str(item.file), int(item.line or 0)):
                yield InputReject(str(item.file), item.line, "reference_index", rule.reason, item.raw[:200])
                continue
        yield item


def _resumed_options(ledger_dir: str | Path, run_id: str) -> dict[str, Any]:
    """The options an interrupted run was started with (read before any lock: only to check
    the inputs; the run itself is picked up under the lock)."""
    path = Path(ledger_dir) / "_runs" / run_id / "manifest.json"
    try:
        return json.loads(path.read_text()).get("options", {})
    except (OSError, ValueError):
        return {}


def plan_run(inputs: Sequence[str | Path], catalog_dir: str | Path, ledger_dir: str | Path,
             run_id: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, limits: InputLimits | None = None,
             citing_paper: str | Mapping[str, str] | None = None, remote: bool = False,
             open_timeout: float = PIPE_OPEN_TIMEOUT) -> RunPlan:
    """Check and hash the inputs (pipes spooled once), then take the ledger lock, fix the
    batches, and start (or pick up) the run in the ledger. An input that cannot be read at all
    raises ``InputError`` before the lock: no run begins."""
    from .options import at_least
    from .ledger import check_ledger_dir

    batch_size = at_least("batch_size", batch_size, 1)
    check_ledger_dir(ledger_dir)
    limits = limits or InputLimits()
    if limits.max_file_bytes is None:  # the configuration's limits.max_input_bytes (clear reject when over)
        from .config import load_config

        limits = dataclasses.replace(limits, max_file_bytes=load_config().limits.max_input_bytes)
    run_id = check_run_id(new_run_id() if run_id is None else run_id)
    sources = prepare_inputs(inputs, Path(ledger_dir) / ".input-spool", limits.max_file_bytes,
                             _resumed_options(ledger_dir, run_id).get("citing_paper") or citing_paper, open_timeout)
    try:
        locking.acquire_ledger(ledger_dir)  # one writer per ledger; released by finish_run or death
        _UNFINISHED[str(ledger_dir)] = run_id  # what an interrupt tells the user to re-run
        try:
            return _plan_locked(sources, catalog_dir, ledger_dir, run_id, batch_size, limits, citing_paper, remote)
        except BaseException as exc:
            locking.release_ledger(ledger_dir)
            _forget_unbegun(exc, catalog_dir, ledger_dir, run_id)
            raise
    finally:
        discard_spools(sources)


def _forget_unbegun(exc: BaseException, catalog_dir: str | Path, ledger_dir: str | Path, run_id: str) -> None:
    """A plan that failed (not a full disk or an interrupt: the same id finishes those) leaves no
    run to re-run and, if the run never began, no pinned catalog generation."""
    if isinstance(exc, Exception) and not isinstance(exc, DiskFull):
        _UNFINISHED.pop(str(ledger_dir), None)
        if not LedgerStore(ledger_dir).known_run(run_id):
            from .catalog import unpin_generation

            unpin_generation(catalog_dir, ledger_dir, run_id)  # a run that never began pins nothing


def _plan_locked(sources: Sequence[InputSource], catalog_dir: str | Path, ledger_dir: str | Path, run_id: str,
                 batch_size: int, limits: InputLimits, citing_paper: str | Mapping[str, str] | None,
                 remote: bool) -> RunPlan:
    from .blocking import ensure_index

    catalog = planned_catalog(catalog_dir, ledger_dir, run_id)
    ensure_index(catalog.generation_dir)  # once here, not in every worker process
    input_info = [{"path": s.name, "sha256": s.sha256} for s in sources]
    ledger = LedgerStore(ledger_dir)
    if isinstance(citing_paper, Mapping):
        citing_paper = dict(citing_paper)
    manifest, resumed = ledger.begin_run(run_id, input_info, catalog.fingerprint,
                                         {"batch_size": batch_size, "citing_paper": citing_paper, "remote": remote,
                                          "max_raw_chars": limits.max_raw_chars,
                                          "max_file_bytes": limits.max_file_bytes})
    if resumed:  # an interrupted run goes on as it started: same rejects, same batches, same rows
        opts = manifest.options
        batch_size = opts.get("batch_size", batch_size)
        citing_paper = opts.get("citing_paper", citing_paper)
        remote = opts.get("remote", remote)
        limits = dataclasses.replace(limits, max_raw_chars=opts.get("max_raw_chars", limits.max_raw_chars),
                                     max_file_bytes=opts.get("max_file_bytes", limits.max_file_bytes))
    made = dict(run_id=run_id, catalog_dir=str(catalog_dir), ledger_dir=str(ledger_dir),
                observed_at=manifest.observed_at, catalog_fingerprint=catalog.fingerprint, remote=remote,
                catalog_generation=catalog.generation_dir.name)
    jobs, rejects, count = _cut_batches(iter_unique(sources, limits, citing_paper), batch_size, made)
    ledger.write_rejects(run_id, "input-rejects", [
        {"run_id": run_id, "file": r.file, "line": r.line, "field": r.field, "reason": r.reason,
         "excerpt": r.excerpt} for r in rejects])
    pending = [j for j in jobs if not ledger.batch_done(run_id, j.part)]
    return RunPlan(run_id, str(catalog_dir), str(ledger_dir), input_info, manifest.observed_at,
                   catalog.fingerprint, jobs, pending, rejects, resumed, count,
                   catalog_seq=catalog.ingested_seq)


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


def planned_catalog(catalog_dir: str | Path, ledger_dir: str | Path, run_id: str) -> ParquetCatalog:
    """The generation a run works on, pinned for it: the one it was first planned on when that
    run is being resumed (later builds keep it, see ``catalog.pinned_generations``), else the live
    one. Pinned before it is checked, so a build that swaps generations meanwhile cannot take it."""
    from .catalog import CatalogStore, pin_generation, pinned_generation

    pinned = pinned_generation(catalog_dir, ledger_dir, run_id)
    if pinned and (Path(catalog_dir) / pinned / "manifest.json").exists():
        catalog = get_catalog(catalog_dir, pinned)
        pin_generation(catalog_dir, ledger_dir, run_id, pinned)  # now held by this process
        return catalog
    for _ in range(5):
        live = CatalogStore(catalog_dir).current()
        if live is None:
            return get_catalog(catalog_dir)  # raises the one-line "no catalog" error
        pin_generation(catalog_dir, ledger_dir, run_id, live.name)
        if (live / "manifest.json").exists():  # still there once pinned: no build can remove it now
            return get_catalog(catalog_dir, live.name)
    return get_catalog(catalog_dir)


# One catalog (and fuzzy index) per process, shared by the tasks of that process.
_CACHE: dict[tuple[str, str], Any] = {}
_CACHE_LOCK = threading.Lock()


def get_catalog(catalog_dir: str | Path, generation: str | None = None) -> ParquetCatalog:
    """The catalog's live generation (or the one named), opened once per process."""
    root = str(Path(catalog_dir).resolve())
    with _CACHE_LOCK:
        if generation is None:
            current = ParquetCatalog.generation_of(catalog_dir)
            generation = current.name if current is not None else None
        key = (root, f"catalog:{generation}")
        if key not in _CACHE:
            for old in [k for k in _CACHE if k[0] == root and k[1].startswith(("catalog:", "fuzzy:"))]:
                del _CACHE[old]  # one generation per catalog held in memory
            _CACHE[key] = ParquetCatalog(catalog_dir, generation)
        return _CACHE[key]


def get_fuzzy(catalog: ParquetCatalog) -> Any:
    """The fuzzy matcher over this catalog generation's blocking index, loaded once per process."""
    key = (str(catalog.store.dir.resolve()), f"fuzzy:{catalog.generation_dir.name}")
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = _load_fuzzy(catalog)
        return _CACHE[key]


def _load_fuzzy(catalog: ParquetCatalog) -> Any:
    from resolvers.fuzzy import FuzzyResolver

    from .blocking import ParquetRetriever

    return FuzzyResolver(ParquetRetriever(catalog.generation_dir))


def get_remote(enabled: bool) -> Any:
    """The remote resolvers of the configuration, one per process so rate limits are shared.
    ``--remote`` with none configured turns on arXiv and Crossref."""
    if not enabled:
        return None
    from resolvers.remote import build_remote

    from .config import load_config

    with _CACHE_LOCK:
        if ("remote", "remote") not in _CACHE:
            config = load_config()
            if not config.remote:
                config = dataclasses.replace(config, remote=frozenset({"arxiv", "crossref"}))
            _CACHE[("remote", "remote")] = build_remote(config.remote_settings())
        return _CACHE[("remote", "remote")]


def remote_work_row(work: Any) -> dict[str, Any]:
    """A remotely fetched work as a works-JSONL row, so the catalog keeps it (fetched once)."""
    journal_dois = [d for d in (work.doi, *work.alt_dois) if d and not d.startswith("10.48550/")]
    return {"doi": journal_dois[0] if journal_dois else (work.doi if not work.arxiv_id else None),
            "arxiv_id": work.arxiv_id, "title": work.title, "authors": list(work.authors), "year": work.year,
            "venue": work.venue, "volume": work.volume, "first_page": work.first_page, "pmid": work.pmid,
            "type": work.type, "withdrawn": work.withdrawn}


def run_batch(job: BatchJob) -> dict[str, int]:
    """Resolve one batch and write its observations. Skips a batch already written (resume)."""
    ledger = LedgerStore(job.ledger_dir)
    if ledger.batch_done(job.run_id, job.part):
        return {"skipped": job.size}
    catalog = get_catalog(job.catalog_dir, job.catalog_generation)
    resolutions = resolve_references(job.references, catalog, get_remote(job.remote))
    rows = [observation_row(r, job.run_id, job.observed_at, job.catalog_fingerprint) for r in resolutions]
    fetched = {r.verdict.work.work_id: r.verdict.work for r in resolutions
               if r.verdict.work is not None and r.verdict.resolver_source in ("arxiv_api", "crossref_api")}
    if fetched:  # kept before the batch is marked done, so a crash cannot lose them
        ledger.write_fetched_works(job.run_id, job.part, [remote_work_row(w) for _, w in sorted(fetched.items())])
    ledger.write_observations(job.run_id, job.part, rows)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts


def get_notice_index(catalog: ParquetCatalog) -> Any:
    """The catalog's Retraction Watch events by DOI, loaded once per process."""
    from resolvers.notices import NoticeEvent, NoticeIndex

    key = (str(catalog.generation_dir), "notices")
    with _CACHE_LOCK:
        if key not in _CACHE:
            index = NoticeIndex()
            index.add([NoticeEvent.from_dict(row) for row in catalog.notice_events()])
            for source in catalog.manifest.get("notice_sources", {}):
                index.add([], source)
            _CACHE[key] = index
        return _CACHE[key]


def work_notice(work: dict[str, Any], index: Any, checked_at: str | None) -> Any:
    """The standing notice of one catalog work: Retraction Watch events for any of its DOIs, the
    Crossref update relations its record carries, and arXiv's withdrawn flag."""
    from resolvers import notice_sources, notices

    extra_events: list[Any] = []
    extra_sources: list[str] = []
    work_sources = set(work.get("sources") or ())
    if "crossref" in work_sources:
        extra_sources += [notices.SOURCE_CROSSREF_PUBLISHER, notices.SOURCE_CROSSREF_RW]
        if work.get("relations") and work.get("doi"):
            extra_events += notice_sources.events_from_crossref_relations(work["doi"], json.loads(work["relations"]))
    if work.get("arxiv_id"):
        extra_sources.append(notices.SOURCE_ARXIV)
        if work.get("withdrawn"):
            extra_events += notice_sources.events_from_arxiv_withdrawal(work["arxiv_id"])
    other_dois = [d for d in (work.get("alt_dois") or ()) if d != work.get("doi")]
    for doi in other_dois:  # a preprint's journal DOI (or the reverse) names the same work
        extra_events += [notices.rekey(e, work["doi"]) for e in index.events_for(doi)]
    return index.notice_for(work.get("doi"), work.get("arxiv_id"), checked_at=checked_at,
                            extra_events=extra_events, extra_sources=extra_sources)


def write_run_notices(plan: RunPlan) -> int:
    """A notice for every work this run links to, checked against the catalog's sources."""
    from resolvers.notices import notice_row

    ledger = LedgerStore(plan.ledger_dir)
    catalog = get_catalog(plan.catalog_dir)
    index = get_notice_index(catalog)
    checked_at = catalog.manifest.get("built_at")
    works = catalog.work_rows(ledger.linked_work_ids(plan.run_id))
    rows = []
    for work_id, work in sorted(works.items()):
        row = notice_row(work_id, work.get("doi"), work_notice(work, index, checked_at))
        row["run_id"] = plan.run_id
        row["checked_at"] = datetime.fromisoformat(row["checked_at"]) if row["checked_at"] else None
        rows.append(row)
    ledger.write_notices(plan.run_id, rows)
    return len(rows)


def abandon_run(plan: RunPlan) -> None:
    """Give up a run without finishing it: release the ledger's writer lock (what was written
    stays; a re-run with the same run id completes it, so its catalog generation stays pinned)."""
    locking.release_ledger(plan.ledger_dir)


def _complete_run(plan: RunPlan, ledger: LedgerStore) -> None:
    """The finishing steps after the run row, each safe to repeat, then the mark that they all
    happened: a run stopped among them (a full disk writing ``ledger.duckdb``) does them again
    when resumed, instead of reporting a finished run that never wrote its database."""
    from .catalog import CatalogStore

    # Works the remote resolvers fetched join the catalog for the next run. After the run row:
    from .ledger import write_ledger_database
    # a crash here leaves a finished run (fetched again on resume; the build adds nothing twice),
    # never one that cannot be resumed because its catalog changed under it.
    fetched = ledger.fetched_work_files(plan.run_id)
    if fetched:
        CatalogStore(plan.catalog_dir).build(fetched)
    write_ledger_database(plan.ledger_dir, plan.catalog_dir)
    ledger.mark_complete(plan.run_id)


def finish_run(plan: RunPlan, errors: list[str] | None = None, trigger: str = "resolve",
               timings: dict[str, float] | None = None, recheck_notices: list[dict[str, Any]] | None = None
               ) -> dict[str, Any]:
    """Write the run's notices (and ``recheck_notices``, the changed notices of works linked by
    earlier runs) and its row (counts from the ledger itself, so a resumed run counts
    everything), then refresh ``<ledger>/ledger.duckdb``."""
    from .catalog import unpin_generation
    from .ledger import run_transitions

    ledger = LedgerStore(plan.ledger_dir)
    finished = ledger.run_finished(plan.run_id)
    if not finished:  # a finished run given again changes nothing
        write_run_notices(plan)
        if recheck_notices:
            ledger.write_notices(plan.run_id, recheck_notices, part="recheck")
    counts = ledger.read_run_counts(plan.run_id) if plan.jobs else {}
    ordered = {s.value: int(counts.get(s.value, 0)) for s in STATE_ORDER}
    seconds = time.monotonic() - plan.started
    transitions = run_transitions(plan.ledger_dir, plan.run_id) if plan.jobs else 0
    row = {"run_id": plan.run_id, "started_at": plan.observed_at, "finished_at": datetime.now(timezone.utc),
           "inputs": [i["path"] for i in plan.inputs], "catalog_fingerprint": plan.catalog_fingerprint,
           "references": plan.references, "rejects": len(plan.rejects),
           "state_counts": json.dumps(ordered), "seconds": round(seconds, 3),
           "errors": json.dumps(errors or []), "trigger": trigger, "catalog_seq": plan.catalog_seq,
           "transitions": transitions, "notices_changed": len(recheck_notices or []),
           "timings": json.dumps({k: round(v, 3) for k, v in (timings or {}).items()}, sort_keys=True)}
    if not finished:
        ledger.finish_run(row)
    if not ledger.run_complete(plan.run_id):
        _complete_run(plan, ledger)
    unpin_generation(plan.catalog_dir, plan.ledger_dir, plan.run_id)  # its catalog may go now
    locking.release_ledger(plan.ledger_dir)
    if _UNFINISHED.get(str(plan.ledger_dir)) == plan.run_id:
        del _UNFINISHED[str(plan.ledger_dir)]
    resolved_now = sum(j.size for j in plan.pending)
    return {"run_id": plan.run_id, "references": plan.references, "rejects": len(plan.rejects),
            "states": ordered, "seconds": round(seconds, 3), "resumed": plan.resumed,
            "references_per_second": round(resolved_now / seconds, 1) if seconds > 0 else None,
            "reject_messages": [r.message for r in plan.rejects[:20]], "transitions": transitions,
            "inputs": [i["path"] for i in plan.inputs], "timings": json.loads(row["timings"]), "errors": errors or [],
            "links": sum(ordered[s.value] for s in Status if s.is_link)}


# --- citation records ----------------------------------------------------------------------


def find_paper_work(catalog: ParquetCatalog, paper_id: str) -> dict[str, Any] | None:
    """The catalog row of a paper named by arXiv id, DOI or work id, if the catalog has it."""
    from resolvers.identifiers import canonical_arxiv_id, normalize_doi

    text = paper_id.strip()
    hit = None
    if text.startswith(("arxiv:", "doi:", "cl:")):
        hit = catalog.works_by_id([text]).get(text)
    arxiv_id = canonical_arxiv_id(text)
    if hit is None and arxiv_id:
        hit = catalog.works_by_arxiv_id([arxiv_id]).get(arxiv_id)
    doi = normalize_doi(text)
    if hit is None and doi:
        hit = catalog.works_by_doi([doi]).get(doi)
    return catalog.work_rows([hit.work_id])[hit.work_id] if hit else None


def citation_record(paper_id: str, ledger_dir: str | Path, catalog_dir: str | Path,
                    page_cap: int | None = None) -> dict[str, Any]:
    """The citation record of one paper, from the ledger's current observations and notices."""
    if not paper_id.strip():
        from resolvers.errors import UsageError

        raise UsageError("record: the paper id is empty (give an arXiv id, a DOI or a citing_paper id)")
    return next(citation_records([paper_id], ledger_dir, catalog_dir, page_cap))


RECORDS_PER_PASS = 500  # papers whose ledger rows are gathered in one pass (bounds the memory held)


def citation_records(paper_ids: Sequence[str], ledger_dir: str | Path, catalog_dir: str | Path,
                     page_cap: int | None = None) -> Iterator[dict[str, Any]]:
    """The citation records of many papers, in order; one pass over the ledger per 500 papers."""
    from . import records
    from .options import at_least
    from .ledger import papers_observations

    if page_cap is not None:
        at_least("page_cap", page_cap, 1)
    catalog = get_catalog(catalog_dir)
    generated_from = {"tables": {"current": "ledger view current (latest observation per reference)",
                                 "notices": "ledger view notices (latest notice per cited work)",
                                 "works": "catalog works"},
                      "catalog_fingerprint": catalog.fingerprint}
    paper_ids = list(paper_ids)
    for start in range(0, len(paper_ids), RECORDS_PER_PASS):
        chunk = paper_ids[start:start + RECORDS_PER_PASS]
        works = [find_paper_work(catalog, paper_id) for paper_id in chunk]
        observed = papers_observations(ledger_dir, catalog_dir, [
            (sorted(records.paper_forms(paper_id, work)), work["work_id"] if work else None)
            for paper_id, work in zip(chunk, works)])
        cited_rows = catalog.work_rows([r["work_id"] for outbound, _, _ in observed for r in outbound
                                        if r.get("work_id")])  # one catalog lookup per pass
        for paper_id, paper_work, (outbound, inbound, notice_rows) in zip(chunk, works, observed):
            cited = {r["work_id"]: cited_rows[r["work_id"]] for r in outbound if r.get("work_id") in cited_rows}
            yield records.build_record(paper_id, paper_work, outbound, inbound,
                                       {r["work_id"]: r for r in notice_rows}, generated_from,
                                       page_cap=page_cap or records.DEFAULT_PAGE_CAP, works=cited)


RECORD_STEM_MAX = 120


def record_file_stem(paper_id: str) -> str:
    """The record file name of a paper id: distinct ids always get distinct names.

    An id whose percent-escape (``quote``, keeping ``-_.``) is a plain name (not empty, no
    leading dot, no upper-case letter, at most 120 bytes) is its own name: ``2301.00001``,
    ``hep-th%2F9901001``, ``10.1000%2Fxyz``; escaping is reversible, so these never meet. Any
    other id gets the escape's first 100 bytes, ``+`` and 16 hex digits of the id's SHA-256
    (``hidden+1f0c...`` for ``.hidden``, ``PhysRev...+...`` for a DOI with capitals, so two ids
    differing only in case stay apart on a case-blind file system). ``+`` never occurs in a
    plain name (``quote`` escapes it), so the two kinds cannot meet either."""
    from urllib.parse import quote

    escaped = quote(paper_id, safe="-_.")
    plain = escaped.lstrip(".")
    if plain == escaped and plain and len(plain) <= RECORD_STEM_MAX and not any("A" <= c <= "Z" for c in paper_id):
        return plain
    digest = hashlib.sha256(paper_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return plain[:100] + "+" + digest


def write_records(paper_ids: Sequence[str], ledger_dir: str | Path, catalog_dir: str | Path,
                  progress: Callable[[int], None] | None = None) -> list[Path]:
    """Write each paper's record as JSON, text and HTML under ``<ledger>/records/``, under the
    ledger's writer lock; first removing what a killed writer of records left staged there.
    ``progress(1)`` after each paper (the CLI's progress bar)."""
    from .atomic import remove_leftovers
    from .ledger import check_ledger_dir

    check_ledger_dir(ledger_dir)
    out = Path(ledger_dir) / "records"
    held_before = locking.holds_ledger(ledger_dir)  # a caller's run holds it: leave it held
    locking.acquire_ledger(ledger_dir)
    try:
        remove_leftovers(out)
        return _write_record_files(paper_ids, ledger_dir, catalog_dir, out, progress)
    finally:
        if not held_before:
            locking.release_ledger(ledger_dir)


def _write_record_files(paper_ids: Sequence[str], ledger_dir: str | Path, catalog_dir: str | Path,
                        out: Path, progress: Callable[[int], None] | None) -> list[Path]:
    from . import records
    from .atomic import atomic_write_bytes

    written = []
    for paper_id, record in zip(paper_ids, citation_records(paper_ids, ledger_dir, catalog_dir)):
        records.validate_record(record)
        stem = record_file_stem(paper_id)
        atomic_write_bytes(out / f"{stem}.json", (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode())
        atomic_write_bytes(out / f"{stem}.txt", records.render_ledger_text(record).encode())
        atomic_write_bytes(out / f"{stem}.html", records.render_ledger_html(record).encode())
        written.append(out / f"{stem}.json")
        if progress is not None:
            progress(1)
    return written


def check_run(ledger_dir: str | Path, run_id: str) -> str:
    """``run_id`` if the ledger has begun that run, else a one-line error naming the latest runs."""
    from resolvers.errors import UnknownRun

    from .options import check_run_id

    ledger = LedgerStore(ledger_dir)
    if ledger.known_run(check_run_id(run_id)):
        return run_id
    runs = sorted((p.parent for p in (Path(ledger_dir) / "_runs").glob("*/manifest.json")),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    latest = ", ".join(p.name for p in runs[:3])
    raise UnknownRun(f"ledger {ledger_dir} has no run {run_id!r}"
                     + (f"; latest runs: {latest}" if latest else "; it has no runs yet"))


def papers_touched(run_id: str, ledger_dir: str | Path, catalog_dir: str | Path) -> list[str]:
    """Papers whose record a run changed: its citing papers, and ledger papers it now cites."""
    from .ledger import citing_papers

    ledger = LedgerStore(ledger_dir)
    catalog = get_catalog(catalog_dir)
    own = citing_papers(ledger_dir, catalog_dir, run_id)
    linked = set(ledger.linked_work_ids(run_id))
    touched = set(own)
    for paper in citing_papers(ledger_dir, catalog_dir, None):
        work = find_paper_work(catalog, paper)
        if work and work["work_id"] in linked:
            touched.add(paper)
    return sorted(touched)
