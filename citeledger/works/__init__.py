"""The work row, defined once: its columns and Arrow types (``row_schema``) and the row-major file a
resolving batch reads works from by position (``row_reader``).

May import: ``citeledger.storage`` and ``resolvers``.
"""
