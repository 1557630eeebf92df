"""citeledger: the references of scholarly papers turned into an auditable citation ledger.

The packages, bottom first (each imports only those before it; ``tests/test_layering.py`` checks):
``storage`` (every byte written), ``works`` (the work row), ``sources`` (catalog formats read),
``index`` (the catalog's lookup files built), ``catalog`` (generations built and opened),
``engine`` (what a process loads to resolve), ``inputs`` (references read), ``ledger`` (the
observations and their views), ``records`` (citation records), ``run`` (a resolve run),
``nightly``, ``evaluation`` and ``cli``. The verdicts themselves are decided in ``resolvers``.
"""
