"""citeledger's v2 record -> Pith's shape, speaking Pith: every member path of the published record
with a value of the type it has there (a paper with arXiv-linked references and an inbound citation,
built from the fixture ledger), Pith's names for states, sources, reasons and lanes, ids in Pith's
form and links as routes, citeledger's own facts only under the ``citeledger`` extension, digests by
Pith's rules; the strict schema and the consistency check pass the seed and every export, and fail
each way an export used to stray from Pith (or a tamper)."""
import copy
import json
from pathlib import Path

import pytest
from pith_fixtures import PITH, citation_record, seed_keys_missing, seed_type_gaps

from citeledger.pith import consistency, digests, export, schema
from citeledger.pith.pith_reader import read_citation_record
from citeledger.pith.states import PITH_SOURCES, PITH_STATES

REPO = Path(__file__).parent.parent
GOLDEN_V2 = REPO / "tests" / "golden" / "record_v2_expected.json"
LEDGER = PITH / "ledger"
UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


def _golden(**kwargs) -> dict:
    return export.to_pith_record(json.loads(GOLDEN_V2.read_text()), statements=3, **kwargs)


def test_the_golden_record_exports_with_every_member_and_pith_digests():
    v2 = json.loads(GOLDEN_V2.read_text())
    pith = _golden()
    assert schema.schema_errors(pith) == [] and consistency.problems(pith) == []
    assert seed_keys_missing(pith) == set()
    assert pith["context_digest"] == digests.context_digest(pith)
    assert all(o["observation_digest"] == digests.observation_digest(o) for o in pith["outbound"] + pith["inbound"])
    assert [o["citeledger"]["observation_id"] for o in pith["outbound"]] == \
        [i["observation_id"] for i in v2["outbound"]["items"]]  # the ledger's ids, under the extension
    assert all(o["observation_id"] != o["citeledger"]["observation_id"] for o in pith["outbound"])
    assert pith["paper"] == {"arxiv_id": "0704.0001", "last_updated": "2007-04-03T10:00:00Z", "latest_version": 2,
                             "primary_category": "math.CO", "snapshot_observed_at": "2025-08-22T00:00:00Z",
                             "submitted_at": "2007-04-02T19:18:42Z", "title": "Paper A"}
    assert pith["reference_resolution"]["state_counts"] == {**{s: 0 for s in PITH_STATES},
                                                            "verified_exact": 1, "unresolved": 1}
    assert pith["thesis"].startswith("As of 1 January 2026, this Paper Citation Record lists 2 of 2 outbound")
    assert pith["links"] == {"evidence": "/evidence", "html": "/paper/0704.0001/citation-record",
                             "integrity": "/paper/0704.0001/integrity", "json": "/paper/0704.0001/citation-record.json",
                             "paper": "/paper/0704.0001"}


def test_the_notice_lane_counts_the_references_whose_sources_answered_and_names_them():
    pith = _golden()
    lanes = {lane["lane"]: lane for lane in pith["coverage"]}
    notices = lanes["standing_notices"]
    assert (notices["records_observed"], notices["denominator"], notices["state"]) == (1, 1, "measured")
    assert (notices["source"], notices["source_observed_at"]) == ("crossref, retraction_watch", "2025-08-22T00:00:00Z")
    unresolved = pith["outbound"][1]
    assert unresolved["standing_notice"] == {"events": [], "reason": "canonical_work_link_unavailable",
                                             "source_receipts": [], "state": "unavailable"}
    assert unresolved["citeledger"]["notice"]["reason"] == "no_canonical_work"
    assert unresolved["citation"]["cited_work"]["work_id"] is None
    assert unresolved["citation"]["cited_work"]["title"] == "A work nobody has catalogued, 1999."
    linked = pith["outbound"][0]["standing_notice"]
    assert linked["observation"] == "No event found in the named queried sources as of 2025-08-22T00:00:00Z."
    assert pith["standing_sources"] == [{"observed_at": "2025-08-22T00:00:00Z", "source": "crossref"},
                                        {"observed_at": "2025-08-22T00:00:00Z", "source": "retraction_watch"}]
    assert lanes["external_citation_measurements"]["state"] == "unavailable"
    assert pith["external_citation_measurements"] == []
    inbound = pith["inbound"][0]["standing_notice"]  # no notice of the paper's own work was given
    assert (inbound["state"], inbound["reason"]) == ("unavailable", "notice_sources_unavailable")


