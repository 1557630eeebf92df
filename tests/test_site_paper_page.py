"""A paper's page in the site says what a reader of Pith's records checks a record by: each
observation's id (outbound and inbound), each coverage lane's source and time, the refusal
sentence, the schema name, and a link to the JSON record it shows (written beside it, the same
record: its content digest recomputes). Built from the fixture ledger (tests/fixtures/pith/README.md)."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from link_check import broken_links
from pith_fixtures import PITH

from citeledger.cli import main
from citeledger.pith.export import REFUSAL
from citeledger.records.record_json import content_digest
from citeledger.records.render import page_words

REPO = Path(__file__).parent.parent
LEDGER = PITH / "ledger"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("paper-page")
    catalog, ledger = work / "catalog", work / "ledger"
    assert main(["catalog", "build", "--catalog", str(catalog), str(LEDGER / "arxiv.jsonl"),
                 str(REPO / "data" / "sources" / "retraction_watch_doi_nature_excerpt.csv")]) == 0
    assert main(["resolve", str(LEDGER / "refs.jsonl"), "--catalog", str(catalog), "--ledger", str(ledger)]) == 0
    assert main(["site", str(work / "site"), "--ledger", str(ledger), "--catalog", str(catalog)]) == 0
    return work / "site"


def test_the_paper_page_shows_ids_lane_sources_the_refusal_the_schema_and_its_json(site):
    source_html = (site / "papers" / "2101.00001.html").read_text(encoding="utf-8")
    page = html.unescape(re.sub(r"<[^>]+>", "", source_html))  # the page's text
    record = json.loads((site / "papers" / "2101.00001.json").read_bytes())
    assert record["content_digest"] == content_digest(record)  # the record the page shows, whole
    assert record["paper"]["id"] == "2101.00001"
    observations = record["outbound"]["items"] + record["inbound"]["items"]
    assert len(observations) == 5
    assert all(f"Observation {o['observation_id']}" in page or f"observation {o['observation_id']}" in page
               for o in observations)
    for name, lane in record["coverage"].items():
        source = page_words.lane_source(name, lane)
        assert source in page, name
    notices = record["coverage"]["notices"]
    assert all(f"{s} ({t})" in page for s, t in notices["source_times"].items()) and notices["source_times"]
    assert REFUSAL in page
    assert "Schema citeledger.paper-citation-record.v2" in page
    assert 'href="2101.00001.json"' in source_html
    broken, _ = broken_links(site)
    assert broken == []
