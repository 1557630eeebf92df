"""``citeledger site OUT``: the static site of the ledger in ``OUT`` (``index.html``, ``notices.html``,
``papers/<stem>.html`` and its later pages with ``papers/<stem>.json``, the record they show, and
``works/<stem>.html``), made again only where it changed.

A build reads what the published build read (``OUT/.citeledger-site/state.json``: each paper's
part, ``collect.paper_part``) and makes again the pages of the papers whose record file changed
(size, time or inode), whose links lead elsewhere now (a cited work that became a ledger paper, a
citing paper gone), or whose title from its own source changed; of the cited works those papers
cite, cited before or cite now (every work when the catalog or the code that makes the pages
changed); the index and the notices page. Every other page is the published file, linked into the
new build; a page made again with the same bytes is linked too. So an incremental build's files
are byte for byte a full build's (tested), and its cost grows with what changed.

The build is staged and published whole (``folder``): nothing outside ``OUT`` and its staging
folder is written, nothing the site did not write is removed. With many papers to make, a second
process makes half of them (``PAPERS_FOR_TWO``); it dies with the build (``processes``)."""
from __future__ import annotations

import functools
import hashlib
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from citeledger.display import visible_utf8
from citeledger.engine.process_cache import get_catalog
from citeledger.processes import die_with_parent, stop_pool
from citeledger.records import receipts
from citeledger.records.ledger_reads import citing_papers
from citeledger.records.record_files import find_papers_works
from citeledger.records.render.file_names import page_file, record_file_stem
from citeledger.records.render.record_pages import RecordView, view_html_pages
from citeledger.records.render.view import json_name
from citeledger.site.collect import (
    CITES_SCHEMA,
    PAPERS,
    WORKS,
    LedgerLinks,
    built_records,
    cited_works,
    cites_table,
    noticed_works,
    paper_part,
    read_record,
    record_path,
    record_source,
)
from citeledger.site.folder import CITES, FORMAT, MANIFEST, STATE, Contents, SiteFolder, remove_tree
from citeledger.site.site_pages import index_page, notices_page, static_row, work_pages
from citeledger.site.staging import StagedFiles, finish, stage
from citeledger.storage import locking
from citeledger.storage.atomic import write_new_file
from resolvers.jcs import jcs

PAPERS_FOR_TWO = 2000  # from this many papers to make, a second process makes part of them
HEAD_START = 200  # papers the building process makes beyond half while the second one starts


@dataclass
class SiteReport:
    """What a build did: papers and cited works with pages, the site's files, how many were written
    and how many kept as published, the papers whose pages were made again, the record files left
    out (file, why) and the seconds it took."""

    papers: int
    works: int
    files: int
    written: int
    kept: int
    made: int
    left_out: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


