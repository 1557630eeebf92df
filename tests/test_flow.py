"""The resolve flow through Prefect, driven by the CLI exactly as a user runs it."""
import json

import duckdb
import pytest

from citeledger.cli import main

pytestmark = pytest.mark.flow


def test_cli_builds_resolves_and_queries_through_the_flow(tmp_path, capsys):
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "catalog"
    catalog, ledger = tmp_path / "catalog", tmp_path / "ledger"
    assert main(["catalog", "build", "--catalog", str(catalog), *map(str, sorted(fixtures.glob("*.jsonl")))]) == 0
    out = capsys.readouterr().out
    assert "arxiv_snapshot" in out and "works (+" in out

    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps(r) + "\n" for r in [
        {"citing_paper": "p", "reference_index": 1, "raw": "Streinu I, Theran L. Sparsity-certifying graph "
                                                             "decompositions. arXiv:0704.0002"},
        {"citing_paper": "p", "reference_index": 2, "raw": "Doe J. Nothing to see. J Nowhere. 1999;1:1-2."},
    ]) + "not json\n")
    assert main(["resolve", str(refs), "--catalog", str(catalog), "--ledger", str(ledger), "--run-id", "flow-1",
                 "--batch-size", "1"]) == 0
    out = capsys.readouterr().out
    assert "run flow-1: 2 references, 1 rejected rows" in out
    assert "verified_exact" in out and "references/s" in out
    assert ":3: bad JSON" in out

    rows = duckdb.sql(f"select reference_index, status, work_id from read_parquet('{ledger}/observations/**/*.parquet',"
                      " union_by_name=true) order by 1").fetchall()
    assert rows[0] == (1, "verified_exact", "arxiv:0704.0002")
    assert rows[1][1] == "unresolved"

    assert main(["query", "select status, count(*) as n from current group by 1 order by 1", "--ledger", str(ledger),
                 "--catalog", str(catalog), "--format", "json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"status": "verified_exact", "n": 1} in lines

    assert main(["query", "delete from observations", "--ledger", str(ledger), "--catalog", str(catalog)]) == 2
    assert "only read-only queries" in capsys.readouterr().err
