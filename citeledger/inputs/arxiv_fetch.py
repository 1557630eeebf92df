"""``arXiv:ID`` inputs: the paper's e-print fetched from arXiv (with ``--remote``), read with the
papers package, and its PDF through GROBID when the source holds no bibliography.

Everything fetched is kept under ``<ledger>/_cache/arxiv/`` (``remote_state.PaperCache``), so a
re-run, a resumed run and the run's second read of its inputs ask arXiv nothing. A fetch that
fails is the paper's reject (``unavailable: ...``, asked again on the next run), never the run's
end; arXiv saying it has no such paper is a reject too.
"""
from __future__ import annotations

import re

from citeledger.inputs.pdf_papers import UNAVAILABLE, PdfService, current_service, read_pdf
from papers.paper_model import PaperLimits, PaperReferences, PaperReject
from resolvers.errors import InputTooLarge, RemoteUnavailable
from resolvers.remote.arxiv import split_arxiv_id
from resolvers.remote.eprint import ArxivFiles

_ARXIV_INPUT = re.compile(r"^arxiv:\s*(\S+)$", re.I)


def arxiv_input(given: str) -> str | None:
    """The id of an ``arXiv:ID`` input (version kept when given), None for anything else;
    ``arXiv:`` followed by a malformed id is a ``ValueError`` saying so."""
    m = _ARXIV_INPUT.match(given.strip())
    if not m:
        return None
    split = split_arxiv_id(m.group(1))
    if split is None:
        raise ValueError(f"{given}: not a well-formed arXiv id (like arXiv:2501.00254 or arXiv:hep-th/9901001)")
    return f"{split[0]}v{split[1]}" if split[1] else split[0]


def _fetched(service: PdfService, files: ArxivFiles | None, arxiv_id: str, what: str) -> bytes | None:
    """The cached file, else fetched and kept; None when arXiv has none."""
    suffix = "." + what
    if service.cache is not None and (kept := service.cache.get("arxiv", arxiv_id, suffix)) is not None:
        return kept
    if files is None:
        raise RemoteUnavailable("arxiv", "remote access is off (pass --remote to fetch arXiv papers)")
    data = files.eprint(arxiv_id) if what == "eprint" else files.pdf(arxiv_id)
    if data is not None and service.cache is not None:
        service.cache.put("arxiv", arxiv_id, suffix, data)
    return data


def read_arxiv_paper(given: str, arxiv_id: str, limits: PaperLimits | None = None,
                     service: PdfService | None = None, files: ArxivFiles | None = None) -> PaperReferences:
    """The references of arXiv paper ``arxiv_id``: its e-print's bibliography, else its PDF's
    through GROBID. The citing paper is the id without its version."""
    from papers.reader import read_paper  # the papers package reads the e-print

    service = service or current_service()
    files = files if files is not None else service.arxiv
    split = split_arxiv_id(arxiv_id)
    citing = split[0] if split else arxiv_id
    try:
        eprint = _fetched(service, files, arxiv_id, "eprint")
        if eprint is None:
            return _rejected(given, citing, "no_such_paper", f"arXiv has no paper {arxiv_id}")
        result = read_paper(given, eprint, limits, citing)
        if result.has_bibliography:
            return result
        pdf = eprint if result.form == "pdf" else _fetched(service, files, arxiv_id, "pdf")
        if pdf is None:
            return _rejected(given, citing, "no_bibliography", f"arXiv's source of {arxiv_id} holds no "
                             "bibliography and arXiv has no PDF of it")
    except RemoteUnavailable as exc:
        return _rejected(given, citing, UNAVAILABLE, f"arXiv could not answer ({exc.why}); "
                         "the paper is fetched again on the next run")
    except InputTooLarge as exc:
        return _rejected(given, citing, "too_large", str(exc))
    pdf_result = read_pdf(given, pdf, citing, service)
    pdf_result.rule = f"the e-print holds no bibliography ({result.form}); the PDF through GROBID"
    return pdf_result


def _rejected(given: str, citing: str, code: str, reason: str) -> PaperReferences:
    result = PaperReferences(given, citing, "arxiv")
    result.rejects.append(PaperReject(given, None, code, reason))
    return result
