"""``citeledger site OUT``: the ledger as a static site to browse (``citeledger.site``), apart from
the commands module so that one stays small."""
from __future__ import annotations

import argparse
from typing import Any, Callable


def cmd_site(args: argparse.Namespace) -> int:
    from citeledger.cli.preflight import check_catalog
    from citeledger.ledger.store import require_ledger
    from citeledger.site.site_files import build_site

    check_catalog(args.catalog)
    require_ledger(args.ledger)
    report = build_site(args.out, args.ledger, args.catalog)
    print(f"site of {report.papers} papers and {report.works} cited works written to {args.out} "
          f"({report.files} files, {report.seconds:.1f} s): open {args.out}/index.html")
    return 0


def site_parser(sub: Any, make: Callable[..., argparse.ArgumentParser], ledger: str, catalog: str) -> None:
    site = make(sub, "site", "write the ledger as a static site to browse (index, papers, cited works, notices)")
    site.add_argument("out", help="the folder to write the site to (created if missing)")
    site.add_argument("--ledger", default=ledger, help="the ledger folder (its record files are read when current)")
    site.add_argument("--catalog", default=catalog, help="the catalog folder")
    site.set_defaults(func=cmd_site)
