"""The ``citeledger`` command: the program (``entry``: parse, run, report an error or an
interrupt), its arguments (``arguments``: every subcommand's parser), and the commands, each a thin
map from arguments onto the library: ``commands`` (catalog build, resolve, eval, nightly, refresh),
``read_commands`` (catalog info, runs, query), ``record_commands`` (record, records), ``keys`` (keys,
verify), ``pith`` (Pith's formats: import-pith, compare), ``site``, ``ledger_file`` (ledger
relink) and ``config_show``; the checks made before a command does any work (``preflight``), what
``citeledger resolve`` says after its counts (``next_steps``), the process hygiene of a command
that runs a flow and its signals (``prefect_env``).

May import: every package of ``citeledger``, ``resolvers``, and ``flows`` (a command that starts a
flow run imports its flow then, and Prefect with it).
"""

from citeledger.cli.entry import main

__all__ = ["main"]
