"""``citeledger site OUT``: the ledger as a static site to browse (``citeledger.site``), apart from
the commands module so that one stays small."""
from __future__ import annotations

import argparse
from typing import Any

from citeledger.cli.arguments import FROM_SETTINGS, subcommand


def cmd_site(args: argparse.Namespace) -> int:
    from citeledger.cli.preflight import check_catalog
    from citeledger.ledger.views import require_ledger
    from citeledger.site.site_files import build_site

    check_catalog(args.catalog)
    require_ledger(args.ledger)
    report = build_site(args.out, args.ledger, args.catalog, workers=args.workers,
                        allow_other_files=args.allow_other_files)
    print(f"site of {report.papers} papers and {report.works} cited works in {args.out}: {report.files} files, "
          f"{report.written} written, {report.kept} unchanged ({report.made} papers' pages made, "
          f"{report.seconds:.1f} s): open {args.out}/index.html")
    if report.left_out:
        print(f"{len(report.left_out)} record files left out (listed on the index): "
              + "; ".join(f"{name}: {why}" for name, why in report.left_out[:3])
              + ("; ..." if len(report.left_out) > 3 else ""))
    return 0


def site_parser(sub: Any) -> None:
    site = subcommand(sub, "site", "write the ledger as a static site to browse (index, papers, cited works, notices)")
    site.add_argument("out", help="the folder of the site: created if missing; made again only where the ledger "
                      "changed; published whole")
    site.add_argument("--ledger", default=FROM_SETTINGS,
                      help="the ledger folder (its record files are read when current)")
    site.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")
    site.add_argument("--allow-other-files", action="store_true",
                      help="write the site into a folder that holds files citeledger did not write (they are kept; "
                           "without this such a folder is refused)")
    site.add_argument("--workers", type=int, default=None, metavar="N",
                      help="processes making the papers' pages (default: two from 2,000 papers to make)")
    site.set_defaults(func=cmd_site)