def test_external_measurements_stay_per_source_and_dated():
    openalex = export.external_measurement("openalex", 12, "2026-08-01T00:00:00Z", "https://openalex.org/W1")
    crossref = export.external_measurement("crossref", 9, "2026-08-02T00:00:00Z", "10.1000/j.a.1")
    pith = _golden(measurements=[openalex, crossref])
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
    read = read_citation_record(_golden())
    assert read.digest_verified and all(r["digest_verified"] for r in read.rows)
    assert [(r["reference_index"], r["status"], r["doi"]) for r in read.rows if r["direction"] == "outbound"] == \
        [(i["reference_index"], i["status"], (i["resolved"] or {}).get("doi")) for i in v2["outbound"]["items"]]


@pytest.fixture(scope="module")
def arxiv_ledger(tmp_path_factory) -> tuple[Path, Path]:
    """The fixture ledger (tests/fixtures/pith/README.md): three arXiv papers with versions and
    dates, one with an OpenAlex citation count, the Retraction Watch excerpt as notice source."""
    from citeledger.cli import main

    work = tmp_path_factory.mktemp("pith-export")
    catalog, ledger = work / "catalog", work / "ledger"
    assert main(["catalog", "build", "--catalog", str(catalog), str(LEDGER / "arxiv.jsonl"),
                 str(LEDGER / "openalex" / "works"),
                 str(REPO / "data" / "sources" / "retraction_watch_doi_nature_excerpt.csv")]) == 0
    assert main(["resolve", str(LEDGER / "refs.jsonl"), "--catalog", str(catalog), "--ledger", str(ledger)]) == 0
    return catalog, ledger


