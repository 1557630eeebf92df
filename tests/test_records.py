"""Citation records: shape (schema), digest stability, outbound/inbound, notices, pages."""
from __future__ import annotations

import copy
import hashlib
import json
from datetime import datetime, timezone

import jsonschema
import pytest

from citeledger.records.paper import select_rows
from citeledger.records.receipts import sign_record
from citeledger.records.record import STATES, build_record
from citeledger.records.record_json import content_digest, validate_record
from citeledger.records.render.record_pages import render_html_pages, render_ledger_html, render_ledger_text
from resolvers.notices.standing import EventType, NoticeEvent, notice_row, standing_notice

RUN = "run-2026-01-01"
WHEN = "2026-01-01T10:00:00.000000Z"
GENERATED = {"tables": {"current": "data/ledger/observations", "works": "data/catalog/works",
                        "notices": "data/ledger/notices"}, "as_of": WHEN}


def obs(citing, index, raw, status, work_id=None, doi=None, arxiv_id=None, resolver=None, score=None,
        observed_at=WHEN, dois=(), arxiv_ids=()):
    """One observation row with the contract's columns."""
    oid = hashlib.sha256(f"{citing}|{index}|{raw}".encode()).hexdigest()[:32]
    return {
        "observation_id": oid,
        "observation_digest": "sha256:" + hashlib.sha256((oid + status + str(observed_at)).encode()).hexdigest(),
        "run_id": RUN, "observed_at": observed_at, "citing_paper": citing, "reference_index": index,
        "raw": raw, "source": "pdf_text", "status": status, "resolver_source": resolver,
        "work_id": work_id, "doi": doi, "arxiv_id": arxiv_id, "extracted_dois": list(dois),
        "extracted_arxiv_ids": list(arxiv_ids), "score": score,
        "evidence": json.dumps({"rule": status}),
    }


WORK_A = {"work_id": "w-a", "doi": None, "arxiv_id": "0704.0001", "title": "Paper A", "authors": ["Ann Author"],
          "year": 2007, "venue": None}
WORK_B = {"work_id": "w-b", "doi": "10.1234/b", "arxiv_id": None, "title": "Paper B", "authors": ["Bo Bee"],
          "year": 2005, "venue": "J. B"}
RETRACTED_DOI = "10.1016/j.jclinane.2006.02.005"
CORRECTED_DOI = "10.1371/journal.pbio.0040031"

ROWS = [
    obs("arXiv:0704.0001", 1, "Bee B. Paper B. J. B 2005. doi:10.1234/b", "verified_exact", "w-b", "10.1234/b",
        resolver="doi", score=1.0, dois=["10.1234/b"]),
    obs("arXiv:0704.0001", 2, "Some retracted anaesthesia paper, J Clin Anesth 2006 <script>alert(1)</script>",
        "verified_exact", "w-r", RETRACTED_DOI, resolver="doi", score=1.0, dois=[RETRACTED_DOI]),
    obs("arXiv:0704.0001", 3, "A work nobody has catalogued, 1999.", "unresolved"),
    obs("arXiv:0704.0001", 4, "Foo et al. arXiv:1501.1234", "malformed_identifier", arxiv_ids=[]),
    obs("arXiv:0704.0001", 5, "A corrected PLoS Biology paper 2006", "verified_fuzzy", "w-c", CORRECTED_DOI,
        resolver="raw_fallback", score=0.93),
    obs("10.1234/b", 1, "Author A. Paper A. arXiv:0704.0001", "verified_exact", "w-a", None, "0704.0001",
        resolver="arxiv_id", score=1.0, arxiv_ids=["0704.0001"]),
    obs("10.1234/b", 2, "E., and Stoica, I.", "parse_uncertain"),
]


def _notices():
    retracted = standing_notice(RETRACTED_DOI, [NoticeEvent(RETRACTED_DOI, EventType.RETRACTION, None, None,
                                                            "retraction_watch_doi_nature")],
                                ["retraction_watch_doi_nature"], "2025-08-22")
    corrected = standing_notice(CORRECTED_DOI, [NoticeEvent(CORRECTED_DOI, EventType.CORRECTION, None, None,
                                                            "retraction_watch_doi_nature")],
                                ["retraction_watch_doi_nature"], "2025-08-22")
    clean = standing_notice("10.1234/b", [], ["retraction_watch_doi_nature"], "2025-08-22")
    # w-c comes as a row of the `notices` view (events as a JSON string), the others as objects
    return {"w-r": retracted, "w-c": notice_row("w-c", CORRECTED_DOI, corrected), "w-b": clean}


def record_of(paper_id, work, rows=ROWS, **kw):
    """The record as it is written: built, then with its receipt (unsigned here: no key)."""
    outbound, inbound = select_rows(paper_id, work, rows)
    return unsigned(build_record(paper_id, work, outbound, inbound, _notices(), GENERATED, **kw))


