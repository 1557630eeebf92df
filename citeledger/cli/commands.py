"""The commands that run the library's work: ``catalog build``, ``resolve``, ``eval``, ``nightly`` and
``refresh``, each a thin map from its arguments onto the library, or onto a flow when the run
reports to Prefect (a flow's module, and Prefect with it, is imported only by a command that runs it)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from citeledger.app_errors import UsageError
from citeledger.cli.prefect_env import quiet_after_signal
from citeledger.cli.preflight import check_catalog, check_inputs, check_ledger, prefect_defaults, use_flow, use_grobid
from citeledger.run.summary import RunSummary
from citeledger.storage import locking

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