def _exported(arxiv_ledger, capsys, paper: str = "2101.00001") -> dict:
    from citeledger.cli import main

    catalog, ledger = arxiv_ledger
    capsys.readouterr()
    assert main(["record", paper, "--format", "pith", "--ledger", str(ledger), "--catalog", str(catalog)]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_member_path_of_the_seed_carries_a_value_of_its_type(arxiv_ledger, capsys):
    pith = _exported(arxiv_ledger, capsys)
    assert len(pith["inbound"]) == 1 and sum(bool(o["citation"]["cited_paper"]) for o in pith["outbound"]) == 2
    assert seed_type_gaps(pith) == set()
    assert schema.schema_errors(pith) == [] and consistency.problems(pith) == []
    cited = pith["outbound"][1]["citation"]["cited_paper"]
    assert (cited["arxiv_id"], cited["version"], cited["submitted_at"], cited["last_updated"]) == \
        ("2103.00003", 3, "2021-03-01T08:00:00Z", "2021-05-03T08:00:00Z")
    citing = pith["inbound"][0]["citation"]["citing_paper"]
    assert (citing["arxiv_id"], citing["version"], citing["title"]) == ("2102.00002", 1,
                                                                         "Pipeline schedules without bubbles")
    assert {o["citation"]["citing_paper"]["version"] for o in pith["outbound"]} == {2}
    assert pith["caps"] == {"database_statements": 3, "inbound": 1000, "outbound": 1000}
    assert pith["external_citation_measurements"] == [{"measure": "cited_by_count", "observed_at": "2026-01-05T00:00:00Z",
                                                       "source": "openalex", "value": 17,
                                                       "work": "https://openalex.org/W4000000001"}]


def test_the_export_speaks_pith_and_keeps_citeledger_facts_under_the_extension(arxiv_ledger, capsys):
    import re

    pith = _exported(arxiv_ledger, capsys)
    observations = pith["outbound"] + pith["inbound"]
    assert all(re.match(UUID, o["observation_id"]) for o in observations)
    assert all(o["citeledger"]["observation_id"].startswith("obs:") for o in observations)
    works = [o["citation"]["cited_work"]["work_id"] for o in observations if o["citation"]["cited_work"]["work_id"]]
    assert works and all(re.match(UUID, w) for w in works)
    assert {s["source"] for s in pith["standing_sources"]} <= set(PITH_SOURCES)
    assert {lane["state"] for lane in pith["coverage"]} <= {"measured", "unavailable"}
    assert set(pith["reference_resolution"]["state_counts"]) == set(PITH_STATES)
    routes = [v for o in observations for v in o["links"].values()] + list(pith["links"].values())
    assert all(r.startswith("/") and "../" not in r for r in routes)
    fragment = next(o for o in pith["outbound"] if o["citeledger"]["status"] == "parse_uncertain")
    assert fragment["citation"]["cited_work"]["title"] == "E., and Stoica, I."  # the cited text kept
    assert set(pith) - set(citation_record()) == {"citeledger"}
    for obs in observations:
        assert set(obs) - set(citation_record()["outbound"][0]) == {"citeledger"}


def test_records_format_pith_writes_the_same_bytes_record_prints(arxiv_ledger, capsys):
    from citeledger.cli import main

    catalog, ledger = arxiv_ledger
    assert main(["records", "--format", "pith", "--ledger", str(ledger), "--catalog", str(catalog)]) == 0
    files = sorted((ledger / "records" / "pith").glob("*.json"))
    assert [f.name for f in files] == ["2101.00001.json", "2102.00002.json"]
    for file in files:
        pith = json.loads(file.read_bytes())
        assert schema.schema_errors(pith) == [] and consistency.problems(pith) == []
        assert (file.parent / pith["citeledger"]["files"]["html"]).is_file()
        assert (file.parent / pith["citeledger"]["files"]["record"]).is_file()
    capsys.readouterr()
    assert main(["record", "2101.00001", "--format", "pith", "--ledger", str(ledger), "--catalog", str(catalog)]) == 0
    assert capsys.readouterr().out.encode() == files[0].read_bytes()


def _set(path: str, value):
    """A change of one member, by dotted path (``outbound.0.resolution.status``)."""
    def change(record):
        *head, last = path.split(".")
        target = record
        for part in head:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value
    return change


# What an export used to say outside Pith's words (and plain tampers): each fails the schema or the
# consistency check, whichever the record is (the seed, or citeledger's export), the digests recomputed
# for a change the schema must catch by itself.
TAMPERS = {
    "zeroed context digest": (_set("context_digest", "sha256:" + "0" * 64), False),
    "counts that do not add up": (_set("reference_resolution.state_counts.verified_exact", 7), True),
    "displayed is not the list": (_set("reference_resolution.displayed", 99), True),
    "a lane observing more than its denominator": (_set("coverage.0.records_observed", 999), True),
    "a notice source outside Pith's names": (_set("standing_sources.0.source", "retraction_watch_csv"), True),
    "lane state partial": (_set("coverage.1.state", "partial"), True),
    "lane state not_measured": (_set("coverage.3.state", "not_measured"), True),
    "notice reason not_checked": (_set("outbound.0.standing_notice", {"events": [], "reason": "not_checked",
                                                                      "source_receipts": [], "state": "unavailable"}),
                                  True),
    "state unavailable": (_set("outbound.0.resolution.status", "unavailable"), True),
    "state_counts.unavailable": (_set("reference_resolution.state_counts.unavailable", 0), True),
    "an obs: id": (_set("outbound.0.observation_id", "obs:0123456789abcdef"), True),
    "a relative file link": (_set("links.html", "../2101.00001.html"), True),
    "a null cap": (_set("caps.database_statements", None), True),
    "a member outside the extension": (_set("outbound.0.citation.raw", "x"), True),
    "a re-dated as_of": (_set("as_of", "2031-01-01T00:00:00Z"), False),
}


@pytest.mark.parametrize("what", sorted(TAMPERS))
def test_each_tamper_fails_the_schema_or_the_consistency_check(arxiv_ledger, capsys, what):
    change, redigest = TAMPERS[what]
    for name, record in (("seed", citation_record()), ("export", _exported(arxiv_ledger, capsys))):
        assert schema.schema_errors(record) == [] and consistency.problems(record) == [], name
        tampered = copy.deepcopy(record)
        change(tampered)
        if redigest:
            tampered = digests.with_digests(tampered)
        assert schema.schema_errors(tampered) or consistency.problems(tampered), (name, what)


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
        pith = export.to_pith_record(v2, statements=3, files={"record": file.name})
        assert schema.schema_errors(pith) == [] and consistency.problems(pith) == [], file.name
        assert seed_keys_missing(pith) == set(), file.name
        assert pith["reference_resolution"]["total_outbound_references"] == v2["counts"]["references"]
        lane, ours = pith["coverage"][1], v2["coverage"]["notices"]
        assert (lane["records_observed"], lane["denominator"]) == (ours["observed"], ours["denominator"])
        for obs, item in zip(pith["outbound"], v2["outbound"]["items"]):
            assert obs["citeledger"]["status"] == item["status"]
            if item["resolved"] is None:
                titles += obs["citation"]["cited_work"]["title"] is not None
    assert titles > 0  # references with no work keep the text they cited
