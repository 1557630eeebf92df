"""The work row, defined once: its columns and Arrow types (``row_schema``) and the row-major file a
resolving batch reads works from by position (``work_rows``).

May import: ``citeledger.storage`` and ``resolvers``.
"""
