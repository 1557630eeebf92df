"""The citation-record side of the ledger: which papers a run touched, each paper's record
gathered from the ledger's current observations and notices, and the record files (JSON, text,
HTML) written under ``<ledger>/records/``."""
from __future__ import annotations

import gc
import json
import logging
import math
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from citeledger.app_errors import NotFound, RecordsIncomplete, UnknownRun, UsageError
from citeledger.catalog.catalog_store import ParquetCatalog
from citeledger.engine.process_cache import get_catalog
from citeledger.ledger.ledger_store import LedgerStore, SyncedBatches, check_ledger_dir
from citeledger.options import at_least, check_run_id
from citeledger.records import receipts
from citeledger.records import workers as record_workers
from citeledger.records.ledger_reads import citing_papers, pass_rows
from citeledger.records.paper import HANDLE_RE, arxiv_of, id_forms, paper_forms
from citeledger.records.record import DEFAULT_PAGE_CAP, build_record
from citeledger.records.record_json import plain_value, validate_record
from citeledger.records.render import record_pages
from citeledger.records.render.file_names import record_file_stem
from citeledger.storage import locking
from citeledger.storage.places import CatalogDir, LedgerDir, LedgerPlaces
from resolvers.errors import JCSError
from resolvers.identifiers.extract import canonical_arxiv_id, normalize_doi


def find_paper_work(catalog: ParquetCatalog, paper_id: str) -> dict[str, Any] | None:
    """The catalog row of a paper named by arXiv id (``arXiv:X``, ``XvN``, ``10.48550/arXiv.X``),
    DOI or work id, if the catalog has it."""
    return find_papers_works(catalog, [paper_id])[0]


def find_papers_works(catalog: ParquetCatalog, paper_ids: Sequence[str]) -> list[dict[str, Any] | None]:
    """``find_paper_work`` of many papers with one lookup per kind of id and one read of the rows
    (a record run looks its papers up once, not paper by paper)."""
    texts = [p.strip() for p in paper_ids]
    by_id = catalog.works_by_id(sorted({t for t in texts if t.startswith(("arxiv:", "doi:", "cl:"))}))
    arxiv = {t: arxiv_of(t) or canonical_arxiv_id(t) for t in texts}
    by_arxiv = catalog.works_by_arxiv_id(sorted({a for a in arxiv.values() if a}))
    doi = {t: normalize_doi(t) for t in texts}
    by_doi = catalog.works_by_doi(sorted({d for d in doi.values() if d}))
    hits = [by_id.get(t) or by_arxiv.get(arxiv[t] or "") or by_doi.get(doi[t] or "") for t in texts]
    rows = catalog.work_rows([h.work_id for h in hits if h])
    return [rows[h.work_id] if h else None for h in hits]


def citation_record(paper_id: str, ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                    page_cap: int | None = None) -> dict[str, Any]:
    """The citation record of one paper, from the ledger's current observations and notices, with
    its receipt (``paper_id``: any alias, the paper's handle too)."""
    if not paper_id.strip():
        raise UsageError("record: the paper id is empty (give an arXiv id, a DOI or a citing_paper id)")
    paper_id = ledger_paper_id(paper_id.strip(), ledger_dir, catalog_dir)
    record = next(citation_records([paper_id], ledger_dir, catalog_dir, page_cap))
    return receipts.sign_record(record, receipts.active_key(ledger_dir))  # unsigned, saying so, without a key


def ledger_paper_id(alias: str, ledger_dir: LedgerDir, catalog_dir: CatalogDir) -> str:
    """The ledger's own id of the paper an alias names (``arXiv:X``, ``XvN``, ``10.48550/arXiv.X``, a
    DOI, its handle), so every alias gives the same record; an alias of a paper that cites nothing in
    the ledger stays as given (its canonical arXiv id for arXiv forms)."""
    if HANDLE_RE.match(alias.lower()):
        return paper_of_handle(alias.lower(), ledger_dir, catalog_dir)
    forms = paper_forms(alias, find_paper_work(get_catalog(catalog_dir), alias))
    hits = [p for p in citing_papers(ledger_dir, catalog_dir, None) if id_forms(p) & forms]
    return hits[0] if len(hits) == 1 else arxiv_of(alias) or alias