@functools.lru_cache(maxsize=1)
def pages_code() -> str:
    """A digest of the code that makes the site's pages: pages of another version are made again."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted([*root.joinpath("site").glob("*.py"), *root.joinpath("records", "render").glob("*.py"),
                        root / "display.py"]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def build_site(out: str | Path, ledger_dir: str | Path, catalog_dir: str | Path, workers: int | None = None,
               allow_other_files: bool = False) -> SiteReport:
    """Make the site of the ledger in ``out`` (see the module); builds of one ``out`` take turns.
    ``workers``: processes making the papers' pages (default: two from ``PAPERS_FOR_TWO`` papers to make).
    ``allow_other_files``: write the site into a folder holding files it did not write (they are kept)."""
    started = time.perf_counter()
    folder = SiteFolder(out)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with locking.exclusive_file(folder.lock):
        folder.clean_leftovers()
        contents = folder.contents(allow_other_files)
        report = _build(folder, contents, Path(ledger_dir), Path(catalog_dir), workers)
    report.seconds = time.perf_counter() - started
    return report


def _build(folder: SiteFolder, contents: Contents, ledger_dir: Path, catalog_dir: Path,
           workers: int | None) -> SiteReport:
    from citeledger.ledger.reads import paper_titles

    catalog = get_catalog(catalog_dir)
    papers = sorted(citing_papers(ledger_dir, catalog_dir, None))
    works_of = {work["work_id"]: paper for paper, work in zip(papers, find_papers_works(catalog, papers)) if work}
    links = LedgerLinks(frozenset(papers), works_of, paper_titles(ledger_dir))
    code = pages_code()
    state = contents.state if contents.state and contents.state.get("code") == code else {}
    before: dict[str, Any] = state.get("papers") or {}
    old_cites = _read_cites(folder.out / CITES) if state else None
    if old_cites is None:
        before, state = {}, {}
    kept_parts, to_make = _unchanged_papers(papers, before, _moved_links(state, before, links, old_cites), links,
                                            contents, ledger_dir)
    staged = stage(folder, contents)
    staging = staged.staging
    try:
        kept_files = {rel for part in kept_parts.values() for rel in part["files"]}
        for rel in sorted(kept_files):
            staged.keep(rel)
        staged.clear_folder(f"{PAPERS}/", kept_files)
        made, new_cites, left_out = _make_papers(to_make, staged, before, ledger_dir, catalog_dir, links, workers)
        parts = dict(sorted({**kept_parts, **made}.items()))
        gone = set(before) - set(kept_parts)
        cites = _joined_cites(old_cites, gone, new_cites)
        own_pages = {w for w in pc.unique(cites["work_id"]).to_pylist() if links.paper_of_work(w) is None}
        if state and state.get("catalog") == catalog.fingerprint:
            touched = set(pc.unique(new_cites["work_id"]).to_pylist()) | moved_works(state, links) | (
                set(pc.unique(old_cites.filter(pc.is_in(old_cites["paper"], pa.array(sorted(gone), pa.string())))
                              ["work_id"]).to_pylist()) if old_cites is not None and gone else set())
        else:
            touched = set(own_pages)
        works = _work_pages(staged, cites, own_pages, touched, parts, state, catalog)
        noticed = noticed_works(parts, links)
        staged.put("notices.html", visible_utf8(notices_page(noticed)))
        rows = [part["row"] for part in parts.values()]
        as_of = max((r["as_of"] for r in rows), default="")
        staged.put("index.html", visible_utf8(index_page(
            rows, as_of, len(noticed), sorted((str(n), str(w)) for n, w in left_out.values()),
            [part.get("row_html") or static_row(part["row"]) for part in parts.values()])))
        new_state = {"format": FORMAT, "code": code, "catalog": catalog.fingerprint, "papers": parts,
                     "work_papers": {w: p for w, p in sorted(links.work_papers.items()) if p in links.papers},
                     "works": works, "left_out": left_out}
        finish(staged, folder, contents)
        write_new_file(staging / STATE, orjson.dumps(new_state))
        write_new_file(staging / CITES, _cites_bytes(cites))
        write_new_file(staging / MANIFEST, orjson.dumps(
            {"format": FORMAT, "files": {rel: entry.as_list() for rel, entry in sorted(staged.files.items())}}))
        folder.publish(staging)
    except BaseException:
        remove_tree(staging)
        raise
    return SiteReport(len(parts), len(works), len(staged.files), staged.written, staged.kept, len(made),
                      sorted((str(n), str(w)) for n, w in left_out.values()))


def _unchanged_papers(papers: list[str], before: Mapping[str, Any], moved: set[str], links: LedgerLinks,
                      contents: Contents, ledger_dir: Path) -> tuple[dict[str, Any], list[str]]:
    """The papers whose published pages stand (their record file, title and links as the published
    build read them, their files the site's own still), by their parts; the papers to make again."""
    code, records = pages_code(), f"{ledger_dir}/records/"
    kept_parts, to_make = {}, []
    for paper in papers:
        old = before.get(paper)
        if old is not None and paper not in moved and old["source"] is not None and old.get("stem") \
                and old["source"] == record_source(f"{records}{old['stem']}.json") \
                and old["key"] == links.page_key(code, old) and all(rel in contents.own for rel in old["files"]):
            kept_parts[paper] = old
        else:
            to_make.append(paper)
    return kept_parts, to_make


def moved_works(state: Mapping[str, Any], links: LedgerLinks) -> set[str]:
    """The cited works whose page moved since the published build: to a ledger paper's page (the
    work's paper joined the ledger, or the catalog now knows the paper) or back to a page of its own."""
    before: Mapping[str, str] = state.get("work_papers") or {}
    return {w for w in set(before) | set(links.work_papers) if before.get(w) != links.paper_of_work(w)}


def _moved_links(state: Mapping[str, Any], before: Mapping[str, Any], links: LedgerLinks,
                 old_cites: pa.Table | None) -> set[str]:
    """The papers whose pages link elsewhere now: they cite a work whose page moved, or list a citing
    paper that joined or left the ledger."""
    if not before or old_cites is None:
        return set()
    moved = moved_works(state, links)
    papers = set(pc.unique(old_cites.filter(pc.is_in(old_cites["work_id"], pa.array(sorted(moved), pa.string())))
                           ["paper"]).to_pylist()) if moved else set()
    came_or_went = set(before) ^ links.papers
    return papers | {p for p, part in before.items() if came_or_went.intersection(part["inbound"])}


def _read_cites(path: Path) -> pa.Table | None:
    """The published build's table of references to cited works, None when it cannot be read."""
    try:
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowInvalid):
        return None
    return table if table.schema.equals(CITES_SCHEMA) else None


