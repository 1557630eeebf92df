"""The record built with its canonical bytes (``record.build_record``, the one builder) is the record
made value by value (``record_reference.build_record_per_row``, the way records were built
before): the same values in the same order, the same content digest, the same error where one
is raised, and a file that is the JCS of that record; on varied ledgers (odd and control
characters, lone surrogates, floats such as 1e-07 and 0.5, nulls, re-observations, evidence of
every shape), with and without the writer's pass caches, and on the rows a real ledger pass gives."""
from __future__ import annotations

import json
import random

import orjson
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from record_reference import build_record_per_row
from test_ledger_records import RETRACTED, resolve
from test_records import GENERATED, WORK_A, WORK_B, obs

from citeledger.records import receipts, record_files
from citeledger.records.ledger_reads import papers_observations
from citeledger.records.paper import paper_forms
from citeledger.records.record import STATES, build_record
from citeledger.records.record_json import BuiltRecord, content_digest
from citeledger.records.render.record_pages import render_json
from resolvers.errors import JCSError
from resolvers.jcs import es_number, jcs_exact
from resolvers.notices.standing import EventType, NoticeEvent, notice_row, standing_notice

ODD_TEXT = ["plain", "", "Café Zürich — 東京", "ctl \x00\x01\x1b[31m\x7f\x85 end", "quote \" and \\ slash",
            "tab\there\nnew", "\ue000 private", "emoji 😀", "x: 1.0, y", "1e-5", "<b>&amp;</b>", "  spaced  "]
FLOATS = [0.5, 1e-07, 1e-05, 2.5e-5, 1e-4, 0.93, 1.0, -0.0, 0.0, 1e16, 1e21, 123456.789, 0.30000000000000004,
          2 ** 53 + 0.0, -3.9e-06, 9.999999999999999e-05]
EVIDENCE = [None, "", "not json {", '{"a": 1.0, "b": [2.00, -0.0, {"c": 1e2}], "d": "3.0"}', '"just text"', "5",
            "1.0", "NaN", '{"x": NaN, "y": Infinity}', '{"big": 123456789012345678901234567890}',
            '{"i": 9007199254740993}', '{"\ue000": 1, "\U0001f600": 2, "a": 0.5}', '{"s": "back\\\\slash 1.0"}',
            '{"tiny": 1e-7, "small": 0.00005, "ok": 0.25}', '[1.0, 2.5, [3.0]]', '{"nested": {"x": {"y": [0.0]}}}',
            '{"dup": 1, "dup": 2.0}', '{"u": "\\ud800"}', json.dumps({"features": {"year": 1.0, "venue": 0.0}})]


def notices():
    events = [NoticeEvent("10.1/r", EventType.RETRACTION, "2020-01-02", "10.1/n", "retraction_watch_csv")]
    return {"w-r": standing_notice("10.1/r", events, ["retraction_watch_csv"], "2025-08-22"),
            "w-c": notice_row("w-c", "10.1/c", standing_notice("10.1/c", [], ["crossref"], "2025-08-22")),
            "doi:10.1/x": notice_row("doi:10.1/x", "10.1/x", standing_notice("10.1/x", events, ["crossref"], None))}


WORKS = {"w-b": dict(WORK_B, sources=["works_jsonl"]), "w-r": {"work_id": "w-r", "title": "R \x1b", "year": 2006},
         "w-c": {"work_id": "w-c", "title": 1.5e-7, "authors": "One Author", "sources": ["crossref", "\ue001"]}}


def random_rows(rng: random.Random, paper: str, n: int) -> list[dict]:
    """A paper's rows, some references observed again (later, earlier, with another string)."""
    rows = []
    for index in range(1, n + 1):
        for again in range(rng.choice([1, 1, 1, 2, 3])):
            work = rng.choice([None, None, "w-b", "w-r", "w-c", "w-x"])
            status = rng.choice(list(STATES)) if work else rng.choice(["unresolved", "parse_uncertain",
                                                                              "malformed_identifier", "unavailable"])
            row = obs(paper, index, rng.choice(ODD_TEXT + [None]), status, work, rng.choice([None, "10.1/b"]),
                      rng.choice([None, "0704.0001"]), rng.choice([None, "doi", "raw_fallback"]),
                      rng.choice(FLOATS + [None, 1, 0]),
                      observed_at=f"2026-01-0{1 + again}T10:00:00.000000Z" if rng.random() < .9 else None,
                      dois=rng.choice([(), ("10.1/x",), ("10.1/b", "10.1/x")]))
            row["evidence"] = rng.choice(EVIDENCE)
            row["source"] = rng.choice(["pdf_text", None, "arxiv_source"])
            rows.append(row)
    return rows


def both(paper, work, outbound, inbound, provenance_of, **kw):
    """(built record or its error, per-row record or its error), each with the same unsigned receipt."""
    got = []
    for build in (build_record, build_record_per_row):
        try:
            record = build(paper, work, outbound, inbound, notices(), GENERATED, works=WORKS,
                           provenance=provenance_of(), **kw)
        except (JCSError, ValueError, KeyError, UnicodeError) as exc:
            got.append(type(exc))
            continue
        got.append(receipts.sign_record(record, None, "2026-01-01T00:00:00Z"))
    return got


