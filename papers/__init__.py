"""A paper in, its references out: arXiv e-prints (``.tar.gz``, ``.tar``, one gzipped ``.tex``),
``.tex`` with inline ``thebibliography``, ``.bbl``, ``.bib`` or a folder of them, read in memory
within limits. Plain Python: nothing from ``citeledger``, ``flows`` or Prefect; writes no file.

The names below are loaded on first use: the settings read ``papers.model`` for every command,
and a command that reads no paper must not pay for the LaTeX and archive readers."""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from papers.model import ExtractedReference, PaperLimits, PaperReferences, PaperReject
    from papers.names import citing_paper_from_name
    from papers.reader import read_paper, read_tree

_HOMES = {"ExtractedReference": "papers.model", "PaperLimits": "papers.model", "PaperReferences": "papers.model",
          "PaperReject": "papers.model", "citing_paper_from_name": "papers.names", "read_paper": "papers.reader",
          "read_tree": "papers.reader"}
__all__ = ["ExtractedReference", "PaperLimits", "PaperReferences", "PaperReject", "citing_paper_from_name",
           "read_paper", "read_tree"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'papers' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