def paper_of_handle(handle: str, ledger_dir: LedgerDir, catalog_dir: CatalogDir) -> str:
    """The ledger paper whose handle (or a longer prefix of its identity digest) is ``handle``;
    unknown is ``NotFound``, two papers sharing it an error naming both (see ``records.paper``)."""
    from citeledger.records.paper import HANDLE_PREFIX, identity, identity_digest

    catalog = get_catalog(catalog_dir)
    wanted = handle[len(HANDLE_PREFIX):]
    papers = citing_papers(ledger_dir, catalog_dir, None)
    hits = [p for p, work in zip(papers, find_papers_works(catalog, papers))
            if identity_digest(identity(p, work)).startswith(wanted)]
    if not hits:
        raise NotFound(f"the ledger {ledger_dir} has no paper with handle {handle!r}")
    if len(hits) > 1:
        raise NotFound(f"handle {handle!r} is shared by {', '.join(hits[:5])}: give a longer prefix of "
                       "paper.identity_digest, or an arXiv id or DOI")
    return hits[0]


def provenance_of(ledger_dir: LedgerDir, catalog: ParquetCatalog, run_ids: set[str]) -> dict[str, Any]:
    """What the records take from outside the observation rows: each run's catalog fingerprint (its
    manifest), the build time of every catalog generation still on disk, the notice sources' times."""
    run_catalog = {}
    for run_id in sorted(r for r in run_ids if r):
        manifest = LedgerPlaces.of(ledger_dir).manifest(run_id)
        if manifest.exists():
            run_catalog[run_id] = plain_value(json.loads(manifest.read_text()).get("catalog_fingerprint"))
    built = {}
    for gen in sorted(catalog.store.dir.glob("gen-*/manifest.json")):
        m = json.loads(gen.read_text())
        built[m.get("fingerprint")] = m.get("built_at")
    return {"run_catalog": run_catalog, "catalog_built_at": built,
            "notice_sources": dict(catalog.manifest.get("notice_sources") or {})}


# Papers whose ledger rows are gathered in one pass: each pass finds the latest observation of
# every reference of the ledger once (about 0.4 CPU s a pass over a ledger of 400,000 references,
# growing with the ledger), and holds the pass's rows (about 100 MB for 5,000 papers of 40
# references): a write of 10,000 papers in two processes is two passes, not six.
RECORDS_PER_PASS = 5000
PASS_SLACK = 1.05  # a pass may hold 5 % more papers rather than add one (a worker's share with its head start)
ROWS_AT_ONCE = 200  # papers whose rows are made into dicts at once (``PassRows.observed``)


log = logging.getLogger(__name__)


def citation_records(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                     page_cap: int | None = None) -> Iterator[dict[str, Any]]:
    """The citation records of many papers, in order; one pass over the ledger per ``RECORDS_PER_PASS`` papers."""
    for record in records_or_failures(paper_ids, ledger_dir, catalog_dir, page_cap):
        if isinstance(record, JCSError):
            raise record
        yield record


def records_or_failures(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                        page_cap: int | None = None) -> Iterator[dict[str, Any] | JCSError]:
    """``citation_records``, with the error in place of the record of a paper whose record JSON
    cannot carry a value of its rows (``JCSError``): the papers after it are still built."""
    if page_cap is not None:
        at_least("page_cap", page_cap, 1)
    catalog = get_catalog(catalog_dir)
    generated_from = {"tables": {"current": "ledger view current (latest observation per reference)",
                                 "notices": "ledger view notices (latest notice per cited work)",
                                 "works": "catalog works"},
                      "catalog_fingerprint": catalog.fingerprint}
    paper_ids = list(paper_ids)
    size = max(1, math.ceil(len(paper_ids) / max(1, math.ceil(len(paper_ids) / (RECORDS_PER_PASS * PASS_SLACK)))))
    for start in range(0, len(paper_ids), size):  # near-equal passes, none for a few papers alone
        chunk = paper_ids[start:start + size]
        works = find_papers_works(catalog, chunk)
        passed = pass_rows(ledger_dir, catalog_dir, [
            (sorted(paper_forms(paper_id, work)), work["work_id"] if work else None)
            for paper_id, work in zip(chunk, works)])
        cited_rows = catalog.work_rows(passed.outbound_work_ids())  # one catalog lookup per pass
        provenance = provenance_of(ledger_dir, catalog, passed.run_ids())
        provenance["citing_titles"] = citing_titles(catalog, passed.inbound_citing())
        provenance["notice_cache"] = {}  # each notice row made into a record's notice once a pass
        provenance["resolved_cache"] = {}  # and each cited work's resolved view (record.resolved_view)
        provenance["rows_plain"] = True  # ledger_reads: the latest rows, values plain
        for group in range(0, len(chunk), ROWS_AT_ONCE):  # the rows of a few hundred papers as dicts at once
            observed = passed.observed(passed.plans[group:group + ROWS_AT_ONCE])
            for paper_id, paper_work, (outbound, inbound, notice_rows) in zip(
                    chunk[group:group + ROWS_AT_ONCE], works[group:group + ROWS_AT_ONCE], observed):
                cited = {r["work_id"]: cited_rows[r["work_id"]] for r in outbound if r.get("work_id") in cited_rows}
                try:
                    yield build_record(paper_id, paper_work, outbound, inbound,
                                       {r["work_id"]: r for r in notice_rows}, generated_from,
                                       page_cap=page_cap or DEFAULT_PAGE_CAP, works=cited, provenance=provenance)
                except JCSError as exc:
                    yield exc


