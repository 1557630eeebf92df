"""``citeledger``: a thin map from the command line onto the library, and onto the flows when a run
reports to Prefect (a flow's module, and Prefect with it, is imported only by a command that runs it)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from citeledger.app_errors import DiskFull, NotFound, UsageError
from citeledger.cli import prefect_env
from citeledger.cli.arguments import (
    FROM_SETTINGS,
    HelpFormatter,
    OneLineParser,
    VersionAction,
    apply_config_option,
    apply_place_settings,
    config_option,
    flow_option,
    format_option,
    runner_options,
    shard_options,
    store_options,
    subcommand,
)
from citeledger.cli.config_show import config_parsers
from citeledger.cli.pith import sign_option
from citeledger.cli.prefect_env import SignalWatch, quiet_after_signal, stop_on_sigterm
from citeledger.cli.preflight import check_catalog, check_inputs, check_ledger, prefect_defaults, use_flow, use_grobid
from citeledger.cli.read_commands import cmd_catalog_info, cmd_query, cmd_runs
from citeledger.cli.records import cmd_record, cmd_records
from citeledger.options import non_negative_int, positive_int
from citeledger.run.summary import RunSummary
from citeledger.storage import locking
from resolvers.errors import CiteledgerError

NOTHING_READ = 3  # the exit status of a run in which no input row could be read (README, "Exit status")


def cmd_catalog_build(args: argparse.Namespace) -> int:
    from citeledger import progress
    from citeledger.catalog.catalog_store import CatalogStore
    from citeledger.sources.source_rows import SourceFormat

    check_inputs(args.files)
    fmt = SourceFormat(args.format) if args.format else None
    with progress.track(sum(map(_bytes, args.files)), "bytes") as advance:
        report = CatalogStore(args.catalog).build(args.files, fmt, lambda path: advance(_bytes(path)))
    for f in report.files:
        skipped = sum(f.get("skipped", {}).values())
        print(f"{f['file']}: {f['format']}, {f['rows']} rows, {f['rejects']} rejected"
              + (f", {skipped} not works (skipped)" if skipped else ""))
        for example in f.get("reject_examples", []):
            print(f"  rejected {example}")
    print(f"catalog {args.catalog}: {report.works} works ({report.added:+d}), {report.notice_events} notice events, "
          f"{report.generation}, {report.seconds:.1f} s")
    return shard_catalog(args) if args.shards else 0


def shard_catalog(args: argparse.Namespace) -> int:
    """``catalog build --shards N``: shard the generation the build just published and print the
    figures per shard (numpy and the shard builder load only then)."""
    from citeledger.catalog.sharding import shard_with
    from citeledger.index.shards import print_shards

    print_shards(shard_with(args.catalog, args.shards, args.task_runner, args.dask_workers, args.dask_address))
    return 0


def _bytes(path: Path) -> int:
    """Size of a source file, or of the files under a folder (the catalog build's progress)."""
    path = Path(path)
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def print_summary(summary: RunSummary | dict) -> None:
    """The run's counts on stdout; a flow run's summary comes back as ``RunSummary.as_dict()``."""
    if isinstance(summary, dict):
        summary = RunSummary.from_dict(summary)
    print(f"run {summary.run_id}{' (resumed)' if summary.resumed else ''}: "
          f"{summary.references} references, {summary.rejects} rejected rows")
    width = max(len(s) for s in summary.states)
    for state, count in summary.states.items():
        print(f"  {state:<{width}}  {count:>8}")
    print(f"  {'links':<{width}}  {summary.links:>8}")
    print(f"{summary.seconds} s, {summary.references_per_second} references/s")
    if summary.search:
        print(f"search requests: {summary.search.get('total', 0)} {summary.search.get('requests', {})}, "
              f"cache hits {summary.search.get('cache_hits', {})}")
    for message in summary.reject_messages[:10]:
        print(f"rejected {message}")
    print("\n".join(summary.notes()), end="\n" if summary.notes() else "")


def cmd_resolve(args: argparse.Namespace) -> int:
    from citeledger.cli.preflight import choose_run

    use_grobid(args.grobid)
    choose_run(args)  # --resume ID or --run-id ID: the run, and the inputs of a resumed one
    check_inputs(args.inputs)
    check_catalog(args.catalog)
    check_ledger(args.ledger)
    try:
        summary = run_resolve(args)
    finally:
        locking.release_ledger(args.ledger)  # a no-op once the run has finished or given up
    print_summary(summary)
    summary = RunSummary.from_dict(summary) if isinstance(summary, dict) else summary
    if not summary.references:
        print("citeledger: no input row could be read: nothing was resolved (see above)", file=sys.stderr)
        return NOTHING_READ
    from citeledger.cli.next_steps import unresolved_lines

    for line in unresolved_lines(summary, [str(p) for p in args.inputs], args.catalog, args.ledger, args.remote):
        print(line)
    return 0


def run_resolve(args: argparse.Namespace) -> RunSummary | dict:
    """The run as a flow run (``use_flow``) or directly; the same options either way."""
    from citeledger.config import load_config

    # defaults < citeledger.toml < CITELEDGER_* < these options (docs/reference/configuration.md)
    limits = load_config(cli={"limits.batch_size": args.batch_size, "endpoints.grobid": args.grobid}).limits
    options = dict(run_id=args.run_id, remote=args.remote, citing_paper=args.citing_paper,
                   batch_size=limits.batch_size, max_raw_chars=limits.max_raw_chars)
    inputs = [str(p) for p in args.inputs]
    if not use_flow(args):
        return resolve_direct(inputs, args, options)
    prefect_defaults()
    from flows.resolve import resolve_references

    quiet_after_signal()  # Prefect's logging is set up by now
    return resolve_references(inputs=inputs, catalog=args.catalog, ledger=args.ledger, task_runner=args.task_runner,
                              dask_address=args.dask_address, dask_workers=args.dask_workers, **options)


def resolve_direct(inputs: list[str], args: argparse.Namespace, options: dict) -> RunSummary:
    """The resolve run without Prefect: the flow's own orchestration, batches in threads or a pool."""
    import logging

    from citeledger.run import orchestrate

    logger = logging.getLogger("citeledger.run")
    if not logging.getLogger().handlers and not logger.handlers:
        logger.addHandler(logging.NullHandler())  # the summary prints the rejects; no second copy
    return orchestrate.resolve_run(inputs, args.catalog, args.ledger, args.task_runner, args.dask_workers,
                                   logger=logger, **options)


def cmd_eval(args: argparse.Namespace) -> int:
    if args.styles or not args.gold:
        return _eval_styles(args)
    from citeledger.evaluation import links as evaluate

    check_inputs(args.gold)
    check_catalog(args.catalog)
    metrics = evaluate.run_eval(args.gold, args.catalog, worst=args.worst)
    print(json.dumps(metrics, indent=1, default=str) if args.format == "json"
          else "\n".join(evaluate.report_lines(metrics)))
    return 0


def _eval_styles(args: argparse.Namespace) -> int:
    """``eval --styles``: the catalog's own works through real citation styles (style_eval)."""
    if not args.styles:
        raise UsageError("eval: give gold files, or --styles")
    check_catalog(args.catalog)
    from citeledger.evaluation import styles as style_eval

    result = style_eval.run(args.catalog, args.per_source, args.seed, progress=lambda s: print(s, file=sys.stderr))
    print("\n".join(style_eval.report_lines(result, examples=bool(args.worst))))
    return 0


def cmd_nightly(args: argparse.Namespace) -> int:
    from citeledger.cli.preflight import check_nightly_folders

    config = check_nightly_folders(args)  # refused in one line before Prefect starts, nothing moved
    use_grobid(args.grobid)
    prefect_defaults()
    from flows.nightly import nightly

    quiet_after_signal()
    summary = nightly(inbox=args.inbox, processed=args.processed, catalog=args.catalog, ledger=args.ledger,
                      catalog_inbox=args.catalog_inbox, remote=args.remote, task_runner=args.task_runner,
                      batch_size=args.batch_size or config.limits.batch_size, dask_address=args.dask_address,
                      dask_workers=args.dask_workers, site=args.site)
    refresh = summary["refresh"]
    print(f"catalog: {refresh['works_before']} -> {refresh['works_after']} works from {len(refresh['files'])} files")
    if not summary["changed"]:
        print("nothing to do: the ledger is unchanged")
        return 0
    print_summary(summary)
    print(f"{summary['transitions']} transitions, re-resolved {summary['rerun']}, "
          f"{summary['notices_changed']} notices changed, {summary.get('records', 0)} records")
    if summary.get("rejected"):
        print(f"{len(summary['rejected'])} inbox files nothing could be read from, moved to "
              f"{Path(summary['rejected'][0]).parent}: the rejects view says why")
    return 0


def cmd_refresh(args: argparse.Namespace) -> int:
    prefect_defaults()
    from flows.refresh import refresh_catalog

    quiet_after_signal()
    report = refresh_catalog(catalog=args.catalog, catalog_inbox=args.catalog_inbox, remote=args.remote)
    for error in report["errors"]:
        print(f"refresh: {error}", file=sys.stderr)
    print(f"catalog {args.catalog}: {report['works_before']} -> {report['works_after']} works "
          f"from {len(report['files'])} files"
          + (f"; sharded {report['shards']} ways as before" if report["shards"] else ""))
    return 0


_VIEWS_EPILOG = "(the views and their columns)"


class _QueryHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """``query --help`` lists the views with their columns, generated from the ledger's schemas
    only when help is asked for (building it needs duckdb, which ``--help`` alone must not load)."""

    def add_text(self, text: str | None) -> None:
        if text == _VIEWS_EPILOG:
            from citeledger.ledger.query import views_help

            text = views_help()
        super().add_text(text)


def _catalog_parsers(sub: Any) -> None:
    catalog = subcommand(sub, "catalog", "manage the local catalog")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", required=True)
    build = subcommand(catalog_sub, "build", "add works and notices from source files to the catalog")
    build.add_argument("files", nargs="+", type=Path, help="source files or folders (works JSONL, arXiv snapshot, "
                       "Crossref, Retraction Watch CSV, OpenAlex, DBLP, arXiv OAI-PMH); the format is recognised "
                       "by content")
    build.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder (created if missing)")
    build.add_argument("--format", choices=["works_jsonl", "arxiv_snapshot", "crossref", "retraction_watch_csv",
                                            "doi_nature_csv", "openalex", "dblp", "arxiv_oai"],
                       help="force a format where the content does not say (default: recognised by content; "
                            "a file whose content is another format is an error)")
    shard_options(build)
    build.set_defaults(func=cmd_catalog_build)
    _inspect(catalog_sub, "info", "what a catalog holds: generation, works per source, identifiers, notices",
             "--catalog", FROM_SETTINGS, cmd_catalog_info)


def _inspect(sub: Any, name: str, help: str, folder_option: str, default: str | None, func: Any) -> None:
    """An inspection command (``catalog info``, ``runs``): one folder, a table or JSON."""
    p = subcommand(sub, name, help)
    p.add_argument(folder_option, default=default, help=f"the {folder_option[2:]} folder")
    format_option(p, ["text", "json"], "text", "text (a table) or json", formerly=("table",))
    p.set_defaults(func=func)


def _resolve_parser(sub: Any) -> None:
    resolve = subcommand(sub, "resolve", "resolve reference files into the ledger")
    resolve.add_argument("inputs", nargs="*", type=Path,
                         help="reference files or folders: JSON Lines (.gz), CSV, Parquet, papers (.bbl/.bib/.tex, "
                         "e-prints, PDFs: read by poppler's pdftotext, or by GROBID with --grobid), arXiv:ID (with "
                         "--remote); with --resume: the run's own")
    store_options(resolve)
    resolve.add_argument("--run-id", help="id of this run (default: a new one); the id of an interrupted run "
                         "completes it; warns when the ledger holds unfinished runs this one does not complete")
    resolve.add_argument("--resume", metavar="ID", help="complete the interrupted run ID; an id the ledger "
                         "does not know is an error naming its nearest unfinished runs")
    resolve.add_argument("--citing-paper", help="the citing paper of a paper input (default: a PDF's own arXiv id "
                         "or DOI; an arXiv-style file name; a PDF's file name)")
    resolve.add_argument("--remote", action="store_true", help="use the remote resolvers configured; "
                         "fetch arXiv:ID inputs from arXiv")
    resolve.add_argument("--grobid", metavar="URL", help="read PDF inputs through this GROBID service "
                         "(default: endpoints.grobid of the configuration; none: the built-in reader)")
    resolve.add_argument("--batch-size", type=positive_int, default=None,
                         help="references per batch (default: limits.batch_size of the configuration)")
    runner_options(resolve)
    flow_option(resolve)
    resolve.set_defaults(func=cmd_resolve)


def _ledger_parsers(sub: Any) -> None:
    query = subcommand(sub, "query", "run read-only SQL over the ledger views",
                 description="Run read-only SQL (SELECT, EXPLAIN) over the ledger's views. The query\n"
                             "cannot write: its connection has no file access at all. Time and memory\n"
                             "limits: [query] in the configuration (docs/reference/configuration.md).",
                 epilog=_VIEWS_EPILOG, formatter_class=_QueryHelpFormatter)
    query.add_argument("sql", help="the query, e.g. \"select status, count(*) from current group by 1\"")
    query.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder, needed by every view but works")
    query.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder, needed by the works view")
    format_option(query, ["text", "json", "csv"], "text", "text (a table), json (one object a line) or csv",
                  formerly=("table",))
    query.add_argument("--max-rows", type=positive_int, default=100, help="rows a table shows")
    query.add_argument("--max-bytes", type=positive_int, default=256 << 20,
                       help="json and csv: stop the output (saying so on stderr) before the values of the rows "
                            "given pass this many bytes (default 256 MB)")
    query.set_defaults(func=cmd_query)

    record = subcommand(sub, "record", "the citation record of one paper (arXiv id, DOI or citing_paper id)")
    record.add_argument("id", help="the paper: arXiv:ID, IDvN, 10.48550/arXiv.ID, a DOI or a citing_paper id")
    store_options(record)
    format_option(record, ["text", "json", "html", "pith"], "text",
                  "text (a page), json, html, or pith (Pith's pith.paper-citation-record.v1)", formerly=("ledger",))
    sign_option(record)
    record.add_argument("--page-cap", type=positive_int, default=None, help="list at most this many entries per list "
                        "(default: the records' own cap)")
    record.set_defaults(func=cmd_record)

    recs = subcommand(sub, "records", "write the records of the papers a run touched")
    store_options(recs)
    recs.add_argument("--run-id", help="the run whose papers to write (default: the latest run)")
    recs.add_argument("--papers", nargs="*", help="write these papers' records instead (default: the run's papers)")
    format_option(recs, ["json", "pith"], "json", "json: each paper's record (with its text and html pages); "
                  "pith: also its pith.paper-citation-record.v1 under records/pith/", formerly=("citeledger",))
    sign_option(recs)
    flow_option(recs)
    recs.set_defaults(func=cmd_records)

    from citeledger.cli.keys import keys_parsers
    from citeledger.cli.pith import pith_parsers

    keys_parsers(sub)
    pith_parsers(sub)

    config_parsers(sub)
    from citeledger.cli.ledger_file import ledger_parsers

    ledger_parsers(sub)

    _inspect(sub, "runs", "the runs a ledger has: id, started, finished, counts, state",
             "--ledger", FROM_SETTINGS, cmd_runs)


def _flow_parsers(sub: Any) -> None:
    night = subcommand(sub, "nightly", "one nightly run: refresh, inbox, re-resolve, notices (runs the nightly flow)")
    night.add_argument("--inbox", default="data/inbox", help="folder of new reference files")
    night.add_argument("--processed", default="data/processed", help="where inbox files go once resolved")
    night.add_argument("--catalog-inbox", default="data/catalog-inbox", help="folder of new catalog source files")
    store_options(night)
    night.add_argument("--remote", action="store_true", help="harvest and resolve with the configured services")
    night.add_argument("--grobid", metavar="URL", help="read PDFs dropped in the inbox through this GROBID service")
    night.add_argument("--batch-size", type=positive_int, default=None,
                       help="references per batch (default: limits.batch_size of the configuration)")
    night.add_argument("--site", metavar="OUT", default=None,
                       help="then bring the ledger's static site in OUT up to date (default: no site)")
    runner_options(night)
    night.set_defaults(func=cmd_nightly)

    refresh = subcommand(sub, "refresh", "grow the catalog from the catalog inbox (runs the refresh-catalog flow)")
    refresh.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")
    refresh.add_argument("--catalog-inbox", default="data/catalog-inbox", help="folder of new catalog source files")
    refresh.add_argument("--remote", action="store_true", help="also harvest the configured services")
    refresh.set_defaults(func=cmd_refresh)

    ev = subcommand(sub, "eval", "link precision/recall of the resolution chain on files with gold_doi/gold_arxiv_id")
    ev.add_argument("gold", nargs="*", type=Path, help="JSON Lines (.gz) rows with raw and gold_doi/gold_arxiv_id "
                    "(both null: the reference must not be linked)")
    ev.add_argument("--styles", action="store_true", help="instead of gold files: the catalog's own works rendered in "
                    "real citation styles and degraded; precision/recall per style and degradation (citeproc-py)")
    ev.add_argument("--per-source", type=positive_int, default=50, help="with --styles: works per source format")
    ev.add_argument("--seed", type=int, default=12, help="with --styles: the sample's and degradations' seed")
    ev.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")
    ev.add_argument("--worst", type=non_negative_int, default=10, help="how many worst errors and misses to print")
    format_option(ev, ["text", "json"], "text", "text (a report) or json (the whole metrics dict)")
    ev.add_argument("--json", dest="format", action="store_const", const="json", default=None,
                    help="the same as --format json")
    ev.set_defaults(func=cmd_eval)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="citeledger", formatter_class=HelpFormatter,
                                     description="Resolve reference strings into an auditable citation ledger.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    parser.add_argument("--version", action=VersionAction, nargs=0, help="print the version and exit")
    config_option(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    _catalog_parsers(sub)
    _resolve_parser(sub)
    _ledger_parsers(sub)
    _flow_parsers(sub)
    from citeledger.cli.site import site_parser

    site_parser(sub)
    return parser


def _rerun_hint() -> str:
    """How to finish the run this process left unfinished, if it started one."""
    planning = sys.modules.get("citeledger.run.planning")
    run_id = planning.interrupted_run() if planning else None
    return f"; re-run with --run-id {run_id} to finish" if run_id else ""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    stop_on_sigterm()  # SIGTERM is an interrupt: worker pools stopped, the run to re-run named
    watch = SignalWatch() if threading.current_thread() is threading.main_thread() else None
    prefect_env.WATCH = watch
    try:
        return run_command(args, watch)
    finally:
        prefect_env.WATCH = None
        if watch is not None:
            watch.close()


def interrupted(signum: int) -> int:
    """The last line of a stopped command. After a flow run it starts on a new line of its own:
    Prefect's log worker may have written an unfinished line to stderr (a log batch the stopped
    server could not take)."""
    start = "\n" if "prefect" in sys.modules else ""
    print(f"{start}citeledger: interrupted{_rerun_hint()}", file=sys.stderr)
    return 128 + signum


def run_command(args: argparse.Namespace, watch: SignalWatch | None) -> int:
    try:
        apply_config_option(args)
        apply_place_settings(args)
        return args.func(args)
    except BrokenPipeError:  # `citeledger record ... | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (prefect_env.Terminated)
        return interrupted(getattr(exc, "signum", 2))
    except NotFound as exc:
        print(f"citeledger: {exc}", file=sys.stderr)
        return 1
    except CiteledgerError as exc:
        print(f"citeledger: {exc}{_rerun_hint() if isinstance(exc, DiskFull) else ''}", file=sys.stderr)
        return 2
    except BaseException as exc:  # sorted below: a signal under another name, a rejected query, an internal error
        signum = watch.received() if watch is not None else None
        if signum is not None:  # whatever a stopped flow run raised on its way out (Prefect's TerminationSignal...)
            return interrupted(signum)
        if not isinstance(exc, Exception):
            raise
        return report_error(exc, args)


def report_error(exc: Exception, args: argparse.Namespace) -> int:
    """A full disk the writes did not name (exit 2) and a query DuckDB rejects (its message, exit 2)
    are the user's; anything else is internal: one line, and the traceback only with ``--debug``."""
    atomic = sys.modules.get("citeledger.storage.atomic")  # loaded by whatever wrote to the disk
    if atomic is not None and atomic.no_space(exc):  # a full disk outside any named write
        print(f"citeledger: no space left on the device ({type(exc).__name__}); free some space and re-run"
              f"{_rerun_hint()}", file=sys.stderr)
        return 2
    duckdb = sys.modules.get("duckdb")
    if args.command == "query" and duckdb is not None and isinstance(exc, duckdb.Error):
        print(f"citeledger: query failed: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "debug", False):
        raise exc
    if isinstance(exc, OSError) and exc.filename:  # a path the user gave that cannot be used
        print(f"citeledger: {exc.filename}: {exc.strerror or exc} (check the path and its permissions)",
              file=sys.stderr)
        return 2
    first = (str(exc).splitlines() or [""])[0][:300]
    print(f"citeledger: internal error ({type(exc).__name__}: {first}); run again with --debug for the "
          "traceback and report it", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
