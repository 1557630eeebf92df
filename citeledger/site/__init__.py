"""A browsable static site of the ledger (``citeledger site OUT``): an index of every paper with
its state counts (sorted and searched in the browser by a small inline script over an embedded
JSON), each paper's record pages, each cited work's page with the references citing it, and a
page of the standing notices; relative links only, so it opens from the file system as well as
from any static file server. ``collect`` gathers the ledger's records and what the site shows
across them; ``site_pages`` makes the index, work and notices pages; ``site_files`` writes it all.

May import: ``records`` and the packages below it, and ``resolvers``.
"""
