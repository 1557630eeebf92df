"""A PDF's references without a GROBID service: poppler's ``pdftotext`` word boxes (``read``, within
byte, page and time bounds), the reading order rebuilt (``layout``), the references section found and
split into entries (``entries``).

May import: ``papers.model`` and ``papers.names``, and of the resolvers only ``resolvers.identifiers``.
"""
