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
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from resolvers.errors import DiskFull
from resolvers.model import Reference, Status, STATE_ORDER
from resolvers.observation import observation_row
from resolvers.resolution import resolve_batch

from . import locking
from .inputs import InputLimits, InputReject, read_references
from .store import LedgerStore, ParquetCatalog, check_run_id, file_sha256

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
    """One unit of work for a task: a slice of the run's references and where it goes."""

    run_id: str
    part: str
    catalog_dir: str
    ledger_dir: str
    observed_at: datetime
    catalog_fingerprint: str
    references: tuple[Reference, ...]
    remote: bool = False
    catalog_generation: str | None = None  # the generation planned on; every batch uses it


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
    """Every row of every input as a reference or a reject; a reference seen twice is a reject.
    ``citing_paper`` (for .bbl/.bib inputs) is one id for all, or a mapping from path to id."""
    references: list[Reference] = []
    rejects: list[InputReject] = []
    seen: dict[tuple[str, int], str] = {}
    for path in paths:
        paper = citing_paper.get(str(path)) if isinstance(citing_paper, Mapping) else citing_paper
        for item in read_references(path, limits, paper):
            if isinstance(item, InputReject):
                rejects.append(item)
                continue
            key = (item.citing_paper, item.reference_index)
            if key in seen:
                rejects.append(InputReject(str(item.file), item.line, "reference_index",
                                           f"duplicate reference ({item.citing_paper}, {item.reference_index}); "
                                           f"first seen at {seen[key]}", item.raw[:200]))
                continue
            seen[key] = f"{item.file}:{item.line}"
            references.append(item)
    return references, rejects


def plan_run(inputs: Sequence[str | Path], catalog_dir: str | Path, ledger_dir: str | Path,
             run_id: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, limits: InputLimits | None = None,
             citing_paper: str | Mapping[str, str] | None = None, remote: bool = False) -> RunPlan:
    """Read the inputs, fix the batches, and start (or pick up) the run in the ledger."""
    from .config import at_least
    from .store import check_ledger_dir

    batch_size = at_least("batch_size", batch_size, 1)
    check_ledger_dir(ledger_dir)
    limits = limits or InputLimits()
    if limits.max_file_bytes is None:  # the configuration's limits.max_input_bytes (clear reject when over)
        from .config import load_config

        limits = dataclasses.replace(limits, max_file_bytes=load_config().limits.max_input_bytes)
    run_id = check_run_id(new_run_id() if run_id is None else run_id)
    locking.acquire_ledger(ledger_dir)  # one writer per ledger; released by finish_run or death
    _UNFINISHED[str(ledger_dir)] = run_id  # what an interrupt tells the user to re-run
    try:
        return _plan_locked(inputs, catalog_dir, ledger_dir, run_id, batch_size, limits, citing_paper, remote)
    except BaseException as exc:
        locking.release_ledger(ledger_dir)
        if isinstance(exc, Exception) and not isinstance(exc, DiskFull):  # no run the same id would finish
            _UNFINISHED.pop(str(ledger_dir), None)
            if not LedgerStore(ledger_dir).known_run(run_id):
                from .store import unpin_generation

                unpin_generation(catalog_dir, ledger_dir, run_id)  # a run that never began pins nothing
        raise


