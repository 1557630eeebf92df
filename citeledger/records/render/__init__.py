"""A citation record as pages a person reads: plain text for a terminal and HTML for a browser
(``record_pages``, the HTML in ``html_pages``; the files a write makes, too), their words
(``page_words``), what a page shows of each reference and the facts both pages say (``view``) and the
names of a record's files (``file_names``). Control characters of
input strings are made visible (``citeledger.display``).

May import: ``citeledger.display``, ``citeledger.options``, ``citeledger.pith.export`` (a record's
Pith form), the ``citeledger.records`` modules of the record itself (``record``, ``record_json``,
``paper``), ``resolvers``.
"""
