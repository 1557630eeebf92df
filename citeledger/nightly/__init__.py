"""The nightly as plain functions (``steps``): its folders confined (``folders``), take the inbox
(``intake``), refresh the catalog, pick the references a grown catalog could change
(``rerun_selection``), re-check notices.

May import: ``run`` and the packages below it, and ``resolvers``.
"""
