"""Inputs that are papers fetched from arXiv: an ``arXiv:ID``, a file of ``arXiv:ID`` lines. Each
paper's references become rows (``source`` what they came from, the source's fields kept on the
reference); what could not be read, a reject with its reason. (A PDF file is a paper input:
``paper_inputs.read_paper_input`` sends it to GROBID.)"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterator

from resolvers.model import Reference

from .input_files import ARXIV_ID_KIND, ARXIV_IDS_KIND
from .inputs import InputLimits, InputReject, _excerpt, validate_row


def read_fetched_paper(path: Path, limits: InputLimits, citing_paper: str | None, name: str,
                       kind: str) -> Iterator[Reference | InputReject]:
    """An ``arXiv:ID`` paper (fetched) or a file of them: references in order, the paper's rejects
    with their reasons (``paper_fetch``)."""
    if kind == ARXIV_IDS_KIND:
        yield from read_arxiv_id_file(path, limits, name)
        return
    from .paper_fetch import arxiv_input, read_arxiv_paper

    yield from paper_rows(read_arxiv_paper(name, arxiv_input(name) or name, limits.papers), name, limits)


def paper_rows(result: Any, name: str, limits: InputLimits) -> Iterator[Reference | InputReject]:
    """One paper read (``papers.model.PaperReferences`` or ``pdf_papers.PdfPaper``) as rows."""
    for reject in result.rejects:
        reason = reject.reason if reject.reason.startswith(reject.code) else f"{reject.code}: {reject.reason}"
        yield InputReject(name, reject.line, reject.member or None, reason)
    for ref in result.references:
        row = validate_row({"citing_paper": result.citing_paper, "reference_index": ref.order, "raw": ref.raw,
                            "source": ref.source}, name, ref.line, limits)
        yield dataclasses.replace(row, fields=tuple(sorted(ref.fields.items()))) \
            if isinstance(row, Reference) and ref.fields else row


def read_arxiv_id_file(path: Path, limits: InputLimits, name: str) -> Iterator[Reference | InputReject]:
    """A file of ``arXiv:ID`` lines: each paper fetched and read as an ``arXiv:ID`` input; a line
    that is not one is a reject naming its line."""
    from .paper_fetch import arxiv_input

    text = path.read_bytes()[: 16 << 20].decode("utf-8", "replace")
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            arxiv_id = arxiv_input(line)
        except ValueError as exc:
            yield InputReject(name, lineno, None, str(exc), _excerpt(line))
            continue
        if arxiv_id is None:
            yield InputReject(name, lineno, None, "not an arXiv:ID line", _excerpt(line))
            continue
        yield from read_fetched_paper(path, limits, None, f"arXiv:{arxiv_id}", ARXIV_ID_KIND)