def unsigned(record):
    return sign_record(record, None, signed_at="2026-01-01T10:00:01Z")


def test_a_cites_b_shows_in_both_records():
    a = record_of("arXiv:0704.0001", WORK_A)
    b = record_of("10.1234/b", WORK_B)
    assert [i["resolved"]["work_id"] for i in a["outbound"]["items"] if i["resolved"]] == ["w-b", "w-r", "w-c"]
    assert [(i["citing_paper"], i["reference_index"]) for i in b["inbound"]["items"]] == [("arXiv:0704.0001", 1)]
    assert [(i["citing_paper"], i["reference_index"]) for i in a["inbound"]["items"]] == [("10.1234/b", 1)]
    assert b["inbound"]["items"][0]["observation_id"] == ROWS[0]["observation_id"]
    # A's references do not leak into B's outbound and vice versa
    assert b["counts"]["references"] == 2 and a["counts"]["references"] == 5


def test_every_record_validates():
    records = [record_of("arXiv:0704.0001", WORK_A), record_of("10.1234/b", WORK_B),
               record_of("0704.0001v2", WORK_A, page_cap=1), record_of("nobody", None),
               unsigned(build_record("x", None, [], [], {}, {}))]
    for record in records:
        validate_record(record)
        validate_record(json.loads(json.dumps(record)))  # as written to disk and read back


def test_counts_have_all_seven_states_in_contract_order():
    a = record_of("arXiv:0704.0001", WORK_A)
    assert list(a["counts"]["by_status"]) == list(STATES) == [
        "parse_uncertain", "verified_exact", "metadata_mismatch", "verified_fuzzy", "malformed_identifier",
        "unavailable", "unresolved"]
    assert a["counts"]["by_status"] == {"parse_uncertain": 0, "verified_exact": 2, "metadata_mismatch": 0,
                                        "verified_fuzzy": 1, "malformed_identifier": 1, "unavailable": 0,
                                        "unresolved": 1}
    assert a["counts"]["cited_works_by_standing"]["retracted"] == 1
    assert a["counts"]["cited_works_by_standing"]["corrected"] == 1
    assert a["counts"]["cited_works_by_standing"]["none"] == 1


def test_notices_on_outbound_entries():
    items = {i["reference_index"]: i for i in record_of("arXiv:0704.0001", WORK_A)["outbound"]["items"]}
    assert items[2]["notice"]["standing"] == "retracted"
    assert items[5]["notice"]["standing"] == "corrected"  # fed as a notices-view row
    assert items[1]["notice"]["state"] == "measured" and items[1]["notice"]["events"] == []
    assert items[3]["notice"] == {"state": "unavailable", "reason": "no_canonical_work", "standing": "unknown",
                                  "events": [], "sources_checked": [], "checked_at": None, "notes": [],
                                  "receipts": []}
    a2 = build_record("arXiv:0704.0001", WORK_A, ROWS[:5], [], {}, GENERATED)
    assert a2["outbound"]["items"][0]["notice"]["reason"] == "not_checked"
    assert a2["coverage"]["notices"]["observed"] == 0 and a2["coverage"]["notices"]["denominator"] == 3


def test_outbound_entry_carries_the_observation():
    item = record_of("arXiv:0704.0001", WORK_A)["outbound"]["items"][0]
    row = ROWS[0]
    assert item["observation_id"] == row["observation_id"]
    assert item["observation_digest"] == row["observation_digest"]
    assert item["cited_as"] == {"raw": row["raw"], "dois": ["10.1234/b"], "arxiv_ids": []}
    assert item["resolved"]["doi"] == "10.1234/b" and item["resolver_source"] == "doi"
    assert item["resolved_at"] == WHEN and item["evidence"] == {"rule": "verified_exact"}


def test_digest_is_stable_and_covers_the_content():
    first = record_of("arXiv:0704.0001", WORK_A)
    again = record_of("arXiv:0704.0001", WORK_A, rows=list(reversed(ROWS)))
    assert first["content_digest"] == again["content_digest"]
    assert first["content_digest"] == content_digest(first)
    changed = [dict(r) for r in ROWS]
    changed[2]["status"] = "unavailable"
    assert record_of("arXiv:0704.0001", WORK_A, rows=changed)["content_digest"] != first["content_digest"]
    tampered = copy.deepcopy(first)
    tampered["outbound"]["items"][1]["notice"]["standing"] = "none"
    with pytest.raises(ValueError, match="digest"):
        validate_record(tampered)


def test_latest_observation_per_reference_wins():
    older = obs("arXiv:0704.0001", 3, "A work nobody has catalogued, 1999.", "unavailable",
                observed_at="2025-12-01T00:00:00.000000Z")
    a = record_of("arXiv:0704.0001", WORK_A, rows=[older] + ROWS)
    assert a["counts"]["references"] == 5 and a["counts"]["by_status"]["unavailable"] == 0


