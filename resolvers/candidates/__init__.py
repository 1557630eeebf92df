"""Which works a reference could cite: retrieval from the inverted index (``retrieval``,
``shard_retrieval``), the fuzzy matcher (``fuzzy``), locator matches (``locator_match``) and
the remote search step (``search_step``).

May import: ``resolvers.verification`` and the packages below it, and ``resolvers.remote``.
"""
