"""A record's page files as a record write makes them: the bytes of ``pages.render_ledger_text``
and ``pages.render_html_pages`` (the pages ``citeledger record`` prints), each file in UTF-8.

The pages' own code is the write's path, so the files a write makes and the pages ``citeledger
record`` prints cannot differ (about 1-2 ms a record of 40 references: ``benchmarks/bench_records.py``,
"serialise"). ``PageCache`` is the writer's handle for what its records share."""
from __future__ import annotations

from typing import Any, Mapping

from citeledger.display import visible_utf8
from citeledger.records.render import pages as rp
from citeledger.records.render.names import page_suffix


class PageCache:
    """What a writer's records share for their pages: the ``PageLinks`` of their cited works'
    pages, when the writer knows which cited works are papers of the ledger (``work_pages``: work
    id -> the ledger paper id whose record is that work's page)."""

    __slots__ = ("work_pages",)

    def __init__(self, work_pages: Mapping[str, str] | None = None) -> None:
        self.work_pages = dict(work_pages or {})

    def links(self, record: Mapping[str, Any]) -> rp.PageLinks:
        stem = rp.record_file_stem(str(record["paper"]["id"]))
        pages = self.work_pages

        def work_href(resolved: Mapping[str, Any]) -> str | None:
            paper = pages.get(str(resolved.get("work_id")))
            return rp.sibling_page(paper) if paper is not None and paper != record["paper"]["id"] else None

        return rp.PageLinks(stem, work_href=work_href if pages else None)


def render_page_files(record: Mapping[str, Any], cache: PageCache | None = None) -> tuple[bytes, bytes]:
    """The record's text page and first HTML page in UTF-8 (controls made visible)."""
    links = (cache or PageCache()).links(record)
    return visible_utf8(rp.render_ledger_text(record, links)), visible_utf8(rp.render_ledger_html(record, links))


def render_all_files(record: Mapping[str, Any], cache: PageCache | None = None) -> dict[str, bytes]:
    """Every page file of the record by suffix: ``txt``, ``html`` and, for a long record,
    ``page-2.html``, ... (``names.page_suffix``)."""
    links = (cache or PageCache()).links(record)
    files = {"txt": visible_utf8(rp.render_ledger_text(record, links))}
    for number, page in enumerate(rp.render_html_pages(record, links), start=1):
        files[page_suffix(number)] = visible_utf8(page)
    return files
