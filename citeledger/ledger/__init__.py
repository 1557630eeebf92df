"""The ledger: observations, rejects, notices and runs as Parquet parts (``ledger_store``), their
views as plain data (``views``), what other stages read of them (``reads``), the user's read-only
SQL over them (``query``), Pith's records imported (``pith_rows``) and what a catalog and a ledger
hold (``inspect``).

May import: ``inputs`` and the packages below it, and ``resolvers``.
"""
