"""The ``citeledger`` command: a thin map from arguments onto the library (``commands``), with its
inspection, key and shard commands and the checks made before a command does any work.

May import: every package of ``citeledger``; a flow only by its Prefect entrypoint, as a worker loads it.
"""

from citeledger.cli.commands import main

__all__ = ["main"]
