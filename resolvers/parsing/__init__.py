"""A reference string read into fields: text normal forms (``text``, ``text_arrow``), the field
parser (``fields``, ``lazy``), title forms (``title_parts``, ``title_order``, ``title_signs``) and
the parse's quality (``quality``).

May import: ``resolvers.model`` and ``resolvers.errors`` (the identifiers stand above, and read
strings through ``text``).
"""
