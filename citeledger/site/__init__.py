"""A browsable static site of the ledger (``citeledger site OUT``): an index of every paper with
its title and state counts (sorted and searched in the browser by a small inline script over an
embedded JSON), each paper's record pages (its references first, filtered by state), each cited
work's page (the catalog's fields, every citing paper), and a page of the standing notices;
relative links only, so it opens from the file system as well as from any static file server.

``collect`` reads each record (checked as ``citeledger verify`` checks it) and what each paper gives the site;
``site_pages`` makes the index, work and notices pages; ``site_files`` decides what a build makes
again and what it keeps; ``folder`` says what of ``OUT`` is the site's own and publishes a build
whole; ``staging`` is the folder a build is staged in.

May import: ``records`` and the packages below it, and ``resolvers``.
"""
