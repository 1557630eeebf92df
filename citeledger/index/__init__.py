"""The catalog's lookup files, built beside ``works.parquet``: the fuzzy candidate index
(``blocking`` and its ``terms``), the venue locators (``venue_index``), the notice files
(``notice_files``), shards of the fuzzy index (``shards``) and the upgrade of an older index
format (``index_upgrade``: run where a build or a run is planned, never when a catalog is opened).

May import: ``sources``, ``works``, ``storage`` and the packages below them, and ``resolvers``.
"""
