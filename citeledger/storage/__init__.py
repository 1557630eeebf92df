"""Every byte citeledger writes goes through here: staged atomic writes (``atomic``), one-writer locks
(``locking``), memory-mapped catalog files (``mapped_files``), Parquet read batch by batch
(``parquet_batches``), the external sort of the index build (``external_sort``) and the remote
harvests' state files (``remote_state``).

May import: ``resolvers`` only.
"""
