"""The ledger: observations, rejects, notices and runs as Parquet parts with their views
(``ledger_store``), the user's read-only SQL over them (``query``) and what a catalog and a ledger hold
(``inspect``).

May import: ``inputs`` and the packages below it, and ``resolvers``.
"""
