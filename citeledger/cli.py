"""``citeledger``: a thin map from the command line onto the pipeline and the flows."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

DEFAULT_CATALOG = "data/catalog"
DEFAULT_LEDGER = "data/ledger"


def _prefect_defaults() -> None:
    """Settings that keep Prefect's temporary API server from timing out on small machines."""
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    from .prefect_env import prepare_cli_process

    prepare_cli_process()  # SIGTERM ends cleanly; the temporary server dies with this process


def cmd_catalog_build(args: argparse.Namespace) -> int:
    from .sources import SourceFormat
    from .store import CatalogStore

    fmt = SourceFormat(args.format) if args.format else None
    report = CatalogStore(args.catalog).build(args.files, fmt)
    for f in report.files:
        print(f"{f['file']}: {f['format']}, {f['rows']} rows, {f['rejects']} rejected")
        for example in f.get("reject_examples", []):
            print(f"  rejected {example}")
    print(f"catalog {args.catalog}: {report.works} works ({report.added:+d}), {report.notice_events} notice events, "
          f"{report.generation}, {report.seconds:.1f} s")
    return 0


def print_summary(summary: dict) -> None:
    print(f"run {summary['run_id']}{' (resumed)' if summary.get('resumed') else ''}: "
          f"{summary['references']} references, {summary['rejects']} rejected rows")
    width = max(len(s) for s in summary["states"])
    for state, count in summary["states"].items():
        print(f"  {state:<{width}}  {count:>8}")
    print(f"  {'links':<{width}}  {summary['links']:>8}")
    print(f"{summary['seconds']} s, {summary['references_per_second']} references/s")
    for message in summary.get("reject_messages", [])[:10]:
        print(f"rejected {message}")


def cmd_resolve(args: argparse.Namespace) -> int:
    from .store import check_ledger_dir

    check_ledger_dir(args.ledger)  # before any server starts
    _prefect_defaults()
    from flows.resolve import resolve_references

    from .config import load_config

    limits = load_config().limits  # [limits] of citeledger.toml / CITELEDGER_* (docs/configuration.md)
    summary = resolve_references(inputs=[str(p) for p in args.inputs], catalog=args.catalog, ledger=args.ledger,
                                 run_id=args.run_id, remote=args.remote, citing_paper=args.citing_paper,
                                 batch_size=args.batch_size or limits.batch_size, max_raw_chars=limits.max_raw_chars,
                                 task_runner=args.task_runner, dask_address=args.dask_address,
                                 dask_workers=args.dask_workers)
    print_summary(summary)
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    from .store import run_query

    rel = run_query(args.sql, args.ledger, args.catalog)
    if args.format == "json":
        cols = rel.columns
        for row in rel.fetchall():
            print(json.dumps(dict(zip(cols, row)), default=str, ensure_ascii=False))
    elif args.format == "csv":
        import csv

        writer = csv.writer(sys.stdout)
        writer.writerow(rel.columns)
        writer.writerows(rel.fetchall())
    else:
        rel.show(max_rows=args.max_rows, max_width=10_000)
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    from . import records
    from .pipeline import citation_record

    record = citation_record(args.id, args.ledger, args.catalog, page_cap=args.page_cap)
    records.validate_record(record)
    if args.format == "json":
        print(json.dumps(record, indent=2, ensure_ascii=False))
    elif args.format == "html":
        print(records.render_ledger_html(record))
    else:
        print(records.render_ledger_text(record))
    return 0


