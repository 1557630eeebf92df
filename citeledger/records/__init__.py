"""Citation records: one paper's record, built by one builder with its canonical bytes (``record``),
its JSON (``record_json``: the schema, the values, the canonical bytes and content digest, the
record file), its parts (``paper``: the paper and which rows are its own; ``coverage``,
``evidence``), its pages (``render``), the files a records pass writes (``record_files``, in worker
processes for a large pass: ``workers``), the signed receipts (``receipts``), the records in Pith's
shape (``pith_files``) and the ledger reads they need (``ledger_reads``).

May import: ``ledger`` and the packages below it (``pith`` among them), and ``resolvers``.
"""
