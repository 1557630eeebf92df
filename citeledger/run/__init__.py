"""One resolve run, step by step, each step a module that imports only the steps before it:
``planning`` (the inputs checked, the ledger locked, the run begun and cut into batches, packed by
``batch_codec``), ``batches`` (one batch resolved and written), ``finishing`` (the run's notices,
records and row, or the run given up), and ``orchestrate`` (the whole run as one call, its batches
in threads or a process pool of its own). Beside them: where batches run (``task_runners``), the
notice check of a run (``notice_check``), the remote services' search step, reports and stop
(``remote_run``) and the run's summary (``summary``).

May import: ``records`` and the packages below it, and ``resolvers``.
"""