def citing_titles(catalog: ParquetCatalog, citing: list[str]) -> dict[str, str]:
    """The catalog title of each citing paper of the inbound rows (those the catalog knows)."""
    papers = sorted(set(citing))
    return {paper: str(work["title"]) for paper, work in zip(papers, find_papers_works(catalog, papers))
            if work and work.get("title")}


def write_records(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                  progress: Callable[[int], None] | None = None, workers: int | None = None) -> list[Path]:
    """Write each paper's record as JSON, text and HTML under ``<ledger>/records/``, under the
    ledger's writer lock; first removing what a killed writer of records left staged there.
    ``progress(n)`` after each ``n`` papers written (the CLI's progress bar). ``process_cache``: processes
    building the records (default: two for 2,000 papers or more, see ``record_workers``)."""
    check_ledger_dir(ledger_dir)
    held_before = locking.holds_ledger(ledger_dir)  # a caller's run holds it: leave it held
    locking.acquire_ledger(ledger_dir)
    try:
        LedgerStore.of(ledger_dir).remove_record_leftovers()
        _FAILED.clear()
        processes = record_workers.worker_count(len(paper_ids), workers)
        if processes > 1:
            written = record_workers.write_in_workers(paper_ids, ledger_dir, catalog_dir, progress, processes,
                                                      RECORDS_PER_PASS, write_block)
        else:
            written = _write_record_files(paper_ids, ledger_dir, catalog_dir, progress)
    finally:
        if not held_before:
            locking.release_ledger(ledger_dir)
    check_all_written(paper_ids, written)
    return written


def check_all_written(paper_ids: Sequence[str], written: Sequence[Path]) -> None:
    """A paper whose record could not be built (its reason logged where it was built) leaves the
    others written; the write then ends with one line naming the papers left out."""
    stems = {path.stem for path in written}
    missing = [paper for paper in paper_ids if record_file_stem(paper) not in stems]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        named = ", ".join(repr(paper) for paper in missing[:5]) + more
        raise RecordsIncomplete(f"{len(paper_ids) - len(missing)} of {len(paper_ids)} records written; no record for "
                                f"{named}: {_FAILED.get(missing[0], 'its record could not be built (see the log)')}")


# Schema validation (jsonschema: 0.09 s to import, 50-90 ms a 40-reference record) checks the builder's
# code, which is the same for every record, and the tests validate every record they write
# (tests/record_writer_check.py): a write validates only every 2,500th record (the 2,501st, 5,001st...),
# counted over the whole write, not per worker block (4 records of 10,000), so a night's write still
# checks records of real data now and then, and a small write (a one-reference run) loads no schema library.
VALIDATE_EVERY = 2500
RECORDS_PER_WRITE = 100  # records whose files are published with one disk sync (atomic.SyncedBatches)
_FAILED: dict[str, str] = {}  # paper id -> why its record could not be built (this process's writes)


def record_pages_of(record: dict[str, Any], lines: record_pages.PageCache | None = None) -> dict[str, bytes]:
    """A record's files: its JSON (the record's JCS and a newline, ``record_json``), text and HTML pages
    (``lines``: the writer's cache of shared parts' page lines, see ``record_pages.render_page_files``)."""
    return {"json": record_pages.render_json(record), **record_pages.render_all_files(record, lines)}


def write_block(paper_ids: Sequence[str], ledger_dir: str, catalog_dir: str, first: int = 0,
                progress: Callable[[int], None] | None = None) -> list[Path]:
    """One block of a write by one of its processes (``record_workers``): the caller holds the lock.
    ``first``: the position of the block's first paper in the whole write (which records are validated)."""
    return _write_record_files(paper_ids, ledger_dir, catalog_dir, progress, first)


def _write_record_files(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                        progress: Callable[[int], None] | None, first: int = 0) -> list[Path]:
    ledger = LedgerStore.of(ledger_dir)
    collecting = gc.isenabled()
    gc.disable()  # records are trees freed as they go; the cycle collector walked every row held
    try:
        return _write_batches(paper_ids, ledger_dir, catalog_dir, progress, ledger, first)
    finally:
        if collecting:
            gc.enable()


