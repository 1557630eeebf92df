"""Catalog sources: each format of the contract recognised by its content and read into work rows
(``source_files`` dispatches; the rows and their converters are ``source_rows``; ``openalex_snapshot``,
``xml_formats`` (DBLP, arXiv OAI-PMH), ``arxiv_details`` and ``works_columnar`` read the big ones).

May import: ``works`` and the packages below it, and ``resolvers``.
"""
