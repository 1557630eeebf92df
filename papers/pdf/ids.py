"""A PDF's own id, so a PDF is a paper whatever its file is called: the arXiv id or DOI the PDF
carries in its metadata (document information and XMP, through poppler's ``pdfinfo``), else on its
first page (arXiv's stamp in the margin, ``arXiv:2501.00254v1 [cs.LG] 1 Jan 2025``, or the one DOI
printed there); else its file name: an arXiv-style name's id, or the name itself.

An arXiv id wins over a DOI (an e-print's id is its arXiv id too). A DOI counts only when the
metadata, or the first page, holds exactly one: a first page that prints several (a cited work's
in a footnote) says nothing certain. Bounded as the reference list is read: one page through
``read.layout_xhtml``, ``pdfinfo`` killed past its time or output bounds. Writes no file."""
from __future__ import annotations

import html
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass

from papers.names import citing_paper_from_name, strip_suffix
from papers.pdf.read import PdfTextLimits, PdfTextProblem, layout_xhtml
from resolvers.identifiers.extract import check_arxiv_id, extract_identifiers

PDFINFO = "pdfinfo"
INFO_SECONDS = 20.0
INFO_BYTES = 1 << 20  # the document information and XMP of a paper are a few KB
FIRST_PAGE = PdfTextLimits(max_pages=1, seconds=20.0, max_layout_bytes=4 << 20)
# arXiv's stamp: the id, its version, the primary category in brackets
_STAMP = re.compile(r"arXiv:\s?(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?\s*\[[A-Za-z.-]+\]")
_PLACEHOLDER = re.compile(r"/(?:tbd|tba|x+|0+)$", re.I)  # a preprint's DOI still to come ("10.1146/tbd")
_WORD = re.compile(r"<word[^>]*>(.*?)</word>|</line>", re.S)


@dataclass(frozen=True)
class PdfId:
    """The citing paper's id and where it was read: ``metadata``, ``first page`` or ``file name``."""

    citing_paper: str
    found_in: str


def pdf_id(name: str, data: bytes) -> PdfId:
    """The id of the paper in ``data`` (see the module's docstring); never fails: a PDF that cannot
    be read for it is named by its file."""
    for found_in, text in (("metadata", lambda: metadata_text(data)), ("first page", lambda: first_page_text(data))):
        ident = own_id(text(), stamp_only=found_in == "first page")
        if ident is not None:
            return PdfId(ident, found_in)
    by_name, _ = citing_paper_from_name(name)
    base = re.split(r"[\\/]", name.rstrip("/\\"))[-1]
    return PdfId(by_name or strip_suffix(base) or base, "file name")


def own_id(text: str, stamp_only: bool = False) -> str | None:
    """The paper's own id in ``text``: an arXiv id (on a first page, only arXiv's stamp counts), else
    the one DOI it holds; None when it holds none, or several DOIs."""
    stamp = _STAMP.search(text)
    if stamp is not None and (ident := check_arxiv_id(stamp.group(1))[0]) is not None:
        return ident
    found = extract_identifiers(text)
    if not stamp_only and len(set(found.arxiv_ids)) == 1:
        return found.arxiv_ids[0]
    dois = {d for d in found.dois if not _PLACEHOLDER.search(d)}
    return dois.pop() if len(dois) == 1 else None


def first_page_text(data: bytes) -> str:
    """The words of the first page, a line a line ("" when it cannot be read)."""
    try:
        xhtml = layout_xhtml(data, FIRST_PAGE).decode("utf-8", "replace")
    except PdfTextProblem:
        return ""
    return "".join("\n" if m.group(1) is None else html.unescape(m.group(1)) + " " for m in _WORD.finditer(xhtml))


def metadata_text(data: bytes, binary: str = PDFINFO) -> str:
    """The document information and the XMP metadata as ``pdfinfo`` prints them ("" without poppler)."""
    program = shutil.which(binary)
    if program is None or len(data) > FIRST_PAGE.max_pdf_bytes:
        return ""
    return "\n".join(_bounded_output([program, *flags, "-"], data) for flags in ([], ["-meta"]))


def _bounded_output(command: list[str], data: bytes) -> str:
    """What ``command`` prints for ``data`` on its input, at most ``INFO_BYTES``, within ``INFO_SECONDS``
    (the process is killed past either); "" when it fails."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    timer = threading.Timer(INFO_SECONDS, proc.kill)
    timer.start()

    def feed() -> None:
        try:
            assert proc.stdin is not None
            proc.stdin.write(data)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        assert proc.stdout is not None
        out = proc.stdout.read(INFO_BYTES)
    finally:
        proc.kill()
        proc.wait()
        timer.cancel()
        writer.join(1.0)
        if proc.stdout is not None:
            proc.stdout.close()
    return out.decode("utf-8", "replace") if proc.returncode in (0, -9) and out else ""
