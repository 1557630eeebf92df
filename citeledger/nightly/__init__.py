"""The nightly as plain functions (``steps``): take the inbox (``intake``), refresh the catalog, pick the
references a grown catalog could change (``rerun_selection``), re-check notices.

May import: ``run`` and the packages below it, and ``resolvers``.
"""
