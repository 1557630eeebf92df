"""A PDF paper's own title from pdftotext's ``-bbox-layout`` XHTML (``read.layout_xhtml``): the
document's Title metadata (the XHTML's ``<title>``) when it reads as a title, else the lines set in
the largest type at the top of the first page (``papers.titles``). Pure functions: no I/O."""
from __future__ import annotations

import html
import re

from papers.pdf.words import Line, parse_pages
from papers.titles import PDF_FIRST_PAGE, PDF_METADATA, first_page_title, metadata_title

_HEAD_TITLE = re.compile(rb"<title>(.*?)</title>", re.DOTALL)


def pdf_title(xhtml: bytes) -> tuple[str, str] | None:
    """(title, where it was read) of the PDF whose layout XHTML is ``xhtml``, None without one."""
    head = _HEAD_TITLE.search(xhtml[:16384])
    meta = metadata_title(html.unescape(head.group(1).decode("utf-8", "replace"))) if head else None
    if meta:
        return meta, PDF_METADATA
    first = next(parse_pages(xhtml), None)
    if first is None:
        return None
    found = first_page_title(((line.x0, line.y0, line.x1, line.y1, line.text, _median_size(line))
                              for line in first.lines), first.width)
    return (found, PDF_FIRST_PAGE) if found else None


def _median_size(line: Line) -> float:
    """The type size of a line: the median height of its words (a superscript mark does not count)."""
    sizes = sorted(w.height for w in line.words if w.height)
    return sizes[len(sizes) // 2] if sizes else line.y1 - line.y0
