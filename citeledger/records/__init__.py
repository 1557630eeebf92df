"""Citation records: one paper's record (``record``, built fast with its canonical bytes by
``fast_build``), its parts (``paper``, ``coverage``, ``evidence``, ``canonical``), its pages
(``render``), the files a records pass writes (``files``, in worker processes for a large pass:
``workers``), the signed receipts (``receipts``), the records in Pith's shape (``pith_files``) and
the ledger reads they need (``ledger_reads``).

May import: ``ledger`` and the packages below it (``pith`` among them), and ``resolvers``.
"""
