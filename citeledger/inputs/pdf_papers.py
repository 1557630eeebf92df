"""A PDF paper's references, through the GROBID service of the configuration (or ``--grobid URL``).

Off unless configured: without a GROBID URL a PDF is a reject that says so, and no byte of it
leaves the machine. GROBID's answer (the TEI) is kept under ``<ledger>/_cache/grobid/`` by the
PDF's SHA-256, so reading the inputs twice (duplicates first, then rows), resuming a run or
running again asks GROBID once. A PDF GROBID cannot read is a reject with GROBID's reason; a
GROBID that cannot answer (stopped, busy past the retries, timing out) makes the paper a reject
whose reason starts ``unavailable:``; the next run asks again (nothing was cached), and the
nightly inbox keeps the file until then.
"""
from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from citeledger.app_errors import GrobidNotConfigured
from citeledger.config import Config, load_config
from citeledger.storage.places import LedgerDir
from citeledger.storage.remote_state import PaperCache, paper_cache
from papers.paper_model import ExtractedReference, PaperReferences, PaperReject
from resolvers.errors import PdfUnreadable, RemoteUnavailable

if TYPE_CHECKING:  # GROBID's client and TEI reader (lxml) and poppler's reader load with the first PDF
    from resolvers.remote.eprint import ArxivFiles
    from resolvers.remote.grobid import GrobidClient

SOURCE = "pdf_text"
UNAVAILABLE = "unavailable"  # the reject code (and the reason's first word) of a PDF GROBID could not answer for
# reject codes that mean "not read yet", not "cannot be read" (the nightly inbox keeps such a file):
# GROBID could not answer, or the built-in reader lacks poppler's pdftotext
READ_LATER = (UNAVAILABLE, "pdf_text_unavailable")
NOT_CONFIGURED = "no GROBID service is configured (pass --grobid URL or set [endpoints] grobid)"


@dataclass
class PdfService:
    """Where PDFs go (a GROBID client, or None when none is configured) and where answers are kept."""

    client: GrobidClient | None
    cache: PaperCache | None = None
    arxiv: ArxivFiles | None = None  # arXiv's e-prints and PDFs, with --remote only
    # PDF sha256 -> why GROBID could not answer, for this block only: a run reads its inputs twice,
    # and asks once; the next run asks again
    failed: dict[str, Exception] = field(default_factory=dict)

    def tei(self, pdf: bytes, name: str) -> bytes:
        """GROBID's TEI for ``pdf``: from the cache, else asked (and kept when it answered). GROBID
        saying it cannot read the PDF is kept too (``PdfUnreadable``): it is its final word."""
        key = hashlib.sha256(pdf).hexdigest()
        if self.cache is not None and (kept := self.cache.get("grobid", key, ".tei.xml")) is not None:
            return kept  # read locally, configured or not: a resumed run reads what it read before
        if self.cache is not None and (why := self.cache.get("grobid", key, ".unreadable.txt")) is not None:
            raise PdfUnreadable(why.decode("utf-8", "replace"))
        if key in self.failed:
            raise self.failed[key]
        if self.client is None:
            raise GrobidNotConfigured(NOT_CONFIGURED)
        try:
            tei = self.client.process_references(pdf, Path(name).name or "paper.pdf")
            from resolvers.remote.grobid import parse_tei

            parse_tei(tei)  # a garbled answer raises here, before it is kept
        except PdfUnreadable as exc:
            if self.cache is not None:
                self.cache.put("grobid", key, ".unreadable.txt", str(exc).encode("utf-8"))
            raise
        except (RemoteUnavailable, ValueError) as exc:
            self.failed[key] = exc
            raise
        if self.cache is not None:
            self.cache.put("grobid", key, ".tei.xml", tei)
        return tei


_SERVICE: ContextVar[PdfService | None] = ContextVar("pdf_service", default=None)
_CLIENTS: dict[str, GrobidClient] = {}
_CLIENTS_LOCK = threading.Lock()


def grobid_client(url: str | None, config: Config | None = None) -> GrobidClient | None:
    """One client per GROBID URL per process (its concurrency limit and circuit are shared);
    ``url`` None takes the configuration's ``endpoints.grobid``; None when there is neither."""
    settings = (config or load_config()).remote_settings()
    url = url or settings.endpoints.grobid
    if not url:
        return None
    with _CLIENTS_LOCK:
        if url not in _CLIENTS:
            from resolvers.remote.grobid import build_grobid

            client = build_grobid(settings, url)
            assert client is not None
            _CLIENTS[url] = client
        return _CLIENTS[url]


def arxiv_files(config: Config | None = None) -> ArxivFiles:
    """arXiv's file client: the process's remote resolvers' (``process_cache.get_remote``), so e-print
    downloads and the arXiv lookups share one polite client: one request at a time, three
    seconds apart, the configured contact in the User-Agent, one circuit breaker."""
    from citeledger.engine.process_cache import get_remote

    files = get_remote(True, config).files
    assert files is not None  # get_remote asks for them
    return files


