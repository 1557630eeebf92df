"""``citeledger ledger relink``: ``ledger.duckdb`` written again for the folder the ledger is in now
and the catalog it should read (``--catalog`` or the ``catalog`` setting), after the ledger was moved
or copied without its catalog; it says which catalog the works view reads, or that it is absent."""
from __future__ import annotations

import argparse


def cmd_relink(args: argparse.Namespace) -> int:
    from citeledger.cli.preflight import check_catalog
    from citeledger.ledger.ledger_store import works_file, write_ledger_database
    from citeledger.ledger.views import require_ledger
    from citeledger.storage import locking

    require_ledger(args.ledger)
    check_catalog(args.catalog)  # one line naming the catalog when it is absent, exit 2
    locking.acquire_ledger(args.ledger)  # a run writes the same file: one writer at a time
    try:
        target = write_ledger_database(args.ledger, args.catalog, force=True)
    finally:
        locking.release_ledger(args.ledger)
    works = works_file(args.catalog)
    print(f"{target}: the views read the parts beside it, and works from catalog {args.catalog} "
          f"({works.parent.name if works else 'no generation'}); open it with: duckdb {target}")
    return 0