def test_page_cap_is_stated_and_counts_stay_whole():
    a = record_of("arXiv:0704.0001", WORK_A, page_cap=2)
    assert a["outbound"] | {"items": None} == {"total": 5, "listed": 2, "cap": 2, "truncated": True, "items": None}
    assert [i["reference_index"] for i in a["outbound"]["items"]] == [1, 2]
    assert a["counts"]["references"] == 5 and a["page_caps"] == {"outbound": 2, "inbound": 2}
    # the pages list every reference the builder kept, in pages of the cap; the file's record only its listed ones
    assert "\n[5] " in render_ledger_text(a).split("\nReferences (")[1] and len(render_html_pages(a)) == 3
    read_back = json.loads(json.dumps(a))
    listed = render_ledger_text(read_back).split("\nReferences (")[1]
    assert listed.startswith("2 of 5 listed, cut at 2)") and "\n[5] " not in listed
    assert len(render_html_pages(read_back)) == 1


def test_schema_rejects_a_record_missing_a_state():
    a = record_of("arXiv:0704.0001", WORK_A)
    del a["counts"]["by_status"]["unresolved"]
    with pytest.raises(jsonschema.ValidationError):
        validate_record(a, check_digest=False)
    b = record_of("arXiv:0704.0001", WORK_A)
    b["outbound"]["items"][2]["notice"]["standing"] = "none"  # unavailable notices must say unknown
    with pytest.raises(jsonschema.ValidationError):
        validate_record(b, check_digest=False)


def test_text_page_marks_the_retracted_work():
    text = render_ledger_text(record_of("arXiv:0704.0001", WORK_A))
    assert text.startswith("As of 2026-01-01T10:00:00.000000Z, this record measured the resolution of 5 of 5 ")
    assert '\nCitation ledger of arXiv:0704.0001 "Paper A"\n' in text
    notices_part, references_part = text.split("\nReferences (", 1)
    # the retracted work is listed up front among the works with notices, and marked in the list
    assert "Cited works with notices (2 works, 2 references):\n[2] w-r" in notices_part
    assert "Notices: 1 cited work retracted, 1 cited work corrected." in notices_part
    retracted = [b for b in references_part.split("\n[") if "!! RETRACTED" in b]
    assert len(retracted) == 1 and retracted[0].startswith("2] verified exactly (verified_exact)")
    assert "verified exactly  " in text and "(verified_exact: " in text and "(unavailable: " in text
    assert "Cited by papers in this ledger (1 of 1 listed)" in text and "10.1234/b reference [1]" in text


def test_html_page_is_escaped_and_marks_the_retracted_work():
    page = render_ledger_html(record_of("arXiv:0704.0001", WORK_A))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count('class="n-retracted"') == 1 and page.count("n-retracted\" id=") == 1  # notices, list
    assert '<a href="#ref-2">[2]</a>' in page and 'id="ref-2"' in page
    assert '<span class="marker">!! RETRACTED</span>' in page
    assert page.count('class="n-corrected"') == 1 and page.count("n-corrected\" id=") == 1


def _current_table(con, observed_at_type: str, rows: list[dict]) -> None:
    """A DuckDB table shaped like the ledger's ``current`` view, holding ``rows``."""
    con.execute(f"""CREATE TABLE current (observation_id VARCHAR, observation_digest VARCHAR, run_id VARCHAR,
        observed_at {observed_at_type}, citing_paper VARCHAR, reference_index INTEGER, raw VARCHAR, source VARCHAR,
        status VARCHAR, resolver_source VARCHAR, work_id VARCHAR, doi VARCHAR, arxiv_id VARCHAR,
        extracted_dois VARCHAR[], extracted_arxiv_ids VARCHAR[], score DOUBLE, evidence VARCHAR)""")
    cols = list(ROWS[0])
    for r in rows:
        con.execute(f"INSERT INTO current VALUES ({','.join('?' * len(cols))})", [r[c] for c in cols])


def test_rows_straight_from_duckdb():
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    _current_table(con, "TIMESTAMP", [dict(r, observed_at=datetime(2026, 1, 1, 10, 0, 0)) for r in ROWS])
    cur = con.execute("SELECT * FROM current")
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, t)) for t in cur.fetchall()]
    from_db = record_of("arXiv:0704.0001", WORK_A, rows=rows)
    validate_record(from_db)
    assert from_db["content_digest"] == record_of("arXiv:0704.0001", WORK_A)["content_digest"]
    aware = [dict(r, observed_at=datetime(2026, 1, 1, 10, tzinfo=timezone.utc)) for r in rows]
    assert record_of("arXiv:0704.0001", WORK_A, rows=aware)["content_digest"] == from_db["content_digest"]


