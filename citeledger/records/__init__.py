"""Citation records: one paper's record (``record``, built fast with its canonical bytes by
``fast_build``), its parts (``paper``, ``coverage``, ``evidence``, ``canonical``), its pages
(``pages``, ``fast_pages``), the files a records pass writes (``files``, ``process_cache``), the signed
receipts (``receipts``) and the ledger reads they need (``ledger_reads``).

May import: ``ledger`` and the packages below it (``pith`` among them), and ``resolvers``.
"""