def forget_clients() -> None:
    """Drop the process's GROBID and arXiv clients (tests: a new configuration)."""
    from citeledger.engine.process_cache import forget_remote

    with _CLIENTS_LOCK:
        _CLIENTS.clear()
    forget_remote()


@contextmanager
def pdf_service(url: str | None, ledger_dir: LedgerDir | None, remote: bool = False,
                config: Config | None = None) -> Iterator[PdfService]:
    """Papers read inside this block: PDFs go to GROBID at ``url`` (or the configured one; with
    neither they are rejects saying GROBID is not configured), ``arXiv:ID`` papers are fetched when
    ``remote``, and what is fetched is kept under the ledger. ``config``: the loaded configuration
    (loaded here when not given)."""
    cache = paper_cache(ledger_dir) if ledger_dir is not None else None
    config = config or load_config()
    service = PdfService(grobid_client(url, config), cache, arxiv_files(config) if remote else None)
    token = _SERVICE.set(service)
    try:
        yield service
    finally:
        _SERVICE.reset(token)


def current_service() -> PdfService:
    return _SERVICE.get() or PdfService(grobid_client(None))


def read_pdf(name: str, data: bytes, citing_paper: str | None = None,
             service: PdfService | None = None) -> PaperReferences:
    """The references of one PDF, in order, ``source`` ``pdf_text``, under ``citing_paper`` or the PDF's
    own id (``papers.pdf.ids``: its arXiv id or DOI, else its file name): GROBID's when a GROBID service is
    configured (its parsed fields kept beside each raw string, BibTeX names as a ``.bib`` entry's),
    else the built-in reader's (``papers.pdf.read``: poppler's word boxes, the references section
    found and split into entries). A configured GROBID that cannot answer is not replaced by the
    built-in reader: the paper is read again by GROBID on a later run, so one PDF never gives two
    readers' references. Never raises for a PDF or a service that fails: that is a reject."""
    if not citing_paper:  # the PDF's own arXiv id or DOI, else its file's name: a PDF is never refused for its name
        from papers.pdf.ids import pdf_id

        citing_paper = pdf_id(name, data).citing_paper
    result = PaperReferences(name, citing_paper, "pdf")
    service = service or current_service()
    tei = _tei(service, data, name)
    if isinstance(tei, PaperReject) and tei.code == "grobid_not_configured":
        from papers.pdf.read import read_pdf_text

        return read_pdf_text(name, data, result.citing_paper)
    if isinstance(tei, PaperReject):
        result.rejects.append(tei)
        return result
    from resolvers.remote.grobid import parse_tei

    for order, ref in enumerate(parse_tei(tei), 1):
        result.references.append(ExtractedReference(order, ref.raw, SOURCE, None, "pdf", fields=ref.fields()))
    if not result.references:
        result.rejects.append(PaperReject(name, None, "no_bibliography", "GROBID found no reference list in this PDF"))
    result.rule = "GROBID processReferences" + ("" if service.client is None else f" at {service.client.url}")
    result.title, result.title_source = first_page_title(data) or (None, "")
    return result


def first_page_title(data: bytes) -> tuple[str, str] | None:
    """The PDF's title from its first page's text (``papers.pdf.title``), None when poppler's pdftotext
    is missing or cannot read it: GROBID's references stand without it."""
    from papers.pdf.read import PdfTextLimits, PdfTextProblem, layout_xhtml
    from papers.pdf.title import pdf_title

    try:
        return pdf_title(layout_xhtml(data, PdfTextLimits(max_pages=1)))
    except PdfTextProblem:
        return None


def _tei(service: PdfService, data: bytes, name: str) -> bytes | PaperReject:
    """GROBID's TEI, or the reject saying why there is none: the PDF's fault or the service's."""
    try:
        return service.tei(data, name)
    except GrobidNotConfigured as exc:
        return PaperReject(name, None, "grobid_not_configured", str(exc))
    except PdfUnreadable as exc:
        return PaperReject(name, None, "pdf_unreadable", str(exc))
    except RemoteUnavailable as exc:
        why = f"GROBID could not answer ({exc.why}); the paper is read again on the next run"
        return PaperReject(name, None, UNAVAILABLE, why[:500])
    except ValueError as exc:  # a 200 whose body is not GROBID's TEI
        why = f"GROBID's answer is not TEI ({exc}); the paper is read again on the next run"
        return PaperReject(name, None, UNAVAILABLE, why[:500])


def read_later(reason: str) -> bool:
    """A reject reason (``code: why``) that says the paper was not read yet, and will be."""
    return reason.split(":", 1)[0] in READ_LATER
