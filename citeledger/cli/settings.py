"""``citeledger config show``: the effective settings and where each came from (default, file,
env, cli), so an operator sees what a run will use before starting it."""
from __future__ import annotations

import argparse
import json
import os
from typing import Any, Callable

from citeledger.options import DEFAULT_CATALOG, DEFAULT_LEDGER


def cmd_config_show(args: argparse.Namespace) -> int:
    from citeledger.config import cli_config_path, effective_settings, load_config

    config = load_config()
    rows = effective_settings(config)
    if args.format == "json":
        print(json.dumps({"file": config.source, "settings": [
            {"key": key, "value": value, "source": source} for key, value, source in rows]}, indent=2))
        return 0
    how = ("--config" if cli_config_path() else "$CITELEDGER_CONFIG" if os.environ.get("CITELEDGER_CONFIG")
           else "./citeledger.toml")
    print(f"settings file: {config.source} ({how})" if config.source else
          "settings file: none (no --config, no $CITELEDGER_CONFIG, no ./citeledger.toml)")
    print("precedence: default < file < env < cli")
    width = max(len(key) for key, _, _ in rows)
    for key, value, source in rows:
        print(f"{key:<{width}}  {_shown(value):<40}  {source}")
    return 0


def _shown(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


def config_option(p: argparse.ArgumentParser) -> None:
    """``--config FILE`` before or after the command (docs/reference/configuration.md, "Precedence")."""
    p.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                   help="the settings file (default: $CITELEDGER_CONFIG, else ./citeledger.toml if present)")


def apply_config_option(args: argparse.Namespace) -> None:
    """``--config FILE`` given: every settings load of this command (and its processes) reads it."""
    if getattr(args, "config", None):
        from citeledger.config import use_cli_config

        use_cli_config(args.config)


# the folder settings a command takes as --ledger / --catalog, with their built-in defaults
PLACE_SETTINGS = {"ledger": DEFAULT_LEDGER, "catalog": DEFAULT_CATALOG}


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


def config_parsers(sub: Any, make: Callable[..., argparse.ArgumentParser]) -> None:
    """``config show`` (``make``: main's subcommand maker, which adds --config and --debug)."""
    config = make(sub, "config", "the settings: file, environment and command line")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    show = make(config_sub, "show", "print the effective settings and where each came from (default/file/env/cli)")
    from citeledger.cli.formats import format_option

    format_option(show, ["text", "json"], "text", "text (a table) or json", formerly=("table",))
    show.set_defaults(func=cmd_config_show)
