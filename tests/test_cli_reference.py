"""docs/reference/cli.md is what the command's parser gives (``tests/cli_reference.py``): a new
option, a changed default or help text fails here until the page is written again."""
from __future__ import annotations

import argparse
import re

from cli_reference import COMMON, PAGE, render

from citeledger.cli.arguments import build_parser


def test_the_cli_reference_is_what_the_parser_gives():
    assert PAGE.read_text(encoding="utf-8") == render(), "run `python tests/cli_reference.py --write`"


def commands(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from commands(sub)


def test_every_command_has_its_section_and_every_option_its_row():
    page = render()
    for command in commands(build_parser()):
        assert f"\n## {command.prog}\n" in page
        section = page.split(f"\n## {command.prog}\n")[1].split("\n## ")[0]
        for action in command._actions:
            for option in set(action.option_strings) - set(COMMON) - {"--help"}:
                assert re.search(rf"^\| `(?:\S+, )?{re.escape(option)}\b", section, re.M), f"{command.prog} {option}"


def test_a_command_named_like_a_setting_shows_no_setting_default():
    """``catalog`` and ``ledger`` are commands and settings: their lines in ``citeledger --help`` say
    what the commands do, while the ``--catalog`` option names the setting it falls back on."""
    help_text = build_parser().format_help()
    assert "manage the local catalog\n" in help_text
    assert "the `catalog` setting" not in help_text and "the `ledger` setting" not in help_text
    assert "the `catalog` setting" in render().split("\n## citeledger query\n")[1].split("\n## ")[0]
