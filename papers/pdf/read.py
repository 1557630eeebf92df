"""A PDF paper's references without a GROBID service: PDF bytes in, reference strings out
(``source`` ``pdf_text``).

The text and every word's position come from poppler's ``pdftotext -bbox-layout`` (Debian
package ``poppler-utils``), run as a separate process that reads the PDF on its standard input, so a
hostile PDF meets five bounds, each a reject, never a hang: its size (``max_pdf_bytes``), the
pages read (``max_pages``, passed to pdftotext as ``-l``), the wall-clock time of the extraction
(``seconds``: the process is killed), the bytes of text it may write (``max_layout_bytes``: read
in chunks, the process killed past it) and the memory it may take (``max_memory_bytes``: its
address space, ``RLIMIT_AS``, so a page whose form objects draw each other 26 levels deep stops
the process at the bound instead of filling the machine's memory). On Linux the process also
dies with the one that started it (``setpriv --pdeathsig KILL``, util-linux): a run killed with
SIGKILL, which can clean nothing up, leaves no pdftotext behind. The reading order, the
reference section and its entries are rebuilt from the word boxes (``pdf_layout``,
``pdf_refs``). Writes no file; nothing leaves the machine."""
from __future__ import annotations

import os
import re
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO

from papers.names import citing_paper_from_name
from papers.paper_model import ExtractedReference, MiB, PaperReferences, PaperReject
from papers.pdf.entries import reference_strings
from papers.pdf.layout import reading_order
from papers.pdf.title import pdf_title

SOURCE = "pdf_text"
KIND = "pdf"
PDFTOTEXT = "pdftotext"
# A paper is a few MB; scanned theses and figure-heavy papers reach tens: past this it is a
# reject before any process starts.
MAX_PDF_BYTES = 128 * MiB
# Journal articles and conference papers end well before 100 pages, long reviews and their
# reference lists around 150; a PDF of thousands of pages (a book, a hostile page tree) is read
# no further, so the work is bounded by pages whatever the file claims.
MAX_PAGES = 150
# pdftotext reads a typical paper in well under a second on one core; a minute leaves room for
# a slow shared machine and cuts off a PDF built to make the text extraction run forever.
EXTRACT_SECONDS = 60.0
# The bbox-layout XHTML of a page is ~80 KB (one element per word: 8 two-column pages of an ACL
# paper make 666 KB), ~12 MB for MAX_PAGES such pages; 32 MiB leaves room for denser pages and
# stops a page of millions of invisible glyphs from filling memory (the parsed lines take a few
# times the XHTML's size).
MAX_LAYOUT_BYTES = 32 * MiB
# pdftotext reads a typical paper within 20 MB of memory (10-18 MB resident measured on the
# fixture PDFs, all within an address space of 48 MiB): 256 MiB leaves room for a long thesis with heavy
# fonts and stops a PDF that makes poppler's text pages grow without end (a 6 KB PDF of nested
# form objects takes 30 MB more each second until the machine's memory is gone).
MAX_MEMORY_BYTES = 256 * MiB
_CHUNK = 1 << 16
_ERRORS_KEPT = 4096  # bytes of pdftotext's error output kept to tell why it stopped
_OUT_OF_MEMORY = (b"out of memory", b"bad_alloc")  # poppler's gmem message, C++'s allocation failure
# pdftotext's exit statuses (poppler's man page)
EXIT_REASONS = {1: "error opening the PDF: damaged or not a PDF", 3: "the PDF's permissions forbid copying its text",
                99: "error reading the PDF"}
# the trailer's (or cross-reference stream's) /Encrypt entry, which is never itself encrypted
_ENCRYPT = re.compile(rb"/Encrypt\s*(?:\d+\s+\d+\s+R|<<)")


@dataclass(frozen=True, slots=True)
class PdfTextLimits:
    """The bounds of one extraction (see the module constants for each one's reason)."""

    max_pdf_bytes: int = MAX_PDF_BYTES
    max_pages: int = MAX_PAGES
    seconds: float = EXTRACT_SECONDS
    max_layout_bytes: int = MAX_LAYOUT_BYTES
    max_memory_bytes: int = MAX_MEMORY_BYTES