def _plan_locked(inputs: Sequence[str | Path], catalog_dir: str | Path, ledger_dir: str | Path, run_id: str,
                 batch_size: int, limits: InputLimits, citing_paper: str | Mapping[str, str] | None,
                 remote: bool) -> RunPlan:
    from .blocking import ensure_index

    catalog = planned_catalog(catalog_dir, ledger_dir, run_id)
    ensure_index(catalog.generation_dir)  # once here, not in every worker process
    input_info = []
    for p in inputs:
        path = Path(p)
        input_info.append({"path": str(path), "sha256": file_sha256(path) if path.exists() else "missing"})
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
    catalog_generation = catalog.generation_dir.name
    references, rejects = read_inputs(inputs, limits, citing_paper)
    jobs = []
    for start in range(0, len(references), batch_size):
        chunk = tuple(references[start:start + batch_size])
        digest = hashlib.sha256(json.dumps([[r.citing_paper, r.reference_index, r.raw] for r in chunk])
                                .encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
        jobs.append(BatchJob(run_id, f"part-{start // batch_size:06d}-{digest}", str(catalog_dir), str(ledger_dir),
                             manifest.observed_at, catalog.fingerprint, chunk, remote, catalog_generation))
    ledger.write_rejects(run_id, "input-rejects", [
        {"run_id": run_id, "file": r.file, "line": r.line, "field": r.field, "reason": r.reason,
         "excerpt": r.excerpt} for r in rejects])
    pending = [j for j in jobs if not ledger.batch_done(run_id, j.part)]
    return RunPlan(run_id, str(catalog_dir), str(ledger_dir), input_info, manifest.observed_at,
                   catalog.fingerprint, jobs, pending, rejects, resumed, len(references),
                   catalog_seq=catalog.ingested_seq)


# Runs this process planned and has not finished, by ledger: the run id an interrupted command
# names in its "re-run with --run-id" line.
_UNFINISHED: dict[str, str] = {}


def interrupted_run() -> str | None:
    """The run this process was working on when it was stopped, if it did not finish."""
    return next(reversed(_UNFINISHED.values()), None)


def planned_catalog(catalog_dir: str | Path, ledger_dir: str | Path, run_id: str) -> ParquetCatalog:
    """The generation a run works on, pinned for it: the one it was first planned on when that
    run is being resumed (later builds keep it, see ``store.pinned_generations``), else the live
    one. Pinned before it is checked, so a build that swaps generations meanwhile cannot take it."""
    from .store import CatalogStore, pin_generation, pinned_generation

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
            _CACHE[("remote", "remote")] = build_remote(config)
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
        return {"skipped": len(job.references)}
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
    from resolvers import notices

    extra_events: list[Any] = []
    extra_sources: list[str] = []
    work_sources = set(work.get("sources") or ())
    if "crossref" in work_sources:
        extra_sources += [notices.SOURCE_CROSSREF_PUBLISHER, notices.SOURCE_CROSSREF_RW]
        if work.get("relations") and work.get("doi"):
            extra_events += notices.events_from_crossref_relations(work["doi"], json.loads(work["relations"]))
    if work.get("arxiv_id"):
        extra_sources.append(notices.SOURCE_ARXIV)
        if work.get("withdrawn"):
            extra_events += notices.events_from_arxiv_withdrawal(work["arxiv_id"])
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
    from .store import CatalogStore, write_ledger_database

    # Works the remote resolvers fetched join the catalog for the next run. After the run row:
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
    from .store import run_transitions, unpin_generation

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
    resolved_now = sum(len(j.references) for j in plan.pending)
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
    from .config import at_least
    from .store import papers_observations

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


def write_records(paper_ids: Sequence[str], ledger_dir: str | Path, catalog_dir: str | Path) -> list[Path]:
    """Write each paper's record as JSON, text and HTML under ``<ledger>/records/``, under the
    ledger's writer lock; first removing what a killed writer of records left staged there."""
    from .store import check_ledger_dir, remove_leftovers

    check_ledger_dir(ledger_dir)
    out = Path(ledger_dir) / "records"
    held_before = locking.holds_ledger(ledger_dir)  # a caller's run holds it: leave it held
    locking.acquire_ledger(ledger_dir)
    try:
        remove_leftovers(out)
        return _write_record_files(paper_ids, ledger_dir, catalog_dir, out)
    finally:
        if not held_before:
            locking.release_ledger(ledger_dir)


def _write_record_files(paper_ids: Sequence[str], ledger_dir: str | Path, catalog_dir: str | Path,
                        out: Path) -> list[Path]:
    from . import records
    from .store import atomic_write_bytes

    written = []
    for paper_id, record in zip(paper_ids, citation_records(paper_ids, ledger_dir, catalog_dir)):
        records.validate_record(record)
        stem = record_file_stem(paper_id)
        atomic_write_bytes(out / f"{stem}.json", (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode())
        atomic_write_bytes(out / f"{stem}.txt", records.render_ledger_text(record).encode())
        atomic_write_bytes(out / f"{stem}.html", records.render_ledger_html(record).encode())
        written.append(out / f"{stem}.json")
    return written


def check_run(ledger_dir: str | Path, run_id: str) -> str:
    """``run_id`` if the ledger has begun that run, else a one-line error naming the latest runs."""
    from resolvers.errors import UnknownRun

    from .store import check_run_id

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
    from .store import citing_papers

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
