"""The ``citeledger`` command: a thin map from arguments onto the library (``commands``), with its
inspection, key and shard commands and the checks made before a command does any work.

May import: every package of ``citeledger`` and the flows (a command that starts a flow run imports its flow
then, and Prefect with it).
"""

from citeledger.cli.commands import main

__all__ = ["main"]