def cmd_records(args: argparse.Namespace) -> int:
    from .pipeline import check_run
    from .store import check_ledger_dir

    check_ledger_dir(args.ledger)
    if args.run_id:
        check_run(args.ledger, args.run_id)  # before any server starts
    _prefect_defaults()
    from flows.records import build_records

    written = build_records(ledger=args.ledger, catalog=args.catalog, run_id=args.run_id, papers=args.papers)
    print(f"{len(written)} citation records written under {Path(args.ledger) / 'records'}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from . import evaluate

    argv = [*map(str, args.gold), "--catalog", args.catalog, "--worst", str(args.worst)]
    return evaluate.main(argv + (["--json"] if args.json else []))


def cmd_nightly(args: argparse.Namespace) -> int:
    _prefect_defaults()
    from flows.nightly import nightly

    summary = nightly(inbox=args.inbox, processed=args.processed, catalog=args.catalog, ledger=args.ledger,
                      catalog_inbox=args.catalog_inbox, remote=args.remote, batch_size=args.batch_size,
                      task_runner=args.task_runner, dask_address=args.dask_address, dask_workers=args.dask_workers)
    refresh = summary["refresh"]
    print(f"catalog: {refresh['works_before']} -> {refresh['works_after']} works from {len(refresh['files'])} files")
    if not summary["changed"]:
        print("nothing to do: the ledger is unchanged")
        return 0
    print_summary(summary)
    print(f"{summary['transitions']} transitions, re-resolved {summary['rerun']}, "
          f"{summary['notices_changed']} notices changed, {summary.get('records', 0)} records")
    return 0


def cmd_refresh(args: argparse.Namespace) -> int:
    _prefect_defaults()
    from flows.refresh import refresh_catalog

    report = refresh_catalog(catalog=args.catalog, catalog_inbox=args.catalog_inbox, remote=args.remote)
    for error in report["errors"]:
        print(f"refresh: {error}", file=sys.stderr)
    print(f"catalog {args.catalog}: {report['works_before']} -> {report['works_after']} works "
          f"from {len(report['files'])} files")
    return 0


def _runner_options(p: argparse.ArgumentParser) -> None:
    from .config import positive_int
    from .runners import TASK_RUNNERS

    p.add_argument("--task-runner", choices=TASK_RUNNERS, default="auto",
                   help="auto (default: processes for 20,000 references or more on 2+ cores, else threads), "
                        "threads (one process), processes (a pool on this machine) or dask (a cluster)")
    p.add_argument("--dask-address", help="scheduler of an existing Dask cluster (else a local one)")
    p.add_argument("--dask-workers", type=positive_int, default=2,
                   help="worker processes of --task-runner processes, or of a local Dask cluster")


def _store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ledger", default=DEFAULT_LEDGER)
    parser.add_argument("--catalog", default=DEFAULT_CATALOG)


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (``citeledger resolve: error: ...``), exit 2; ``--help`` shows usage."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .config import non_negative_int, positive_int

    parser = OneLineParser(prog="citeledger", description="Resolve reference strings into an auditable citation ledger.")
    sub = parser.add_subparsers(dest="command", required=True)

    catalog = sub.add_parser("catalog", help="manage the local catalog")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", required=True)
    build = catalog_sub.add_parser("build", help="add works and notices from source files to the catalog")
    build.add_argument("files", nargs="+", type=Path)
    build.add_argument("--catalog", default=DEFAULT_CATALOG)
    build.add_argument("--format", choices=["works_jsonl", "arxiv_snapshot", "crossref", "retraction_watch_csv",
                                            "doi_nature_csv"], help="force a format instead of recognising it")
    build.set_defaults(func=cmd_catalog_build)

    resolve = sub.add_parser("resolve", help="resolve reference files into the ledger (runs the resolve flow)")
    resolve.add_argument("inputs", nargs="+", type=Path)
    _store_options(resolve)
    resolve.add_argument("--run-id", help="id of this run; the id of an interrupted run completes it")
    resolve.add_argument("--citing-paper", help="the citing paper of a .bbl or .bib input")
    resolve.add_argument("--remote", action="store_true", help="use the remote resolvers configured")
    resolve.add_argument("--batch-size", type=positive_int, default=None, help="default: limits.batch_size of the configuration")
    _runner_options(resolve)
    resolve.set_defaults(func=cmd_resolve)

    query = sub.add_parser("query", help="run read-only SQL over the ledger views")
    query.add_argument("sql")
    _store_options(query)
    query.add_argument("--format", choices=["table", "json", "csv"], default="table")
    query.add_argument("--max-rows", type=positive_int, default=100)
    query.set_defaults(func=cmd_query)

    record = sub.add_parser("record", help="the citation record of one paper (arXiv id, DOI or citing_paper id)")
    record.add_argument("id")
    _store_options(record)
    record.add_argument("--format", choices=["json", "ledger", "html"], default="ledger")
    record.add_argument("--page-cap", type=positive_int, default=None, help="list at most this many entries per list")
    record.set_defaults(func=cmd_record)

    recs = sub.add_parser("records", help="write the records of the papers a run touched (runs the build-records flow)")
    _store_options(recs)
    recs.add_argument("--run-id", help="the run whose papers to write (default: the latest run)")
    recs.add_argument("--papers", nargs="*", help="write these papers' records instead")
    recs.set_defaults(func=cmd_records)

    night = sub.add_parser("nightly", help="one nightly run: refresh, inbox, re-resolve, notices (runs the nightly flow)")
    night.add_argument("--inbox", default="data/inbox")
    night.add_argument("--processed", default="data/processed")
    night.add_argument("--catalog-inbox", default="data/catalog-inbox")
    _store_options(night)
    night.add_argument("--remote", action="store_true", help="harvest and resolve with the configured services")
    night.add_argument("--batch-size", type=positive_int, default=5000)
    _runner_options(night)
    night.set_defaults(func=cmd_nightly)

    refresh = sub.add_parser("refresh", help="grow the catalog from the catalog inbox (runs the refresh-catalog flow)")
    refresh.add_argument("--catalog", default=DEFAULT_CATALOG)
    refresh.add_argument("--catalog-inbox", default="data/catalog-inbox")
    refresh.add_argument("--remote", action="store_true", help="also harvest the configured services")
    refresh.set_defaults(func=cmd_refresh)

    ev = sub.add_parser("eval", help="link precision/recall of the resolution chain on files with gold_doi/gold_arxiv_id")
    ev.add_argument("gold", nargs="+", type=Path)
    ev.add_argument("--catalog", default=DEFAULT_CATALOG)
    ev.add_argument("--worst", type=non_negative_int, default=10, help="how many worst errors and misses to print")
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=cmd_eval)
    return parser


def _rerun_hint(sep: str = ";") -> str:
    """How to finish the run this process left unfinished, if it started one."""
    pipeline = sys.modules.get("citeledger.pipeline")
    run_id = pipeline.interrupted_run() if pipeline else None
    return f"{sep} re-run with --run-id {run_id} to finish" if run_id else ""


def main(argv: list[str] | None = None) -> int:
    import duckdb

    from resolvers.errors import CiteledgerError, DiskFull

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `citeledger record ... | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except CiteledgerError as exc:
        print(f"citeledger: {exc}{_rerun_hint() if isinstance(exc, DiskFull) else ''}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (prefect_env.Terminated)
        print(f"citeledger: interrupted{_rerun_hint(';')}", file=sys.stderr)
        return 128 + getattr(exc, "signum", 2)
    except duckdb.Error as exc:  # a user query that DuckDB rejects: its message, not a traceback
        if args.command != "query":
            raise
        print(f"citeledger: query failed: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
