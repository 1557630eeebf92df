"""The ``citeledger`` command: a thin map from arguments onto the library (``commands``: resolve,
eval, nightly, refresh, catalog build), its parsers' parts (``arguments``) and the checks made
before a command does any work (``preflight``); the commands that read a catalog or a ledger
(``read_commands``), print and write records (``records``), keys and verify (``keys``), Pith's
formats (``pith``), the site (``site``), ``ledger relink`` (``ledger_file``) and ``config show``
(``config_show``); what ``citeledger resolve`` says after its counts (``next_steps``); the process hygiene of a
command that runs a flow (``prefect_env``).

May import: every package of ``citeledger``, ``resolvers``, and ``flows`` (a command that starts a
flow run imports its flow then, and Prefect with it).
"""

from citeledger.cli.commands import main

__all__ = ["main"]
