"""A paper in, its references out: arXiv e-prints (``.tar.gz``, ``.tar``, one gzipped ``.tex``),
``.tex`` with inline ``thebibliography``, ``.bbl``, ``.bib`` or a folder of them, read in memory
within limits. Plain Python: nothing from ``citeledger``, ``flows`` or Prefect; writes no file."""
from papers.model import ExtractedReference, PaperLimits, PaperReferences, PaperReject
from papers.names import citing_paper_from_name
from papers.reader import read_paper, read_tree

__all__ = ["ExtractedReference", "PaperLimits", "PaperReferences", "PaperReject", "citing_paper_from_name",
           "read_paper", "read_tree"]
