"""``citeledger catalog info``, ``citeledger runs`` and ``citeledger query``: what a catalog holds,
what runs a ledger has seen (a table or JSON), and a user query's rows, bounded (kept out of
cli/commands.py, which maps commands onto functions)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from citeledger.cli.preflight import check_catalog


def cmd_catalog_info(args: argparse.Namespace) -> int:
    from citeledger.ledger.inspect import catalog_info

    check_catalog(args.catalog)
    info = catalog_info(args.catalog)
    if args.format == "json":
        print(json.dumps(info, indent=2))
        return 0
    print(f"catalog {info['catalog']}: {info['generation']}, built {info['built_at']}, "
          f"{info['bytes_on_disk'] / 1e6:,.1f} MB on disk")
    print(f"  {'works':<28} {info['works']:>10,}")
    for source, n in info["works_per_source"].items():
        print(f"  {'  from ' + source:<28} {n:>10,}")
    for scheme, n in info["identifiers"].items():
        print(f"  {'identifiers: ' + scheme:<28} {n:>10,}")
    sources = ", ".join(info["notice_sources"]) or "no notice source"
    print(f"  {'notice events':<28} {info['notice_events']:>10,}  ({sources})")
    stale = "" if info["index_format"] == info["index_format_expected"] else \
        f" (expected {info['index_format_expected']}: rebuilt by the next run)"
    print(f"  {'index format':<28} {info['index_format']:>10}{stale}")
    shards = info["shards"]
    if shards:
        print(f"  {'fuzzy index shards':<28} {shards['shards']:>10}  ({shards['terms']:,} terms, works per shard "
              f"{', '.join(f'{n:,}' for n in shards['works_per_shard'])}; {shards['bytes'] / 1e6:,.1f} MB)")
    else:
        print(f"  {'fuzzy index shards':<28} {'none':>10}  (runs use the generation's one index)")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from citeledger.ledger.inspect import ledger_runs
    from citeledger.ledger.views import require_ledger
    from resolvers.model import linked_count

    require_ledger(args.ledger)
    runs = ledger_runs(args.ledger)
    if args.format == "json":
        print(json.dumps(runs, indent=2, default=str))
        return 0
    print(f"{'run':<34} {'started':<20} {'finished':<20} {'state':<10} {'refs':>8} {'rejects':>7} {'links':>7} "
          f"{'raw changed':>11}")
    for run in runs:
        links = linked_count(run["states"])
        print(f"{run['run_id']:<34} {(run['started_at'] or '')[:19]:<20} {(run['finished_at'] or '-')[:19]:<20} "
              f"{run['state']:<10} {_n(run['references']):>8} {_n(run['rejects']):>7} "
              f"{_n(links if run['state'] == 'finished' else None):>7} {_n(run.get('reference_changes')):>11}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from citeledger.config import load_config
    from citeledger.display import json_visible, visible_controls
    from citeledger.ledger.query import user_query

    with user_query(args.sql, args.ledger, args.catalog, load_config().query) as result:
        if args.format == "text":
            sys.stdout.write(result.table(args.max_rows))
            return 0
        columns, rows = result.rows(args.max_bytes)
        if args.format == "json":
            for row in rows:
                print(json_visible(json.dumps(dict(zip(columns, row)), default=str, ensure_ascii=False)))
        else:
            import csv

            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow([visible_controls(c) for c in columns])
            for row in rows:  # every control character made visible, as in the other formats
                writer.writerow([visible_controls(v) if isinstance(v, str) else
                                 visible_controls(str(v)) if isinstance(v, (list, dict)) else v for v in row])
        if result.cut is not None:
            sys.stdout.flush()
            print(f"citeledger: {result.cut.message()}", file=sys.stderr)
    return 0


def _n(value: Any) -> str:
    return "-" if value is None else f"{value:,}"
