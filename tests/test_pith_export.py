"""citeledger's v2 record -> Pith's shape: every member of the published record, digests by Pith's
rules, the schema passed, over the golden record and every record of the sample run."""
import json
from pathlib import Path

import pytest
from pith_fixtures import seed_keys_missing

from citeledger.pith import digests, export, schema
from citeledger.pith.reader import read_citation_record

REPO = Path(__file__).parent.parent
GOLDEN_V2 = REPO / "tests" / "golden" / "record_v2_expected.json"


def test_the_golden_record_exports_with_every_member_and_pith_digests():
    v2 = json.loads(GOLDEN_V2.read_text())
    pith = export.to_pith_record(v2)
    assert schema.schema_errors(pith) == []
    assert seed_keys_missing(pith) == set()
    assert pith["context_digest"] == digests.context_digest(pith)
    assert all(o["observation_digest"] == digests.observation_digest(o) for o in pith["outbound"] + pith["inbound"])
    assert [o["observation_id"] for o in pith["outbound"]] == [i["observation_id"] for i in v2["outbound"]["items"]]
    assert pith["paper"] == {"arxiv_id": "0704.0001", "last_updated": "2007-04-03T10:00:00Z", "latest_version": 2,
                             "primary_category": "math.CO", "snapshot_observed_at": "2025-08-22T00:00:00Z",
                             "submitted_at": "2007-04-02T19:18:42Z", "title": "Paper A"}
    assert pith["reference_resolution"]["state_counts"] == {**{s: 0 for s in v2["counts"]["by_status"]},
                                                            "verified_exact": 1, "unresolved": 1}
    assert pith["thesis"].startswith("As of 1 January 2026, this Paper Citation Record lists 2 of 2 outbound")


def test_the_notice_lane_counts_every_observation_and_unlinked_ones_are_unavailable():
    pith = export.to_pith_record(json.loads(GOLDEN_V2.read_text()))
    lanes = {lane["lane"]: lane for lane in pith["coverage"]}
    notices = lanes["standing_notices"]
    assert (notices["records_observed"], notices["denominator"], notices["state"]) == (3, 3, "measured")
    unresolved = pith["outbound"][1]
    assert unresolved["standing_notice"] == {"events": [], "reason": "canonical_work_link_unavailable",
                                             "source_receipts": [], "state": "unavailable"}
    assert unresolved["citation"]["cited_work"]["work_id"] is None
    linked = pith["outbound"][0]["standing_notice"]
    assert linked["observation"] == "No event found in the named queried sources as of 2025-08-22T00:00:00Z."
    assert [s["source"] for s in pith["standing_sources"]] == ["crossref_updates", "retraction_watch_doi_nature"]
    assert lanes["external_citation_measurements"]["state"] == "not_measured"
    assert pith["external_citation_measurements"] == []


def test_external_measurements_stay_per_source_and_dated():
    openalex = export.external_measurement("openalex", 12, "2026-08-01T00:00:00Z", "https://openalex.org/W1")
    crossref = export.external_measurement("crossref", 9, "2026-08-02T00:00:00Z", "10.1000/j.a.1")
    pith = export.to_pith_record(json.loads(GOLDEN_V2.read_text()), measurements=[openalex, crossref])
    assert schema.schema_errors(pith) == []
    assert [(m["source"], m["measure"], m["value"]) for m in pith["external_citation_measurements"]] == \
        [("openalex", "cited_by_count", 12), ("crossref", "is-referenced-by-count", 9)]
    lane = pith["coverage"][3]
    assert (lane["state"], lane["records_observed"], lane["source"], lane["source_observed_at"]) == \
        ("measured", 2, "crossref, openalex", "2026-08-02T00:00:00Z")
    with pytest.raises(ValueError):
        export.external_measurement("semantic_scholar", 1, "2026-08-01T00:00:00Z", "x")
    with pytest.raises(ValueError):
        export.external_measurement("openalex", -1, "2026-08-01T00:00:00Z", "x")


def test_the_exported_record_reads_back_as_the_ledger_rows_it_came_from():
    v2 = json.loads(GOLDEN_V2.read_text())
    read = read_citation_record(export.to_pith_record(v2))
    assert read.digest_verified and all(r["digest_verified"] for r in read.rows)
    assert [(r["reference_index"], r["status"], r["doi"]) for r in read.rows if r["direction"] == "outbound"] == \
        [(i["reference_index"], i["status"], (i["resolved"] or {}).get("doi")) for i in v2["outbound"]["items"]]


@pytest.mark.flow
def test_every_record_of_the_sample_run_exports_to_a_valid_pith_record(tmp_path, default_catalog):
    from citeledger.cli import main

    ledger = tmp_path / "ledger"
    assert main(["resolve", str(REPO / "data" / "sample_references.jsonl"), "--catalog", str(default_catalog),
                 "--ledger", str(ledger)]) == 0
    assert main(["records", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    files = sorted((ledger / "records").glob("*.json"))
    assert len(files) >= 5
    titles = 0
    for file in files:
        v2 = json.loads(file.read_text())
        pith = export.to_pith_record(v2, links={"json": file.name, "html": file.with_suffix(".html").name})
        assert schema.schema_errors(pith) == [], file.name
        assert seed_keys_missing(pith) == set(), file.name
        assert pith["reference_resolution"]["total_outbound_references"] == v2["counts"]["references"]
        lane = pith["coverage"][1]
        assert lane["records_observed"] == lane["denominator"] == v2["outbound"]["total"] + v2["inbound"]["total"]
        for obs, item in zip(pith["outbound"], v2["outbound"]["items"]):
            assert obs["resolution"]["status"] == item["status"]
            if item["resolved"] is None:
                titles += obs["citation"]["cited_work"]["title"] is not None
    assert titles > 0  # unresolved references keep the title citeledger parsed from them
