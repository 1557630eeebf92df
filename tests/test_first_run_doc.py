"""docs/user/first-run.md shows what the commands print: each ```sh block holding one `citeledger`
command is run in a folder laid out as the repository (the embedded catalog, the sample), and each
line of the ```text block after it is a line the command prints, in order ("..." lines are left
out by the page, never changed)."""
from __future__ import annotations

import re
import shlex

from conftest import REPO
from test_readme_outputs import citeledger, in_order, workdir  # noqa: F401 - workdir is a fixture

PAGE = (REPO / "docs" / "user" / "first-run.md").read_text(encoding="utf-8")


def shown_commands() -> list[tuple[list[str], list[str]]]:
    """(the command's arguments, the lines shown) of every command followed by its output."""
    pairs = re.findall(r"```sh\n(citeledger [^\n]*)\n```\s*```text\n(.*?)```", PAGE, re.S)
    return [(shlex.split(command)[1:], [line for line in shown.splitlines() if line.strip() and line.strip() != "..."])
            for command, shown in pairs]


def test_every_command_on_the_first_run_page_prints_what_it_shows(workdir):  # noqa: F811
    shown = shown_commands()
    assert len(shown) >= 4
    for argv, lines in shown:
        assert in_order(lines, citeledger(*argv, cwd=workdir)) == [], argv
