"""One input read into references and rejects, whatever its kind: rows (JSON Lines, CSV, Parquet),
a paper or a folder of papers, arXiv ids fetched. The row readers are in ``rows``, the papers in
``papers``, the arXiv ids in ``arxiv_ids``."""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Iterator

from citeledger.inputs.arxiv_ids import read_fetched_paper
from citeledger.inputs.files import (
    ARXIV_ID_KIND,
    ARXIV_IDS_KIND,
    NOT_READABLE_KIND,
    detect_kind,
    not_readable_reason,
)
from citeledger.inputs.papers import FOLDER_KIND, PAPER_KIND, REFUSED_KIND, refusal
from citeledger.inputs.rows import InputLimits, InputReject, read_csv, read_jsonl, read_paper_rows, read_parquet
from resolvers.errors import InputTooLarge
from resolvers.model import Reference


def read_references(path: str | Path, limits: InputLimits | None = None, citing_paper: str | None = None,
                    name: str | None = None, kind: str | None = None) -> Iterator[Reference | InputReject]:
    """Every row of one input file, as a reference or a reject. ``name`` is the input as the user
    gave it (rejects name it), ``path`` what is read (for a pipe, its spooled copy)."""
    path = Path(path)
    limits = limits or InputLimits()
    name = name or str(path)
    if kind == REFUSED_KIND:  # an entry of an input folder that is not a regular file or a folder
        why = refusal(path) or "not read: not a regular file or a folder when the run was planned"
        yield InputReject(name, None, None, why)
        return
    if kind == ARXIV_ID_KIND:
        yield from read_fetched_paper(path, limits, citing_paper, name, kind)
        return
    if kind == FOLDER_KIND or (kind is None and path.is_dir()):
        yield from read_paper_rows(path, limits, citing_paper, name, FOLDER_KIND)
        return
    if not path.exists() or path.is_dir():
        yield InputReject(name, None, None, "is a directory" if path.is_dir() else "no such file")
        return
    size = path.stat().st_size
    if limits.max_file_bytes is not None and size > limits.max_file_bytes:
        yield InputReject(name, None, None, f"file of {size:,} bytes exceeds the limit of "
                                            f"{limits.max_file_bytes:,} (max_file_bytes)")
        return
    kind = kind or detect_kind(path, name)
    if kind == ARXIV_IDS_KIND:
        yield from read_fetched_paper(path, limits, citing_paper, name, kind)
        return
    if kind == PAPER_KIND:
        yield from read_paper_rows(path, limits, citing_paper, name, kind)
        return
    if kind == NOT_READABLE_KIND:
        yield InputReject(name, None, None, not_readable_reason(name))
        return
    try:
        if kind == "jsonl":
            yield from read_jsonl(path, limits, name)
        elif kind == "csv":
            yield from read_csv(path, limits, name)
        else:
            yield from read_parquet(path, limits, name)
    except InputTooLarge as exc:
        yield InputReject(name, None, None, str(exc))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        yield InputReject(name, None, None, f"file could not be read to the end: {exc}")
