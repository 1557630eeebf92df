"""``citeledger site OUT``: the static site written to ``OUT`` (``index.html``, ``notices.html``,
``papers/<stem>.html`` and its later pages, ``works/<stem>.html``), streaming: each record is read,
its pages made and queued, and the queue written in batches through ``storage.atomic`` (each file
whole or absent; no disk sync: the site is made again from the ledger at will); only the index
rows and the cited works' citing references are kept to the end. Files of an earlier build that
this one did not write are removed from ``papers/`` and ``works/``."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from citeledger.display import visible_utf8
from citeledger.records.names import page_file, record_file_stem
from citeledger.records.pages import RecordView, view_html_pages
from citeledger.site.collect import PAPERS, WORKS, SiteData, ledger_records
from citeledger.site.site_pages import index_page, notices_page, work_pages
from citeledger.storage.atomic import atomic_write_files

FILES_PER_BATCH = 2000  # files written with one disk sync


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


def build_site(out: str | Path, ledger_dir: str | Path, catalog_dir: str | Path) -> SiteReport:
    """Write the site of the ledger to ``out``; returns what it wrote and how long it took."""
    started = time.perf_counter()
    out = Path(out)
    for folder in (out, out / PAPERS, out / WORKS):
        folder.mkdir(parents=True, exist_ok=True)
    data, queue = SiteData(ledger_dir, catalog_dir), _Queue(out)
    as_of = ""
    for record in ledger_records(ledger_dir, catalog_dir):
        view = RecordView(record, data.links_for(record))
        for number, page in enumerate(view_html_pages(view), start=1):
            queue.add(f"{PAPERS}/{page_file(view.links.stem, number)}", page)
        data.add(view)
        as_of = max(as_of, str(record.get("as_of") or ""))
    for work_id, work in data.works.items():
        stem = record_file_stem(work_id)
        for number, page in enumerate(work_pages(stem, work), start=1):
            queue.add(f"{WORKS}/{page_file(stem, number)}", page)
    queue.add("notices.html", notices_page(data.noticed))
    queue.add("index.html", index_page(data.rows, as_of, len(data.noticed)))
    queue.flush()
    remove_stale(out, queue.names)
    return SiteReport(len(data.rows), len(data.works), len(queue.names), time.perf_counter() - started)


def remove_stale(out: Path, written: set[str]) -> int:
    """Remove the pages of papers and works an earlier build wrote and this one did not."""
    removed = 0
    for folder in (PAPERS, WORKS):
        for path in (out / folder).glob("*.html"):
            if f"{folder}/{path.name}" not in written:
                path.unlink()
                removed += 1
    return removed
