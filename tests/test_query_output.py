"""``citeledger query`` output is bounded and shows no raw control character in any format: rows are
fetched a few MB at a time (Python's copy of a row is outside DuckDB's memory limit), json and csv
stop before ``--max-bytes`` of values and say so on stderr, and a control character in a value or a
column name is printed visible (``\\x1b``), never raw."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeledger import cli
from citeledger.ledger import query as query_module

ROWS = [{"citing_paper": "paper-a", "reference_index": i,
         "raw": f"Nobody {i}. Not in any catalog. J Nowhere 1999;{i}:1."} for i in range(1, 3)]
BIG = "select repeat('x', 100000) || i::varchar as s from range(200) t(i)"  # 20 MB of values
CONTROLS = "select 'a' || chr(27) || '[31m' || chr(0) || chr(7) || chr(155) || 'b' as \"col\x1bname\", 1 as n"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, fixture_catalog) -> Path:
    folder = tmp_path_factory.mktemp("query-output")
    inp = folder / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert cli.main(["resolve", str(inp), "--catalog", str(fixture_catalog), "--ledger", str(folder / "ledger"),
                     "--task-runner", "threads"]) == 0
    return folder / "ledger"


def query(ledger: Path, catalog: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["query", *args, "--ledger", str(ledger), "--catalog", str(catalog)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_output_stops_at_its_byte_bound_and_says_so(ledger, fixture_catalog, capsys, fmt):
    code, out, err = query(ledger, fixture_catalog, capsys, BIG, "--format", fmt, "--max-bytes", "1000000")
    assert code == 0
    assert len(out.encode()) < 1_000_000 + 10_000  # the values, a row's framing each
    assert 5 <= len(out.splitlines()) < 200
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "output cut after" in lines[0] and "--max-bytes" in lines[0]


def test_output_within_its_bound_is_whole_and_silent(ledger, fixture_catalog, capsys):
    code, out, err = query(ledger, fixture_catalog, capsys, BIG, "--format", "json")
    assert code == 0 and err == "" and len(out.splitlines()) == 200


def test_rows_are_fetched_a_few_megabytes_at_a_time(ledger, fixture_catalog, monkeypatch):
    monkeypatch.setattr(query_module, "FETCH_BYTES", 1_000_000)
    fetched: list[int] = []

    class Spy:
        def __init__(self, con):
            self.con = con

        def fetchmany(self, size):
            batch = self.con.fetchmany(size)
            fetched.append(sum(query_module.row_bytes(r) for r in batch))
            return batch

        def __getattr__(self, name):
            return getattr(self.con, name)

    with query_module.user_query(BIG, ledger, fixture_catalog) as result:
        result.con = Spy(result.con)
        _, rows = result.rows()
        assert sum(1 for _ in rows) == 200
    assert max(fetched) <= 1_000_000 + 100_010  # the byte budget, plus at most one row over it


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_no_raw_control_character_in_any_format(ledger, fixture_catalog, capsys, fmt):
    code, out, _ = query(ledger, fixture_catalog, capsys, CONTROLS, "--format", fmt)
    assert code == 0
    raw = [c for c in out if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    assert raw == []
    assert any(shown in out for shown in ("\\x1b", "\\u001b", "\\e"))  # ESC, as each format shows it
