"""``citeledger site OUT``: the ledger as a static site to browse (``citeledger.site``), apart from
the commands module so that one stays small."""
from __future__ import annotations

import argparse


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
