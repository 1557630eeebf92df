"""A paper in, its references out: arXiv e-prints (``.tar.gz``, ``.tar``, one gzipped ``.tex``),
``.tex`` with inline ``thebibliography``, ``.bbl``, ``.bib`` or a folder of them, read in memory
within limits. Plain Python: nothing from ``citeledger``, ``flows`` or Prefect; writes no file.

``reader`` reads a paper (``read_paper``, ``read_tree``) into the records of ``model``; ``names``
gives a paper's id from its file name. A command that reads no paper loads none of the LaTeX and
archive readers: the settings read ``model`` alone.
"""
