"""The ``citeledger`` program: its arguments parsed (``arguments``), the command they name run, and
what the user sees when it cannot finish: one line for an error citeledger raises on purpose (exit
2, ``NotFound`` exit 1), "interrupted" with the run to re-run for Ctrl-C or SIGTERM, one line for
an internal error (its traceback with ``--debug``)."""
from __future__ import annotations

import argparse
import os
import sys
import threading

from citeledger.app_errors import DiskFull, NotFound
from citeledger.cli import prefect_env
from citeledger.cli.arguments import apply_config_option, apply_place_settings, build_parser
from citeledger.cli.prefect_env import SignalWatch, stop_on_sigterm
from resolvers.errors import CiteledgerError


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
