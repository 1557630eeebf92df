"""What every subcommand's parser is made of: the subcommand maker (``subcommand``: help showing
each default, ``--debug``, ``--config``), the one ``--format`` vocabulary, the folder options
(``--ledger``, ``--catalog``: their settings when not given), the task runner and flow options, and
what the parsed arguments set before a command runs (the settings file, the folders).

``--format``: ``text`` is the form for people (a page, a table), ``json`` for programs, then
``csv``, ``html`` and ``pith`` where a command has them. Earlier names are still taken: ``ledger``
and ``table`` mean ``text``, ``citeledger`` (``records``) means ``json``, as the outside contract
names ``record --format ledger``."""
from __future__ import annotations

import argparse
from typing import Any, NoReturn

from citeledger.options import DEFAULT_CATALOG, DEFAULT_LEDGER, positive_int

FROM_SETTINGS = None  # --ledger and --catalog not given: the ``ledger`` and ``catalog`` settings (apply_place_settings)
# the folder settings a command takes as --ledger / --catalog, with their built-in defaults
PLACE_SETTINGS = {"ledger": DEFAULT_LEDGER, "catalog": DEFAULT_CATALOG}
FORMERLY = {"ledger": "text", "table": "text", "citeledger": "json"}


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (``citeledger resolve: error: ...``), exit 2; ``--help`` shows usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, unless its help already says it or it is an off switch."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        place = action.option_strings and action.dest in PLACE_SETTINGS  # an option, not the `catalog` command
        if place and action.default is None and "(default" not in (action.help or ""):
            return f"{action.help} (default: the `{action.dest}` setting; {PLACE_SETTINGS[action.dest]} unless set)"
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked (``importlib.metadata`` is
    not loaded by every command)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"citeledger {citeledger_version()}")
        parser.exit()


def citeledger_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("citeledger")
    except PackageNotFoundError:  # a source tree on PYTHONPATH, not installed
        return "0+unknown"


def config_option(p: argparse.ArgumentParser) -> None:
    """``--config FILE`` before or after the command (docs/reference/configuration.md, "Precedence")."""
    p.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                   help="the settings file (default: $CITELEDGER_CONFIG, else ./citeledger.toml if present)")


def subcommand(sub: Any, name: str, help: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose help shows every default, with --debug and --config."""
    p = sub.add_parser(name, help=help, description=kwargs.pop("description", help),
                       formatter_class=kwargs.pop("formatter_class", HelpFormatter), **kwargs)
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the traceback of an internal error")
    config_option(p)
    return p


def canonical(name: str) -> str:
    return FORMERLY.get(name, name)


def format_option(p: argparse.ArgumentParser, choices: list[str], default: str, help: str,
                  formerly: tuple[str, ...] = ()) -> None:
    """``--format`` among ``choices``; ``formerly``: the command's earlier names, said in its help."""
    olds = [f"{old} for {FORMERLY[old]}" for old in formerly]
    p.add_argument("--format", type=canonical, choices=choices, default=default,
                   help=f"{help} (default {default}; also taken: {', '.join(olds)})" if olds else help)


def store_options(parser: argparse.ArgumentParser, ledger: bool = True) -> None:
    if ledger:
        parser.add_argument("--ledger", default=FROM_SETTINGS, help="the ledger folder")
    parser.add_argument("--catalog", default=FROM_SETTINGS, help="the catalog folder")


def runner_options(p: argparse.ArgumentParser) -> None:
    from citeledger.run.task_runners import TASK_RUNNERS

    p.add_argument("--task-runner", choices=TASK_RUNNERS, default="auto",
                   help="auto: processes for 20,000 references or more on 2+ cores, else threads; "
                        "threads (one process), processes (a pool on this machine) or dask (a cluster, a flow run)")
    p.add_argument("--dask-address", help="scheduler of an existing Dask cluster (default: a local one)")
    p.add_argument("--dask-workers", type=positive_int, default=2,
                   help="worker processes of --task-runner processes, or of a local Dask cluster")


def flow_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--flow", action="store_true",
                   help="run as a Prefect flow run even without PREFECT_API_URL (starts a temporary Prefect "
                        "server); with PREFECT_API_URL set it is always a flow run reported to that API")


def shard_options(build: argparse.ArgumentParser) -> None:
    """The shard options of ``catalog build``: how many, and where the shard tasks run."""
    build.add_argument("--shards", type=positive_int, help="also split the fuzzy index by work into this many "
                       "shards, one task each (docs/operator/scale.md); runs then retrieve from the shards, "
                       "same observations")
    build.add_argument("--task-runner", choices=["threads", "dask"], default="threads",
                       help="where the shard tasks run: threads (this process, one after another) or dask (a cluster)")
    build.add_argument("--dask-address", help="scheduler of an existing Dask cluster (default: a local one)")
    build.add_argument("--dask-workers", type=positive_int, default=2,
                       help="worker processes of the local Dask cluster")


def apply_config_option(args: argparse.Namespace) -> None:
    """``--config FILE`` given: every settings load of this command (and its processes) reads it."""
    if getattr(args, "config", None):
        from citeledger.config import use_cli_config

        use_cli_config(args.config)


def apply_place_settings(args: argparse.Namespace) -> None:
    """``--ledger`` / ``--catalog`` not given: the ``ledger`` / ``catalog`` setting (settings file,
    ``CITELEDGER_LEDGER`` / ``CITELEDGER_CATALOG``, else the default), so every command finds the same
    folders from any working directory."""
    wanted = [key for key in PLACE_SETTINGS if getattr(args, key, "") is None]
    if wanted:
        from citeledger.config import load_config

        config = load_config()
        for key in wanted:
            setattr(args, key, getattr(config, key))
