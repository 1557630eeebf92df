"""A PDF's references without a GROBID service: poppler's ``pdftotext`` word boxes (``read``, within
byte, page and time bounds) as words and lines (``words``), the reading order rebuilt (``layout``),
the references section found (``sections``) and split into entries (``entries``), an entry's lines
joined into one string (``joins``); the PDF's own id (``ids``) and title (``title``).

May import: ``papers.paper_model``, ``papers.names`` and ``papers.titles``, and of the resolvers only
``resolvers.identifiers``.
"""
