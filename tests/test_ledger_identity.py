"""A reference's identity in the ledger: a known (citing_paper, reference_index) read again with
another raw string is counted and listed, never silent; ledger.duckdb survives a copy or a move."""
from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

cli = importlib.import_module("citeledger.cli.entry")
REPO = Path(__file__).parent.parent
DUCKDB_CLI = Path(sys.executable).parent / "duckdb"
ROWS = [{"citing_paper": "id-paper", "reference_index": i + 1, "raw": raw} for i, raw in enumerate([
    "A. Vaswani et al. Attention is all you need. arXiv:1706.03762, 2017.",
    "J. Devlin, M. Chang, K. Lee, K. Toutanova. BERT. arXiv:1810.04805, 2018.",
    "Smith J. A title of no work in the catalog. Journal of Nothing, 1999.",
])]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_known_reference_with_another_raw_string_is_reported(tmp_path, default_catalog, capsys):
    ledger = tmp_path / "ledger"
    first = write(tmp_path / "first.jsonl", ROWS)
    assert cli.main(["resolve", str(first), "--catalog", str(default_catalog), "--ledger", str(ledger),
                     "--run-id", "one"]) == 0
    changed = [dict(r) for r in ROWS]
    changed[2]["raw"] = "Jones K. Quite another reference. Elsewhere, 2005."
    second = write(tmp_path / "second.jsonl", changed)
    capsys.readouterr()
    assert cli.main(["resolve", str(second), "--catalog", str(default_catalog), "--ledger", str(ledger),
                     "--run-id", "two"]) == 0
    out = capsys.readouterr().out
    assert "1 references already in the ledger came with another raw string" in out
    con = duckdb.connect()
    runs = dict(con.execute(f"SELECT run_id, reference_changes FROM read_parquet('{ledger}/runs/*/run.parquet', "
                            "union_by_name=true)").fetchall())
    assert runs == {"one": 0, "two": 1}
    assert cli.main(["query", "SELECT * FROM reference_changes", "--ledger", str(ledger), "--catalog",
                     str(default_catalog), "--format", "json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["citing_paper"] == "id-paper" and row["reference_index"] == 3
    assert (row["old_raw"], row["new_raw"]) == (ROWS[2]["raw"], changed[2]["raw"])
    assert (row["from_run"], row["to_run"]) == ("one", "two")
    # the same strings again change nothing
    assert cli.main(["resolve", str(second), "--catalog", str(default_catalog), "--ledger", str(ledger),
                     "--run-id", "three"]) == 0
    assert "another raw string" not in capsys.readouterr().out


def test_a_run_s_counts_are_the_views_counts_of_its_rows(tmp_path, default_catalog):
    """A run's transitions and reference changes are counted over the observations of the references
    it read (not the whole ledger's): the same numbers as the ``transitions`` and ``reference_changes``
    views give for that run, whatever else the ledger holds."""
    ledger = tmp_path / "ledger"
    rows = [dict(r) for r in ROWS]
    rows[0]["raw"] = ("Yuri N. Kartashov, Invariance principle for additive functionals of Markov chains, "
                      "arXiv preprint arXiv:0704.0508, 2007.")  # a work of the catalog
    other = [dict(r, citing_paper="other-paper") for r in rows]  # never read again
    moved = [dict(r) for r in rows]
    moved[0]["raw"] = "Someone. A string that names no work at all. Nowhere, 1990."  # its link lost
    moved[2]["raw"] = "Jones K. Quite another reference. Elsewhere, 2005."  # another string, no link either way
    runs = {"one": rows + other, "two": moved, "three": rows, "four": moved[:1]}
    for run_id, rows in runs.items():
        assert cli.main(["resolve", str(write(tmp_path / f"{run_id}.jsonl", rows)), "--catalog", str(default_catalog),
                         "--ledger", str(ledger), "--run-id", run_id]) == 0
    con = duckdb.connect()
    counted = {r[0]: r[1:] for r in con.execute(
        f"SELECT run_id, transitions, reference_changes FROM read_parquet('{ledger}/runs/*/run.parquet', "
        "union_by_name=true)").fetchall()}
    from citeledger.ledger.ledger_store import connect_views

    views = connect_views(ledger, default_catalog)
    for run_id in runs:
        expected = tuple(views.execute(f"SELECT count(*) FROM {view} WHERE to_run = ?", [run_id]).fetchone()[0]
                         for view in ("transitions", "reference_changes"))
        assert counted[run_id] == expected, run_id
    assert counted == {"one": (0, 0), "two": (1, 2), "three": (1, 2), "four": (1, 1)}


def readme_queries() -> list[str]:
    text = (REPO / "README.md").read_text().split("## Five queries")[1].split("```sql")[1].split("```")[0]
    queries = [q.strip() for q in text.split(";") if q.strip()]
    assert len(queries) == 5
    return queries


@pytest.mark.skipif(not DUCKDB_CLI.exists(), reason="the duckdb CLI of the dev extra (duckdb-cli) is not installed")
def test_a_copied_ledger_answers_the_readme_queries_in_the_duckdb_shell(tmp_path, fixture_catalog):
    here = tmp_path / "here"
    shutil.copytree(fixture_catalog, here / "catalog")
    rows = [{"citing_paper": "copy-paper", "reference_index": i + 1, "raw": r["raw"]} for i, r in enumerate(ROWS)]
    refs = write(tmp_path / "refs.jsonl", rows)
    assert cli.main(["resolve", str(refs), "--catalog", str(here / "catalog"), "--ledger", str(here / "ledger")]) == 0
    there = tmp_path / "moved" / "there"
    shutil.move(str(here), str(there))  # the old absolute paths are gone
    assert not here.exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUCKDB")}
    for query in readme_queries():
        inside = subprocess.run([str(DUCKDB_CLI), "ledger.duckdb", "-csv", "-c", query], cwd=there / "ledger",
                                capture_output=True, text=True, env=env, timeout=120)
        assert inside.returncode == 0 and not inside.stderr, (query, inside.stderr)
        outside = subprocess.run([str(DUCKDB_CLI), "-cmd", f"SET file_search_path='{there / 'ledger'}'",
                                  str(there / "ledger" / "ledger.duckdb"), "-csv", "-c", query],
                                 cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert outside.returncode == 0 and outside.stdout == inside.stdout, (query, outside.stderr)
    counts = subprocess.run([str(DUCKDB_CLI), "ledger.duckdb", "-csv", "-noheader", "-c",
                             "SELECT count(*) FROM observations"], cwd=there / "ledger", capture_output=True,
                            text=True, env=env, timeout=120)
    assert counts.stdout.strip() == "3"
