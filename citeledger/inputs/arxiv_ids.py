"""Inputs that are papers fetched from arXiv: an ``arXiv:ID``, a file of ``arXiv:ID`` lines. Each
paper's references become rows (``source`` what they came from, the source's fields kept on the
reference); what could not be read, a reject with its reason, named as any paper input's
(``inputs.paper_input_rows``). (A PDF file is a paper input: ``inputs.papers.read_paper_input``
sends it to GROBID.)"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from citeledger.inputs.files import ARXIV_ID_KIND, ARXIV_IDS_KIND, open_binary
from citeledger.inputs.rows import InputLimits, InputReject, excerpt_of, iter_bounded_lines, paper_input_rows
from resolvers.errors import InputTooLarge
from resolvers.model import Reference

MAX_ID_LINE_BYTES = 4096  # an arXiv:ID line is short; a longer one is not an id


def read_fetched_paper(path: Path, limits: InputLimits, citing_paper: str | None, name: str,
                       kind: str) -> Iterator[Reference | InputReject]:
    """An ``arXiv:ID`` paper (fetched) or a file of them: references in order, the paper's rejects
    with their reasons (``paper_fetch``)."""
    if kind == ARXIV_IDS_KIND:
        yield from read_arxiv_id_file(path, limits, name)
        return
    from citeledger.inputs.arxiv_fetch import arxiv_input, read_arxiv_paper

    yield from paper_input_rows(read_arxiv_paper(name, arxiv_input(name) or name, limits.papers), limits)


def read_arxiv_id_file(path: Path, limits: InputLimits, name: str) -> Iterator[Reference | InputReject]:
    """A file of ``arXiv:ID`` lines (gzipped or not, a UTF-8 byte order mark allowed, as every
    input): each paper fetched and read as an ``arXiv:ID`` input; a line that is not one is a
    reject naming its line."""
    lines: list[str | InputReject] = []
    try:  # the lines first (a short file): a fault of fetching a paper is not the file's
        lines.extend(_id_lines(path, limits, name))
    except InputTooLarge as exc:
        lines.append(InputReject(name, None, None, str(exc)))
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        lines.append(InputReject(name, None, None, f"file could not be read to the end: {exc}"))
    for line in lines:
        if isinstance(line, InputReject):
            yield line
        else:
            yield from read_fetched_paper(path, limits, None, line, ARXIV_ID_KIND)


def _id_lines(path: Path, limits: InputLimits, name: str) -> Iterator[str | InputReject]:
    """Each line's ``arXiv:ID`` (the id checked) or its reject."""
    from citeledger.inputs.arxiv_fetch import arxiv_input

    with open_binary(path, limits.max_file_bytes) as fh:
        for lineno, raw in iter_bounded_lines(fh, MAX_ID_LINE_BYTES):
            if raw is None:
                yield InputReject(name, lineno, None, f"line longer than {MAX_ID_LINE_BYTES:,} bytes: "
                                  "not an arXiv:ID line")
                continue
            if lineno == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark, as CSV and JSONL strip it
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                yield InputReject(name, lineno, None, f"invalid UTF-8 at byte {exc.start}", excerpt_of(raw))
                continue
            if not line:
                continue
            try:
                arxiv_id = arxiv_input(line)
            except ValueError as exc:
                yield InputReject(name, lineno, None, str(exc), excerpt_of(line))
                continue
            yield (f"arXiv:{arxiv_id}" if arxiv_id is not None else
                   InputReject(name, lineno, None, "not an arXiv:ID line", excerpt_of(line)))
