"""citeledger: the references of scholarly papers turned into an auditable citation ledger.

The modules and packages, bottom first (each imports only those before it;
``tests/test_layering.py`` checks): ``app_errors`` (the application's errors), ``options``
(shared option checks), ``processes`` (worker processes that die with their parent), ``progress``
(progress bars), ``display`` (control characters made visible), ``config_model`` and ``config``
(the settings), ``pith`` (Pith's record formats), ``storage`` (every byte written), ``works`` (the
work row), ``sources`` (catalog formats read), ``index`` (the catalog's lookup files built),
``catalog`` (generations built and opened), ``engine`` (what a process loads to resolve),
``inputs`` (references read), ``ledger`` (the observations and their views), ``records``
(citation records), ``run`` (a resolve run), ``nightly``, ``evaluation``, ``site`` (the ledger as
a static site) and ``cli``. The verdicts themselves are decided in ``resolvers``.
"""
