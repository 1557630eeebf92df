"""``citeledger site OUT``: the static site written to ``OUT`` (``index.html``, ``notices.html``,
``papers/<stem>.html`` and its later pages, ``works/<stem>.html``), streaming: each record is read,
its pages made and queued, and the queue written in batches through ``storage.atomic`` (each file
whole or absent; no disk sync: the site is made again from the ledger at will); only the index
rows and the cited works' citing references are kept to the end. Files of an earlier build that
this one did not write are removed from ``papers/`` and ``works/``."""
from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from citeledger.display import visible_utf8
from citeledger.records.render.names import page_file, record_file_stem
from citeledger.records.render.pages import RecordView, view_html_pages
from citeledger.site.collect import PAPERS, WORKS, SiteData, ledger_records
from citeledger.site.site_pages import index_page, notices_page, work_pages
from citeledger.storage.atomic import atomic_write_files

FILES_PER_BATCH = 2000  # files staged and renamed at once
PAPERS_FOR_TWO = 2000  # from this many papers two processes make the papers' pages (each its half)


@dataclass
class SiteReport:
    papers: int
    works: int
    files: int
    seconds: float


class _Queue:
    """Files waiting to be written: written ``FILES_PER_BATCH`` at a time; their names kept."""

    def __init__(self, out: Path):
        self.out, self.files, self.names = out, [], set()  # type: ignore[var-annotated]

    def add(self, relative: str, text: str) -> None:
        self.files.append((str(self.out / relative), visible_utf8(text)))
        self.names.add(relative)
        if len(self.files) >= FILES_PER_BATCH:
            self.flush()

    def flush(self) -> None:
        if self.files:
            atomic_write_files(self.files, sync=False)  # a site is made again from the ledger at will
            self.files = []


def build_site(out: str | Path, ledger_dir: str | Path, catalog_dir: str | Path,
               workers: int | None = None) -> SiteReport:
    """Write the site of the ledger to ``out``; returns what it wrote and how long it took.
    ``process_cache``: processes making the papers' pages (default: two from ``PAPERS_FOR_TWO`` papers)."""
    started = time.perf_counter()
    out = Path(out)
    for folder in (out, out / PAPERS, out / WORKS):
        folder.mkdir(parents=True, exist_ok=True)
    data = SiteData.of_ledger(ledger_dir, catalog_dir)
    papers = sorted(data.papers)
    count = workers or (2 if len(papers) >= PAPERS_FOR_TWO else 1)
    size = -(-len(papers) // count) if papers else 1
    parts = [(str(out), str(ledger_dir), str(catalog_dir), papers[i:i + size], data)
             for i in range(0, len(papers), size)]
    if count > 1 and len(parts) > 1:
        with ProcessPoolExecutor(len(parts), mp_context=get_context("spawn")) as pool:
            done = list(pool.map(paper_pages, parts))
    else:
        done = [paper_pages(part) for part in parts]
    queue, as_of = _Queue(out), max([part[1] for part in done], default="")
    for part, _, names in done:
        data.merge(part)
        queue.names |= names
    for work_id, work in data.works.items():
        stem = record_file_stem(work_id)
        for number, page in enumerate(work_pages(stem, work), start=1):
            queue.add(f"{WORKS}/{page_file(stem, number)}", page)
    queue.add("notices.html", notices_page(data.noticed))
    queue.add("index.html", index_page(data.rows, as_of, len(data.noticed)))
    queue.flush()
    remove_stale(out, queue.names)
    return SiteReport(len(data.rows), len(data.works), len(queue.names), time.perf_counter() - started)


def paper_pages(part: tuple[str, str, str, list[str], SiteData]) -> tuple[SiteData, str, set[str]]:
    """The pages of some papers written (in a worker process or here): what they add to the site
    (index rows, cited works' citing references, notices), their latest "as of", their files' names."""
    out, ledger_dir, catalog_dir, papers, shared = part
    data, queue, as_of = SiteData(sorted(shared.papers), shared.work_papers), _Queue(Path(out)), ""
    for record in ledger_records(ledger_dir, catalog_dir, papers):
        view = RecordView(record, data.links_for(record))
        for number, page in enumerate(view_html_pages(view), start=1):
            queue.add(f"{PAPERS}/{page_file(view.links.stem, number)}", page)
        data.add(view)
        as_of = max(as_of, str(record.get("as_of") or ""))
    queue.flush()
    return data, as_of, queue.names


def remove_stale(out: Path, written: set[str]) -> int:
    """Remove the pages of papers and works an earlier build wrote and this one did not."""
    removed = 0
    for folder in (PAPERS, WORKS):
        for path in (out / folder).glob("*.html"):
            if f"{folder}/{path.name}" not in written:
                path.unlink()
                removed += 1
    return removed
