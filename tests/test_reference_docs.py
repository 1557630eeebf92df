"""The reference pages say what the code has: every column of every view of ``citeledger query`` is
a row of its view's table in docs/reference/ledger.md, and every state and every reason of the
verdicts a row of docs/reference/states.md. A column, state or reason added to the code fails here
until the reference says what it means."""
from __future__ import annotations

import re
from pathlib import Path

from citeledger.ledger.query import view_columns
from resolvers.model import Reason, Status

DOCS = Path(__file__).resolve().parent.parent / "docs" / "reference"


def table_rows(section: str) -> list[str]:
    return [line for line in section.splitlines() if line.startswith("| `")]


def named_in_first_cell(rows: list[str]) -> set[str]:
    return {name for row in rows for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])}


def test_every_column_of_every_view_is_defined_in_the_ledger_reference():
    page = (DOCS / "ledger.md").read_text(encoding="utf-8")
    columns = page.split("\n## Columns\n", 1)[1]
    sections = {}
    for part in columns.split("\n### ")[1:]:
        heading, body = part.split("\n", 1)
        for view in re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", heading)):  # the views it is about
            sections[view] = named_in_first_cell(table_rows(body))
    missing = {view: [c for c, _ in cols if c not in sections.get(view, set())] for view, cols in view_columns().items()}
    assert {view: cols for view, cols in missing.items() if cols} == {}


def test_every_state_and_reason_is_in_the_states_reference():
    page = (DOCS / "states.md").read_text(encoding="utf-8")
    named = named_in_first_cell(table_rows(page))
    assert [s.value for s in Status if s.value not in named] == []
    assert [r.value for r in Reason if r.value not in named] == []
