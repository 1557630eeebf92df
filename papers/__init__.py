"""A paper in, its references out: arXiv e-prints (``.tar.gz``, ``.tar``, one gzipped ``.tex``),
``.tex`` with inline ``thebibliography``, ``.bbl``, ``.bib`` or a folder of them, read in memory
within limits. Plain Python: nothing from ``citeledger``, ``flows`` or Prefect; writes no file.

``reader`` reads a paper (``read_paper``, ``read_tree``) into the records of ``paper_model``: an e-print's
bytes as a tree of members (``archive``), its source tree with its inputs followed (``tree``), which
bibliography is the paper's (``sources``) and its entries (``bibliography``), LaTeX as text
(``latex_text``, with ``braces`` and the author's ``macros``), the paper's own title (``titles``); a PDF
through ``pdf``. ``names`` gives a paper's id from its file name, ``suffixes`` the endings of
papers' file names. A command that reads no paper loads none of the LaTeX and archive readers: the
settings read ``paper_model`` alone.
"""
