"""``citeledger record`` and ``citeledger records``: one paper's citation record printed, and the records
of the papers a run touched written (kept out of ``commands``, which maps arguments onto functions)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from citeledger.app_errors import NotFound, UsageError
from citeledger.cli.pith import check_sign
from citeledger.cli.preflight import check_catalog, prefect_defaults, use_flow


def cmd_record(args: argparse.Namespace) -> int:
    from citeledger.display import json_visible
    from citeledger.ledger.views import require_ledger
    from citeledger.records.record_files import citation_record
    from citeledger.records.render.record_pages import render_ledger_html, render_ledger_text

    require_ledger(args.ledger)
    check_sign(args)
    paper = args.id
    if paper.strip().lower().startswith("pith:"):
        from citeledger.ledger.pith_rows import paper_of_pith_number

        paper = paper_of_pith_number(paper, args.ledger)
    from citeledger.cli.pith import imported_record, print_imported_record

    imported = imported_record(paper, args)
    if imported is not None and args.format == "pith":
        try:
            check_catalog(args.catalog)
        except UsageError:  # a ledger holding only imports needs no catalog to give them back
            return print_imported_record(imported, args)
    record = citation_record(paper, args.ledger, args.catalog, page_cap=args.page_cap)
    if not known(record):
        if imported is not None and args.format == "pith":
            return print_imported_record(imported, args)
        raise_unknown(args, imported is not None)
    # (not validated here: the builder's records are, by the tests, and jsonschema costs 0.09 s to load)
    if args.format == "pith":
        from citeledger.cli.pith import print_pith_record

        return print_pith_record(record, args)
    if args.format == "json":
        print(json_visible(json.dumps(record, indent=2, ensure_ascii=False)))
    elif args.format == "html":
        print(render_ledger_html(record))
    else:
        print(render_ledger_text(record))
    return 0

def known(record: dict) -> bool:
    """Whether the ledger's own observations know the paper: it has a reference or a citation there."""
    return bool(record["counts"]["references"] or record["counts"]["inbound"])


def raise_unknown(args: argparse.Namespace, imported: bool) -> None:
    """A paper with no reference and no citation in the ledger is not known to it: an error
    naming the nearest citing papers the ledger does know (or, when it holds Pith's record of the
    paper, saying that ``--format pith`` gives that record)."""
    if imported:
        raise NotFound(f"the ledger {args.ledger} has no observation of its own of {args.id!r}, only Pith's "
                       "record of it: `citeledger record ID --format pith` gives that record")
    from citeledger.ledger.inspect import near_ids
    from citeledger.records.ledger_reads import citing_papers

    near = near_ids(args.id, citing_papers(args.ledger, args.catalog, None))
    listing = "; `citeledger query \"select distinct citing_paper from current\"` lists them"
    hint = f"; near ids: {', '.join(near)}" if near else listing
    raise NotFound(f"the ledger {args.ledger} does not know the paper {args.id!r}{hint}")

def cmd_records(args: argparse.Namespace) -> int:
    check_catalog(args.catalog)
    from citeledger.ledger.views import require_ledger

    require_ledger(args.ledger)  # an existing folder that holds no ledger is a mistyped --ledger too
    check_sign(args)
    if args.run_id:
        from citeledger.records.record_files import check_run

        check_run(args.ledger, args.run_id)  # before any server starts
    if use_flow(args):
        prefect_defaults()
        from citeledger.cli.prefect_env import quiet_after_signal
        from flows.records import build_records

        quiet_after_signal()
        written = build_records(ledger=args.ledger, catalog=args.catalog, run_id=args.run_id, papers=args.papers)
    else:
        from citeledger.run.finishing import rebuild_records

        written = rebuild_records(args.ledger, args.catalog, args.run_id, args.papers)
    print(f"{len(written)} citation records written under {Path(args.ledger) / 'records'}")
    if args.format == "pith":
        from citeledger.cli.pith import write_pith_records

        print(f"{len(write_pith_records(args))} Pith records written under {Path(args.ledger) / 'records' / 'pith'}")
    return 0