def validated(n: int) -> bool:
    """Whether the ``n``-th record of a write (from 0, counted over the whole write, whichever process
    builds it) is checked against the schema: every ``VALIDATE_EVERY``-th after the first."""
    return n > 0 and n % VALIDATE_EVERY == 0


def _write_batches(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                   progress: Callable[[int], None] | None, ledger: LedgerStore, first: int) -> list[Path]:
    written: list[Path] = []
    batch: list[tuple[str, dict[str, bytes]]] = []
    key = receipts.active_key(ledger_dir)  # None: the records say they are unsigned (receipts.py)
    records_of = records_or_failures(paper_ids, ledger_dir, catalog_dir)
    lines = record_pages.PageCache(ledger_work_pages(ledger_dir, catalog_dir))  # cited works that are ledger papers
    old_pages, stale = later_page_files(LedgerPlaces.of(ledger_dir).records), []
    batches = ledger.record_batches()  # each batch's disk sync runs while the next batch is built
    try:
        for n, (paper_id, record) in enumerate(zip(paper_ids, records_of), start=first):
            try:
                if isinstance(record, JCSError):
                    raise record
                receipts.sign_record(record, key)
                if validated(n):
                    validate_record(record)
                pages = record_pages_of(record, lines)
            except JCSError as exc:  # this paper gets no record; the others do (``check_all_written``)
                _FAILED[paper_id] = f"{exc}"
                log.warning("paper %r: no record written: %s", paper_id, exc)
                continue
            stem = record_file_stem(paper_id)
            batch.append((stem, pages))
            stale += [f"{stem}.{suffix}" for suffix in old_pages.get(stem, ()) if suffix not in pages]
            if len(batch) == RECORDS_PER_WRITE:
                written += _publish(ledger, batch, progress, batches)
                batch = []
        if batch:
            written += _publish(ledger, batch, progress, batches)
        batches.close()
    except BaseException:
        batches.abort()
        raise
    for name in stale:  # page files of a record that now has fewer pages
        (LedgerPlaces.of(ledger_dir).records / name).unlink(missing_ok=True)
    return written


def later_page_files(folder: Path) -> dict[str, list[str]]:
    """The second and later HTML page files in a records folder, by record stem: their suffixes."""
    found: dict[str, list[str]] = {}
    if folder.is_dir():
        for path in folder.glob("*.page-*.html"):
            stem, _, suffix = path.name.rpartition(".page-")
            found.setdefault(stem, []).append("page-" + suffix)
    return found


def ledger_work_pages(ledger_dir: LedgerDir, catalog_dir: CatalogDir) -> dict[str, str]:
    """The catalog work id of each ledger paper the catalog knows: its record is that work's page."""
    papers = citing_papers(ledger_dir, catalog_dir, None)
    return {work["work_id"]: paper for paper, work in zip(papers, find_papers_works(get_catalog(catalog_dir), papers))
            if work}


def _publish(ledger: LedgerStore, batch: list[tuple[str, dict[str, bytes]]],
             progress: Callable[[int], None] | None, batches: SyncedBatches) -> list[Path]:
    """One batch staged in this thread, its sync started (``atomic.SyncedBatches``), the batch
    before renamed into place: publishing whole batches from a background thread while the next
    was built was slower (measured: the two threads traded the GIL at every file's syscalls)."""
    written = ledger.write_records_batch(batch, batches)
    if progress is not None:
        progress(len(batch))
    return written


def check_run(ledger_dir: LedgerDir, run_id: str) -> str:
    """``run_id`` if the ledger has begun that run, else a one-line error naming the latest runs."""
    ledger = LedgerStore.of(ledger_dir)
    if ledger.known_run(check_run_id(run_id)):
        return run_id
    runs = sorted((p.parent for p in LedgerPlaces.of(ledger_dir).manifests.glob("*/manifest.json")),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    latest = ", ".join(p.name for p in runs[:3])
    raise UnknownRun(f"ledger {ledger_dir} has no run {run_id!r}"
                     + (f"; latest runs: {latest}" if latest else "; it has no runs yet"))


def papers_touched(run_id: str, ledger_dir: LedgerDir, catalog_dir: CatalogDir) -> list[str]:
    """Papers whose record a run changed: its citing papers, and ledger papers it now cites."""
    ledger = LedgerStore.of(ledger_dir)
    catalog = get_catalog(catalog_dir)
    own = citing_papers(ledger_dir, catalog_dir, run_id)
    linked = set(ledger.linked_work_ids(run_id))
    touched = set(own)
    papers = citing_papers(ledger_dir, catalog_dir, None)
    for paper, work in zip(papers, find_papers_works(catalog, papers)):
        if work and work["work_id"] in linked:
            touched.add(paper)
    return sorted(touched)
