"""The catalog: works and notice events built into generations on disk (``extract_parts``, ``merge_sql``),
read back through one lookup interface (``catalog_store``), the generation pins that keep a running
generation alive during a build (``generation_pins``), and a catalog sharded (``sharding``).

May import: ``index`` and the packages below it, and ``resolvers``.
"""
