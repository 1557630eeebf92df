"""Every byte citeledger writes goes through here: staged atomic writes (``atomic``), one-writer locks
(``locking``), memory-mapped catalog files (``mapped_files``), Parquet read batch by batch
(``parquet_batches``), the external sort of the index build (``external_sort``), the remote
harvests' state files (``remote_state``) and JSON documents read from files others made, as I-JSON
and within bounds (``json_documents``: records and key files). Where each thing of a ledger or a
catalog folder lives is ``places``; the SQL helpers of what is sent to DuckDB, ``sql``.

May import: ``citeledger.app_errors``, ``citeledger.options`` and ``resolvers``.
"""
