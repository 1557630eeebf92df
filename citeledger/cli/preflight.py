"""Checks made before a command does any work, and the choice between a flow run and a direct one.

Inputs, catalog and ledger are checked first, so a run fails in one line before it begins; none of
this imports the catalog or ledger modules, DuckDB or Prefect (``citeledger --help`` and these checks stay fast).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from citeledger.app_errors import LockTimeout, UnknownRun, UsageError
from citeledger.storage import locking
from citeledger.storage.places import CatalogPlaces

if TYPE_CHECKING:  # (the settings module loads when a check needs it)
    from citeledger.config import Config


def prefect_defaults() -> None:
    """Settings that keep Prefect's temporary API server from timing out on small machines and,
    for that server only, two retries of a failed API call instead of five: it is this command's
    own child, so when it stops answering it is gone (stopped with the command by a SIGTERM to the
    group), and five retries with their back-off (2 + 4 + ... + 32 s a call) held a stopped run for
    minutes before it could exit. Each is only a default: the environment's value wins."""
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    if not os.environ.get("PREFECT_API_URL"):
        os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", "2")
    from citeledger.cli.prefect_env import prepare_cli_process

    prepare_cli_process()  # SIGTERM ends cleanly; the temporary server dies with this process


def use_flow(args: argparse.Namespace) -> bool:
    """The CLI runs a Prefect flow only when it can report to an API (``PREFECT_API_URL`` set), when
    asked to (``--flow``) or for a Dask cluster; otherwise it calls the same run functions
    directly, without starting a temporary Prefect server (docs/user/running.md, "Flow runs or direct")."""
    return bool(getattr(args, "flow", False) or os.environ.get("PREFECT_API_URL")
                or getattr(args, "task_runner", None) == "dask")


def check_catalog(catalog: str) -> None:
    """A catalog must be built before a run (checked without importing the catalog module)."""
    places = CatalogPlaces.of(catalog)
    pointer = places.current
    if not pointer.is_file() or not (places.generation(pointer.read_text().strip()) / "manifest.json").is_file():
        raise UsageError(f"no catalog in {catalog}: build one with "
                         f"`citeledger catalog build --catalog {catalog} FILE...`"
                         " or give --catalog DIR (or the `catalog` setting, CITELEDGER_CATALOG)")


def check_inputs(inputs: list[Path]) -> None:
    """Every input exists and is readable (``-`` is standard input)."""
    for path in inputs:
        if str(path) == "-" or (str(path).lower().startswith("arxiv:") and not path.exists()):
            continue  # stdin; an arXiv:ID input (input_files.is_arxiv_input), fetched, not read
        if not path.exists():
            raise UsageError(f"input {path} does not exist: check the path")
        if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
            raise UsageError(f"input {path} is not readable: check its permissions")


def check_ledger(ledger: str) -> None:
    """The ledger is a folder we can write, and no other run holds it (else wait, saying so). The
    lock is only probed here: ``plan_run`` takes it once the inputs are read, so a pipe waiting
    for its writer never holds the ledger."""
    path = Path(ledger)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--ledger {ledger} is a file, not a folder: give a folder (created if missing)")
    parent = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--ledger {ledger}: {parent} is not writable: give a ledger folder you can write")
    try:
        locking.acquire_ledger(ledger, timeout=0)
    except OSError as exc:  # /proc/x, a path through a file: the folder cannot be made
        raise UsageError(f"--ledger {ledger}: cannot be created ({exc.strerror}): give a ledger folder "
                         "you can write") from None
    except LockTimeout:
        print(f"citeledger: ledger {ledger} is in use by another run; waiting for it", file=sys.stderr)
        locking.acquire_ledger(ledger)
    locking.release_ledger(ledger)


def use_grobid(url: str | None) -> None:
    """``--grobid URL`` is ``CITELEDGER_GROBID_URL=URL`` for this command, so a flow run, a worker
    process and the configuration all see the same service."""
    if url:
        from citeledger.inputs.pdf_papers import forget_clients

        os.environ["CITELEDGER_GROBID_URL"] = url
        forget_clients()


def choose_run(args: argparse.Namespace) -> None:
    """``resolve --resume ID`` (the run's own inputs when none is given) or ``--run-id ID``."""
    if args.resume is not None and args.run_id is not None and args.resume != args.run_id:
        raise UsageError("give --resume ID or --run-id ID, not both")
    resumed_inputs = check_run_choice(args.ledger, args.run_id, args.resume)
    if args.resume is not None:
        args.run_id = args.resume
        args.inputs = args.inputs or [Path(p) for p in resumed_inputs]
    if not args.inputs:
        raise UsageError("resolve: give at least one input (or --resume ID, which reads the run's own inputs)")


def check_run_choice(ledger: str, run_id: str | None, resume: str | None) -> list[str]:
    """``--resume ID`` must name a run the ledger has begun (else exit 2, naming the nearest
    unfinished runs); a new run (``--run-id`` or none) warns when the ledger holds unfinished
    runs it leaves as they are. Returns the inputs of the run to resume, from its manifest."""
    import json

    runs = Path(ledger) / "_runs"
    manifests = sorted(runs.glob("*/manifest.json")) if runs.is_dir() else []
    finished = {p.parent.name for p in manifests if (Path(ledger) / "runs" / p.parent.name / "run.parquet").is_file()}
    unfinished = [p.parent.name for p in manifests if p.parent.name not in finished]
    if resume is not None:
        if not (runs / resume / "manifest.json").is_file():
            raise UnknownRun(f"ledger {ledger} has no run {resume!r} to resume" + _nearest(resume, unfinished))
        inputs = json.loads((runs / resume / "manifest.json").read_text()).get("inputs", [])
        return [i["path"] for i in inputs]
    others = [r for r in unfinished if r != run_id]
    if others and (run_id is None or run_id not in unfinished):
        print(f"citeledger: warning: ledger {ledger} holds {len(others)} unfinished run(s) this run does not "
              f"complete ({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}); finish one with "
              "`citeledger resolve INPUT... --resume ID`", file=sys.stderr)
    return []


def _nearest(wanted: str, unfinished: list[str]) -> str:
    if not unfinished:
        return "; it has no unfinished run (`citeledger runs` lists its runs)"
    from rapidfuzz import fuzz, process

    near = [k for k, _, _ in process.extract(wanted, unfinished, scorer=fuzz.ratio, limit=3)]
    return f"; nearest unfinished runs: {', '.join(near)}"


def check_nightly_folders(args: argparse.Namespace) -> Config:
    """``nightly``'s folders under the configured ``nightly.roots`` and side by side
    (``nightly.folders``), or a one-line usage error before Prefect starts and anything moves.
    Returns the loaded settings."""
    from citeledger.config import load_config
    from citeledger.nightly.folders import confined_folders

    config = load_config()
    confined_folders(args.inbox, args.processed, args.catalog, args.ledger, args.catalog_inbox, config.nightly_roots,
                     args.site)
    return config
