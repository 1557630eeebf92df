"""The command line's reference page, ``docs/reference/cli.md``, written from the argparse parser
itself (``citeledger.cli.arguments.build_parser``): every command and subcommand with its usage, its
description, each argument with its default and what it means, and what ``--help`` adds after them
(``query``'s views and their columns). Nothing on the page is written by hand, so it cannot drift
from what ``citeledger COMMAND --help`` says; ``tests/test_cli_reference.py`` fails when the page
differs from what the parser gives.

    python tests/cli_reference.py --write     # write the page
    python tests/cli_reference.py             # print it
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "cli.md"
WIDTH = 100  # usage and the views' columns are wrapped as on a terminal this wide, whatever the terminal
COMMON = ("-h", "--debug", "--config")  # every command takes them: said once, at the top

HEAD = """# Command-line reference

<!-- Written by `python tests/cli_reference.py --write` from the command's parser: do not edit by
hand. tests/test_cli_reference.py fails when this page differs from what the parser gives. -->

Every command of `citeledger`, as `citeledger COMMAND --help` prints it. What the commands are for
and how they fit together: the [README](../../README.md); the settings every option falls back on:
[configuration](configuration.md); exit statuses: the README's "Exit status".

Every command also takes `-h`/`--help` (its help, then exit), `--debug` (the traceback of an
internal error) and `--config FILE` (the settings file; default `$CITELEDGER_CONFIG`, else
`./citeledger.toml` if present), before or after the command's name.
"""


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[argparse.ArgumentParser, str]]:
    """The parser's subcommands in the order they were added, each with its one-line help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            return [(sub, helps.get(name, "")) for name, sub in action.choices.items()]
    return []


def _walk(parser: argparse.ArgumentParser, help: str = ""):
    yield parser, help
    for sub, sub_help in _subcommands(parser):
        yield from _walk(sub, sub_help)


def _anchor(prog: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", prog.lower()).replace(" ", "-")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return parser.formatter_class(prog=parser.prog, width=WIDTH)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = _formatter(parser)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    formatter = _formatter(parser)
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        if any(option in COMMON for option in action.option_strings):
            continue
        invocation = formatter._format_action_invocation(action)
        meaning = formatter._expand_help(action) if action.help else ""
        rows.append(f"| `{invocation}` | {_cell(meaning)} |")
    return ["| argument | meaning |", "|---|---|", *rows] if rows else []


def _epilog(parser: argparse.ArgumentParser) -> str:
    if not parser.epilog:
        return ""
    formatter = _formatter(parser)
    formatter.add_text(parser.epilog)
    return formatter.format_help().rstrip()


def _section(parser: argparse.ArgumentParser, help: str) -> list[str]:
    lines = [f"## {parser.prog}", ""]
    description = " ".join((parser.description or help).split())
    if description:
        lines += [description, ""]
    lines += ["```text", _usage(parser), "```", ""]
    subs = _subcommands(parser)
    if subs:
        lines += ["| command | what it does |", "|---|---|"]
        lines += [f"| [`{sub.prog}`](#{_anchor(sub.prog)}) | {_cell(sub_help)} |" for sub, sub_help in subs]
        lines.append("")
    arguments = _arguments(parser)
    if arguments:
        lines += [*arguments, ""]
    epilog = _epilog(parser)
    if epilog:
        lines += ["```text", epilog, "```", ""]
    return lines


def render() -> str:
    from citeledger.cli.arguments import build_parser

    parser = build_parser()
    lines = [HEAD]
    for sub, help in _walk(parser):
        lines += _section(sub, help)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))
    if "--write" in sys.argv:
        PAGE.parent.mkdir(parents=True, exist_ok=True)
        PAGE.write_text(render(), encoding="utf-8")
    else:
        print(render(), end="")
