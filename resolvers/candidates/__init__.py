"""Which works a reference could cite: retrieval from the inverted index (``retrieval``,
``shard_retrieval``), the fuzzy matcher (``fuzzy``) and locator matches (``locator_match``); the
remote search step that follows them is ``resolvers.search_step``.

May import: ``resolvers.verification`` and the packages below it, and ``resolvers.remote``.
"""
