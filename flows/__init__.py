"""The Prefect flows: thin orchestration of the library (``citeledger``) into flow and task runs,
deployed by ``prefect.yaml``. May import: ``citeledger`` and ``resolvers``."""
