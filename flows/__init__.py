"""The Prefect flows: thin orchestration of the library (``citeledger``) into flow and task runs,
deployed by ``prefect.yaml``: ``resolve`` (resolve-references), ``records`` (build-records),
``refresh`` (refresh-catalog) and ``nightly``, with what they share (``flow_options``).

May import: ``citeledger`` and ``resolvers``."""