class PdfTextProblem(Exception):
    """The PDF could not be read: ``code`` (a reject code) and a reason for people."""

    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code, self.reason = code, reason


def pdftotext_path(binary: str = PDFTOTEXT) -> str | None:
    """Where the pdftotext program is, or None when poppler-utils is not installed."""
    return shutil.which(binary)


def bounded_command(command: list[str]) -> list[str]:
    """``command`` run so that it dies with this process: on Linux under util-linux's ``setpriv
    --pdeathsig KILL`` (the kernel kills it once the thread that started it is gone, whatever
    killed that; the signal setting survives the exec into the program), elsewhere as it is."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def limit_memory(pid: int, max_bytes: int) -> None:
    """Bound a started process's address space (``RLIMIT_AS``; kept across its exec): past it an
    allocation fails and poppler stops the process. Set from here rather than in the child
    before its exec, which is unsafe in a program with threads; the process has read none of
    its input yet, so it has taken next to nothing by then. No-op where ``prlimit`` is missing."""
    prlimit = getattr(resource, "prlimit", None)
    if prlimit is not None:
        try:
            prlimit(pid, resource.RLIMIT_AS, (max_bytes, max_bytes))
        except (ProcessLookupError, PermissionError):  # already gone: its exit status tells
            pass


def layout_xhtml(data: bytes, limits: PdfTextLimits | None = None, binary: str = PDFTOTEXT) -> bytes:
    """pdftotext's ``-bbox-layout`` XHTML of the PDF's first ``max_pages`` pages, within the
    limits; raises ``PdfTextProblem`` (``too_large``, ``pdf_text_unavailable``,
    ``pdf_unreadable``, ``timeout``) otherwise. The PDF goes in on standard input, so no file is
    written."""
    limits = limits or PdfTextLimits()
    if len(data) > limits.max_pdf_bytes:
        raise PdfTextProblem("too_large", f"a PDF of {len(data):,} bytes exceeds the limit of "
                             f"{limits.max_pdf_bytes:,} bytes")
    program = pdftotext_path(binary)
    if program is None:
        raise PdfTextProblem("pdf_text_unavailable", f"{binary} (poppler-utils) is not installed, so this PDF "
                             "was not read: install poppler-utils or configure a GROBID service")
    command = [program, "-q", "-bbox-layout", "-enc", "UTF-8", "-f", "1", "-l", str(limits.max_pages), "-", "-"]
    proc = subprocess.Popen(bounded_command(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    limit_memory(proc.pid, limits.max_memory_bytes)
    errors = bytearray()
    try:
        out = _exchange(proc, data, limits, errors)
        code = proc.wait(timeout=max(0.1, limits.seconds))
        _read_rest(proc.stderr, errors)
    except subprocess.TimeoutExpired:
        raise PdfTextProblem("timeout", f"pdftotext did not end within {limits.seconds:g} s") from None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()
    if code != 0 and any(sign in errors.lower() for sign in _OUT_OF_MEMORY):
        raise PdfTextProblem("too_large", f"reading the PDF's text needs more than the memory bound of "
                             f"{limits.max_memory_bytes // MiB:,} MiB")
    if code < 0:
        raise PdfTextProblem("pdf_unreadable", f"pdftotext was stopped by signal {signal.Signals(-code).name} "
                             "while reading this PDF")
    if code == 1 and _ENCRYPT.search(data):
        raise PdfTextProblem("pdf_unreadable", "the PDF is encrypted: it opens only with its password, "
                             "so its text cannot be read")
    if code != 0:
        why = EXIT_REASONS.get(code, f"exit status {code}")
        raise PdfTextProblem("pdf_unreadable", f"pdftotext could not read this PDF ({why})")
    return out


def _exchange(proc: subprocess.Popen[bytes], data: bytes, limits: PdfTextLimits, errors: bytearray) -> bytes:
    """Write ``data`` to the process and read its output, both in chunks, until the output ends
    (the first ``_ERRORS_KEPT`` bytes of its error output into ``errors``, the rest read and
    dropped); past ``seconds`` or ``max_layout_bytes`` a ``PdfTextProblem`` (the caller kills
    the process)."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + limits.seconds
    chunks: list[bytes] = []
    total, sent = 0, 0
    view = memoryview(data)
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stdin, selectors.EVENT_WRITE)
        selector.register(proc.stderr, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PdfTextProblem("timeout", f"reading the PDF's text took longer than {limits.seconds:g} s")
            for key, _ in selector.select(left):
                if key.fileobj is proc.stdin:
                    sent += _send(proc.stdin, view[sent:sent + _CHUNK])
                    if sent >= len(data):
                        selector.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                if key.fileobj is proc.stderr:
                    said = os.read(proc.stderr.fileno(), _CHUNK)
                    if not said:
                        selector.unregister(proc.stderr)
                    errors += said[:max(0, _ERRORS_KEPT - len(errors))]
                    continue
                chunk = os.read(proc.stdout.fileno(), _CHUNK)
                if not chunk:
                    return b"".join(chunks)
                total += len(chunk)
                if total > limits.max_layout_bytes:
                    raise PdfTextProblem("too_large", f"the PDF's text passes {limits.max_layout_bytes:,} bytes "
                                         f"in its first {limits.max_pages} pages")
                chunks.append(chunk)


def _read_rest(pipe: IO[bytes] | None, errors: bytearray) -> None:
    """What is left of an ended process's error output (the part of it written just before its
    standard output closed), up to ``_ERRORS_KEPT``; never waits."""
    if pipe is None or pipe.closed:
        return
    os.set_blocking(pipe.fileno(), False)
    try:
        errors += (os.read(pipe.fileno(), _ERRORS_KEPT) or b"")[:max(0, _ERRORS_KEPT - len(errors))]
    except (BlockingIOError, OSError):
        pass


def _send(pipe: IO[bytes], chunk: memoryview) -> int:
    """Bytes written to the process's input; a process that stopped reading takes them all (it
    answers by its exit status)."""
    try:
        return os.write(pipe.fileno(), chunk)
    except BrokenPipeError:
        return len(chunk)


def pdf_reference_strings(data: bytes, limits: PdfTextLimits | None = None, binary: str = PDFTOTEXT) -> list[str]:
    """The PDF's reference strings in the list's order (empty when no reference section is
    found); raises ``PdfTextProblem`` when the PDF cannot be read within the limits."""
    return reference_strings(reading_order(layout_xhtml(data, limits, binary)))


def read_pdf_text(name: str, data: bytes, citing_paper: str | None = None,
                  limits: PdfTextLimits | None = None, binary: str = PDFTOTEXT) -> PaperReferences:
    """One PDF paper read locally: its references in order, ``source`` ``pdf_text``, ``kind``
    ``pdf``. Never raises for a bad PDF: that is a reject with the reason."""
    result = PaperReferences(name, citing_paper, KIND)
    if not citing_paper:
        result.citing_paper, why = citing_paper_from_name(name)
        if result.citing_paper is None:
            result.rejects.append(PaperReject(name, None, "no_citing_paper", why))
            return result  # the PDF is not read when its references could go nowhere
    try:
        xhtml = layout_xhtml(data, limits, binary)
        strings = reference_strings(reading_order(xhtml))
    except PdfTextProblem as problem:
        result.rejects.append(PaperReject(name, None, problem.code, problem.reason))
        return result
    result.title, result.title_source = pdf_title(xhtml) or (None, "")
    result.references = [ExtractedReference(order, raw, SOURCE, None, KIND) for order, raw in enumerate(strings, 1)]
    if not result.references:
        result.rejects.append(PaperReject(name, None, "no_bibliography", "no reference list was found in the "
                                          "PDF's text (a scanned PDF has no text; a GROBID service may read it)"))
    result.rule = "pdf_text: poppler pdftotext -bbox-layout, the reference section rebuilt from word positions"
    return result
