"""One resolve run: plan, resolve and write batches, finish (``pipeline``), whoever runs the batches
(``orchestrate``, ``task_runners``), the batch codec (``batch_codec``), the notice check of a run
(``notice_check``), the remote services' search step, reports and stop (``remote_run``) and its
summary (``summary``).

May import: ``records`` and the packages below it, and ``resolvers``.
"""