def _cites_bytes(cites: pa.Table) -> bytes:
    """The table as an Arrow IPC file (zstd: a notice line repeats for every reference citing the work)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, cites.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
        writer.write_table(cites)
    return sink.getvalue().to_pybytes()


def _joined_cites(old: pa.Table | None, gone: set[str], new: pa.Table) -> pa.Table:
    """The references of the kept papers (the published table's rows but those of papers made again
    or gone) and of the papers made now (in no order: ``collect.cited_works`` orders what it reads)."""
    if old is not None and len(old):
        old = old.filter(pc.invert(pc.is_in(old["paper"], pa.array(sorted(gone), pa.string())))) if gone else old
        return pa.concat_tables([old, new])
    return new


def _work_pages(staged: StagedFiles, cites: pa.Table, own_pages: set[str], touched: set[str],
                parts: Mapping[str, Any], state: Mapping[str, Any], catalog: Any) -> dict[str, list[str]]:
    """The pages of the cited works that have their own: made again for ``touched`` (the works the
    papers made again cite or cited, the works whose page moved; every work when the catalog or the
    code changed), the published files kept for the others. Their files, by work."""
    old_files: Mapping[str, list[str]] = state.get("works") or {}
    keep = {w for w in own_pages if w not in touched and w in old_files
            and all(rel in staged.own for rel in old_files[w])}
    make = own_pages - keep
    titles = {paper: part["row"]["title"] for paper, part in parts.items()}
    content = cited_works(cites, make, titles)
    rows = catalog.work_rows(sorted(make))
    files: dict[str, list[str]] = {}
    for work_id in sorted(own_pages):
        if work_id in keep:
            for rel in old_files[work_id]:
                staged.keep(rel)
            files[work_id] = list(old_files[work_id])
            continue
        stem = record_file_stem(work_id)
        names = []
        for number, page in enumerate(work_pages(stem, work_id, rows.get(work_id), content[work_id]), start=1):
            names.append(f"{WORKS}/{page_file(stem, number)}")
            staged.put(names[-1], visible_utf8(page))
        files[work_id] = names
    return files


def _make_papers(papers: list[str], staged: StagedFiles, before: Mapping[str, Any], ledger_dir: Path,
                 catalog_dir: Path, links: LedgerLinks,
                 workers: int | None) -> tuple[dict[str, Any], pa.Table, dict[str, Any]]:
    """The pages of ``papers`` made (here, and with many papers half in a second process): their
    parts, their references to cited works, and the papers left out (paper -> [record file, why])."""
    count = workers or (2 if len(papers) >= PAPERS_FOR_TWO else 1)
    if count < 2 or len(papers) < 2:
        parts, rows, left_out = make_papers(papers, staged, ledger_dir, catalog_dir, links)
        return parts, cites_table(rows), left_out
    first = min(len(papers) - 1, len(papers) // 2 + HEAD_START) if len(papers) >= PAPERS_FOR_TWO \
        else len(papers) // 2
    theirs = papers[first:]
    own = {rel: staged.own[rel] for p in theirs for rel in (before.get(p) or {}).get("files", ())
           if rel in staged.own}
    apart = StagedFiles(staged.out, staged.staging, own, others=staged.others)  # no spare's page in its way
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        try:
            future = pool.submit(make_papers_apart, theirs, apart, str(ledger_dir), str(catalog_dir), links)
            parts, rows, left_out = make_papers(papers[:first], staged, ledger_dir, catalog_dir, links)
            their_parts, their_rows, their_left, counts = future.result()
        except BaseException:  # Ctrl-C, SIGTERM, a failure: the other process is not waited for
            stop_pool(pool)
            raise
    staged.add(counts)
    return {**parts, **their_parts}, cites_table(rows + their_rows), {**left_out, **their_left}


def make_papers_apart(papers: list[str], staged: StagedFiles, ledger_dir: str, catalog_dir: str,
                      links: LedgerLinks) -> tuple[dict, list, dict, dict]:
    """``make_papers`` in a second process: what it returns, and the files it wrote and kept."""
    parts, rows, left_out = make_papers(papers, staged, Path(ledger_dir), Path(catalog_dir), links)
    return parts, rows, left_out, staged.counts()


def make_papers(papers: list[str], staged: StagedFiles, ledger_dir: Path, catalog_dir: Path,
                links: LedgerLinks) -> tuple[dict[str, Any], list[tuple[Any, ...]], dict[str, Any]]:
    """Each paper's pages written: its record file read and checked, or its record built from the ledger;
    a record that fails the check, or cannot be shown, is left out (paper -> [record file, why]). Its
    part, and its rows of references to cited works."""
    keys = receipts.load_public_keys([receipts.keys_dir(ledger_dir)]) if receipts.keys_dir(ledger_dir).is_dir() \
        else {}
    parts: dict[str, Any] = {}
    rows: list[tuple[Any, ...]] = []
    left_out: dict[str, Any] = {}
    to_build = []
    for paper in papers:
        path = record_path(ledger_dir, paper)
        source = record_source(path)
        record, why = read_record(path, keys)
        if why is not None:
            left_out[paper] = [f"records/{path.name}", why]
        elif record is None:
            to_build.append(paper)
        else:
            _make_paper(paper, record, source, staged, links, (parts, rows, left_out))
    for paper, record in zip(to_build, built_records(to_build, ledger_dir, catalog_dir)):
        _make_paper(paper, record, None, staged, links, (parts, rows, left_out))
    return parts, rows, left_out


def _make_paper(paper: str, record: dict[str, Any], source: list[int] | None, staged: StagedFiles,
                links: LedgerLinks, into: tuple[dict[str, Any], list[tuple[Any, ...]], dict[str, Any]]) -> None:
    """One paper's pages and part; a record whose values its pages cannot show is left out."""
    try:
        if str(record["paper"]["id"]) != paper:
            raise ValueError(f"it is the record of {str(record['paper']['id'])[:80]!r}")
        view = RecordView(record, links.links_for(record))
        pages = [visible_utf8(page) for page in view_html_pages(view)]
        files = [f"{PAPERS}/{page_file(view.links.stem, n)}" for n in range(1, len(pages) + 1)]
        pages.append(jcs(record) + b"\n")  # the record as JSON, which its first page links to
        files.append(f"{PAPERS}/{json_name(view)}")
        part, cites = paper_part(view, links, source, files)
        part["key"] = links.page_key(pages_code(), part)
        part["row_html"] = static_row(part["row"])  # the index's row, made once while the paper is unchanged
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        name = f"records/{record_file_stem(paper)}.json" if source is not None else f"the record built for {paper}"
        into[2][paper] = [name, f"cannot be shown: {type(exc).__name__}: {str(exc)[:200]}"]
        return
    for rel, data in zip(files, pages):
        staged.put(rel, data)
    into[0][paper] = part
    into[1].extend(cites)