def assert_same(built, per_row):
    if isinstance(per_row, type):
        assert built is per_row
        return
    assert json.dumps(built, ensure_ascii=False) == json.dumps(per_row, ensure_ascii=False)  # values, types, order
    assert built["content_digest"] == per_row["content_digest"] == content_digest(per_row)
    assert render_json(built) == jcs_exact(per_row) + b"\n"
    assert content_digest(json.loads(render_json(built))) == built["content_digest"]  # it verifies


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("cached", [False, True], ids=["alone", "pass-cache"])
def test_built_records_are_the_per_row_records(seed, cached):
    rng = random.Random(seed)
    paper = rng.choice(["arXiv:0704.0001", "paper-\x1b", "10.1234/b"])
    outbound = random_rows(rng, paper, rng.randint(0, 12))
    inbound = random_rows(rng, "other-paper", 3)
    shared = {"notice_cache": {}, "resolved_cache": {}}
    provenance = (lambda: shared) if cached else dict
    built, per_row = both(paper, rng.choice([None, WORK_A]), outbound, inbound, provenance,
                          page_cap=rng.choice([None, 1, 5, 1000]))
    assert_same(built, per_row)


def test_a_value_orjson_is_not_vouched_for_gets_the_checked_writers_bytes():
    """Ordinary rows and a row the fast bytes do not take (a float as a text column) both give a
    ``BuiltRecord`` whose file is the JCS of the record made value by value."""
    row = obs("p", 1, "A. Author. A title. 2001.", "verified_exact", "w-b", "10.1/b", score=0.5)
    assert isinstance(build_record("p", None, [row], [], notices(), GENERATED, works=WORKS), BuiltRecord)
    odd = dict(row, observation_id=1.5)
    built, per_row = both("p", None, [odd], [], dict)
    assert isinstance(built, BuiltRecord)
    assert_same(built, per_row)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ODD_TEXT), st.one_of(st.none(), st.floats(allow_nan=False),
                                                               st.integers(-2 ** 60, 2 ** 60)),
                          st.recursive(st.none() | st.booleans() | st.floats() | st.integers(-2 ** 70, 2 ** 70)
                                       | st.text(max_size=6),
                                       lambda inner: st.lists(inner, max_size=3)
                                       | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8)),
                max_size=5))
def test_random_values_give_the_per_row_record(cases):
    rows = []
    for index, (raw, score, evidence) in enumerate(cases, start=1):
        row = obs("p", index, raw, "verified_fuzzy", "w-b", score=score)
        try:
            row["evidence"] = json.dumps(evidence)
        except ValueError:
            row["evidence"] = str(evidence)
        rows.append(row)
    built, per_row = both("p", WORK_A, rows, [], dict)
    assert_same(built, per_row)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-4, max_value=2.0**53, exclude_max=True), st.booleans())
def test_orjson_writes_fractions_from_1e_4_as_ecmascript_does(size, negative):
    """What the built path relies on for scores and evidence: such a float needs no check. (Drawn
    in range, not filtered from all floats: a filter rejecting most draws fails Hypothesis' health
    check now and then.)"""
    value = -size if negative else size
    assume(not value.is_integer())
    assert orjson.dumps(value).decode() == es_number(value)


def test_the_rows_of_a_ledger_pass_give_the_per_row_records(tmp_path, default_catalog):
    """Rows as ``ledger_reads`` gives them (plain, the pass caches kept) build the same records both
    ways, and the written file is the JCS of that record."""
    resolve(tmp_path, default_catalog, RETRACTED)
    ledger = tmp_path / "ledger"
    papers = ["paper-x"]
    catalog = record_files.get_catalog(default_catalog)
    works = record_files.find_papers_works(catalog, papers)
    [(outbound, inbound, notice_rows)] = papers_observations(ledger, default_catalog, [
        (sorted(paper_forms(p, w)), w["work_id"] if w else None) for p, w in zip(papers, works)])
    provenance = record_files.provenance_of(ledger, catalog, {r["run_id"] for r in outbound})
    cited = catalog.work_rows([r["work_id"] for r in outbound if r.get("work_id")])
    [path] = record_files.write_records(papers, ledger, default_catalog)
    written = json.loads(path.read_bytes())
    assert path.read_bytes() == jcs_exact(written) + b"\n"
    made = []
    for build in (build_record, build_record_per_row):
        shared = dict(provenance, notice_cache={}, resolved_cache={}, rows_plain=True)
        made.append(receipts.sign_record(build("paper-x", works[0], outbound, inbound,
                                               {r["work_id"]: r for r in notice_rows}, written["generated_from"],
                                               works=cited, provenance=shared), None, "2026-01-01T00:00:00Z"))
    assert isinstance(made[0], BuiltRecord) and len(made[0]["outbound"]["items"]) == len(RETRACTED)
    assert_same(*made)
    assert written["content_digest"] == made[1]["content_digest"]


def test_a_built_record_changed_after_building_is_written_as_it_now_is():
    """The kept bytes are used only while the record holds what they encode."""
    row = obs("p", 1, "A. Author. A title. 2001.", "verified_exact", "w-b", "10.1/b", score=0.5)
    record = receipts.sign_record(build_record("p", None, [row], [], notices(), GENERATED, works=WORKS),
                                  None, "2026-01-01T00:00:00Z")
    record["paper"] = dict(record["paper"], id="q")
    assert render_json(record) == jcs_exact(record) + b"\n"
