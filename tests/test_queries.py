"""Every query of docs/user/queries.md runs, through `citeledger query` and through ledger.duckdb, over
a small two-night ledger (unresolved references that became links on the second night)."""
import json
import re
from pathlib import Path

import duckdb
import pytest
from test_nightly import NEW_WORKS, built_catalog, night, site  # noqa: F401 - site and built_catalog are fixtures

from citeledger.ledger.query import run_query

DOC = Path(__file__).parent.parent / "docs" / "user" / "queries.md"
QUERIES = re.findall(r"^## (\d+\..+?)\n.*?```sql\n(.*?)```", DOC.read_text(), flags=re.S | re.M)


@pytest.fixture
def two_nights(site):  # noqa: F811
    (site["inbox"] / "broken.jsonl").write_text('{"citing_paper": "p", "raw": "no index"}\n')
    night(site)
    (site["catalog-inbox"] / "new-works.jsonl").write_text("".join(json.dumps(w) + "\n" for w in NEW_WORKS))
    night(site)
    return site


def test_there_are_a_dozen():
    assert len(QUERIES) >= 12


def test_every_query_runs_both_ways(two_nights):
    site = two_nights
    con = duckdb.connect(str(site["ledger"] / "ledger.duckdb"), read_only=True)
    con.execute(f"SET file_search_path = '{site['ledger']}'")  # its views' paths are relative to the ledger
    results = {}
    try:
        for title, sql in QUERIES:
            via_cli = run_query(sql, site["ledger"], site["catalog"]).fetchall()
            via_file = con.execute(sql).fetchall()
            assert sorted(map(repr, via_cli)) == sorted(map(repr, via_file)), title  # ties may come in any order
            results[title] = via_cli
    finally:
        con.close()
    by_number = {t.split(".")[0]: rows for t, rows in results.items()}
    assert dict(by_number["1"]) == {"verified_exact": 3, "verified_fuzzy": 1, "unresolved": 1}
    assert len(by_number["2"]) == 2 and by_number["2"][0][1] == "nightly"
    assert {r[1] for r in by_number["3"]} == {2, 3} == {r[2] for r in by_number["4"]}
    assert by_number["5"] == []
    assert [r[2] for r in by_number["6"]] == ["unresolved", "verified_exact"]
    assert len(by_number["12"]) == 1 and by_number["12"][0][0].endswith("broken.jsonl")
    assert by_number["14"] == []  # the one reference that stayed unresolved was never re-tried