def test_documented_queries_run_and_find_the_retracted_citation():
    """Every SQL block of docs/user/queries-notices.md runs over views shaped like the ledger's."""
    import re
    from pathlib import Path

    from resolvers.notices.standing import notice_from_dict

    duckdb = pytest.importorskip("duckdb")
    doc = Path(__file__).parent.parent / "docs" / "user" / "queries-notices.md"
    blocks = re.findall(r"```sql\n(.*?)```", doc.read_text(), re.S)
    assert len(blocks) == 4
    con = duckdb.connect()
    _current_table(con, "VARCHAR", ROWS)
    con.execute("CREATE TABLE works (work_id VARCHAR, doi VARCHAR, arxiv_id VARCHAR, title VARCHAR, year INT)")
    for w in (WORK_A, WORK_B):
        con.execute("INSERT INTO works VALUES (?,?,?,?,?)", [w[k] for k in ("work_id", "doi", "arxiv_id", "title", "year")])
    con.execute("""CREATE TABLE notices (work_id VARCHAR, doi VARCHAR, state VARCHAR, reason VARCHAR,
        standing VARCHAR, events VARCHAR, sources_checked VARCHAR[], checked_at VARCHAR)""")
    for work_id, n in _notices().items():
        n = notice_from_dict(n) if isinstance(n, dict) else n
        r = notice_row(work_id, None, n)
        con.execute("INSERT INTO notices VALUES (?,?,?,?,?,?,?,?)", [r[k] for k in (
            "work_id", "doi", "state", "reason", "standing", "events", "sources_checked", "checked_at")])
    retracted, unchecked, counts, most_cited = (con.execute(sql).fetchall() for sql in blocks)
    assert [(r[0], r[1]) for r in retracted] == [("arXiv:0704.0001", 2)]
    assert unchecked == [("10.1234/b", 1)]  # w-a has no notice row: not checked, not clean
    assert ("arXiv:0704.0001", 5, 0, 2, 0, 1, 1, 0, 1) in counts
    assert {r[0] for r in most_cited} == {"w-a", "w-b", "w-c", "w-r"}


def test_a_retracted_work_beyond_the_page_cap_is_still_listed():
    record = record_of("arXiv:0704.0001", WORK_A, page_cap=1)
    validate_record(record)
    assert record["outbound"]["truncated"] and [i["reference_index"] for i in record["outbound"]["items"]] == [1]
    assert [(i["reference_index"], i["notice"]["standing"]) for i in record["with_notices"]] == \
        [(2, "retracted"), (5, "corrected")]
    assert "!! RETRACTED" in render_ledger_text(record)


def test_evidence_floats_become_what_jcs_digests_at_any_depth():
    """Integral floats in the evidence JSON, nested in objects and lists, become integers (what JCS
    writes); other floats, text that looks like a number and the nesting stay as they were."""
    evidence = '{"a": [1.0, {"b": -0.0, "c": 2.5, "d": "3.0"}], "e": 1e2, "f": [[4.0]], "g": 0.93}'
    row = dict(ROWS[0], evidence=evidence)
    item = build_record("arXiv:0704.0001", WORK_A, [row], [], {}, GENERATED)["outbound"]["items"][0]
    assert item["evidence"] == {"a": [1, {"b": 0, "c": 2.5, "d": "3.0"}], "e": 100, "f": [[4]], "g": 0.93}
    assert [type(v) for v in (item["evidence"]["a"][0], item["evidence"]["e"], item["evidence"]["f"][0][0])] == [int] * 3


def test_a_pass_cache_of_resolved_works_changes_no_record():
    """Records built with one ``resolved_cache`` for the pass (each cited work's view made once and
    shared) are the records built without it, byte for byte; the cached view is per work and ids."""
    works = {"w-b": dict(WORK_B, sources=["crossref"]), "w-r": {"work_id": "w-r", "title": "R", "year": 2006}}
    shared = {"resolved_cache": {}}
    for paper in ("arXiv:0704.0001", "10.1234/b"):
        outbound, inbound = select_rows(paper, WORK_A, ROWS)
        alone = build_record(paper, WORK_A, outbound, inbound, _notices(), GENERATED, works=works)
        cached = build_record(paper, WORK_A, outbound, inbound, _notices(), GENERATED, works=works,
                              provenance=shared)
        assert json.dumps(cached) == json.dumps(alone)
    assert {key[0] for key in shared["resolved_cache"]} == {"w-b", "w-r", "w-c", "w-a"}
    row = dict(ROWS[0], doi="10.1234/other")  # the same work under another DOI: its own view
    other = build_record("arXiv:0704.0001", WORK_A, [row], [], {}, GENERATED, works=works, provenance=shared)
    assert other["outbound"]["items"][0]["resolved"]["doi"] == "10.1234/other"
