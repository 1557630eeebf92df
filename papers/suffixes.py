"""The file-name endings of papers, written once: what a paper's text members end with, what an
e-print archive's name ends with, and what a name may end with before its arXiv id."""
from __future__ import annotations

KINDS = {".tex": "tex", ".ltx": "tex", ".latex": "tex", ".bbl": "bbl", ".bib": "bib"}
TEXT_SUFFIXES = tuple(KINDS)  # the members of a source tree that are read
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".gz")  # longest first: ``.tar.gz`` before ``.gz``
PAPER_SUFFIXES = (*ARCHIVE_SUFFIXES, *TEXT_SUFFIXES, ".pdf")  # a paper given as one file
