"""Record schema v2: one record compared with a hand-written expected file field by field, the
digest over RFC 8785 JCS, v1 records still readable, and ``citeledger record`` taking every alias."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
from test_ledger_records import RETRACTED, resolve

from citeledger.cli.entry import main
from citeledger.records.receipts import sign_record
from citeledger.records.record import build_record
from citeledger.records.record_json import RECORD_SCHEMA_V1, content_digest, load_schema, validate_record
from citeledger.records.render.record_pages import render_ledger_html, render_ledger_text
from resolvers.notices.standing import standing_notice

EXPECTED = Path(__file__).parent / "golden" / "record_v2_expected.json"
WHEN = "2026-01-01T10:00:00.000000Z"
FINGERPRINT = "sha256:" + "ab" * 32
PAPER = {"work_id": "arxiv:0704.0001", "doi": "10.1000/j.a.1", "arxiv_id": "0704.0001", "title": "Paper A",
         "authors": ["Ann Author"], "year": 2007, "venue": None, "alt_dois": [],
         "sources": ["arxiv_snapshot", "crossref"], "categories": ["math.CO", "cs.CG"],
         "versions": [{"version": "v2", "created": "Tue, 3 Apr 2007 10:00:00 GMT"},
                      {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
         "journal_ref": "J. A 1 (2007) 1", "comments": "5 pages"}


def _row(index, raw, status, digit, **kw):
    row = {"observation_id": f"obs:{index}", "observation_digest": "sha256:" + digit * 64, "run_id": "run-1",
           "observed_at": WHEN, "citing_paper": "0704.0001", "reference_index": index, "raw": raw,
           "source": "arxiv_source", "status": status, "resolver_source": None, "work_id": None, "doi": None,
           "arxiv_id": None, "extracted_dois": [], "extracted_arxiv_ids": [], "score": None,
           "evidence": json.dumps({"rule": status})}
    return row | kw


def expected_case() -> dict:
    outbound = [
        _row(1, "Bee B. Paper B. J. B 2005. doi:10.1234/b", "verified_exact", "1", resolver_source="doi",
             work_id="w-b", doi="10.1234/b", extracted_dois=["10.1234/b"], score=1.0,
             source_observed_at="2025-12-01T00:00:00.000000Z"),
        _row(2, "A work nobody has catalogued, 1999.", "unresolved", "2"),
    ]
    inbound = [_row(3, "Author A. Paper A. 2007.", "verified_fuzzy", "3", citing_paper="paper-z", source="pdf_text",
                    resolver_source="raw_fallback", work_id="arxiv:0704.0001", score=0.9375)]
    notices = {"w-b": standing_notice("10.1234/b", [], ["retraction_watch_doi_nature", "crossref_updates"],
                                      "2025-08-22 00:00:00+00:00")}
    works = {"w-b": {"work_id": "w-b", "doi": "10.1234/b", "title": "Paper B", "authors": ["Bo Bee"], "year": 2005,
                     "venue": "J. B", "sources": ["works_jsonl"]}}
    provenance = {"run_catalog": {"run-1": FINGERPRINT}, "catalog_built_at": {FINGERPRINT: "2025-08-22T00:00:00+00:00"},
                  "notice_sources": {"retraction_watch_doi_nature": "2025-08-21T12:00:00+00:00"},
                  "citing_titles": {"paper-z": "Paper Z"}}
    generated = {"tables": {"current": "ledger view current", "notices": "ledger view notices",
                            "works": "catalog works"}, "as_of": WHEN}
    return build_record("arXiv:0704.0001v2", PAPER, outbound, inbound, notices, generated, works=works,
                                provenance=provenance)


def _differences(got, want, path="") -> list[str]:
    """Every field where ``got`` and ``want`` differ, by its path."""
    if isinstance(got, dict) and isinstance(want, dict):
        out = [f"{path}.{k}: missing" for k in want.keys() - got.keys()]
        out += [f"{path}.{k}: not expected" for k in got.keys() - want.keys()]
        return out + [d for k in want.keys() & got.keys() for d in _differences(got[k], want[k], f"{path}.{k}")]
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in _differences(g, w, f"{path}[{i}]")]
    same = got == want and type(got) is type(want)
    return [] if same else [f"{path}: got {got!r}, expected {want!r}"]


def test_a_record_equals_the_hand_written_one_field_by_field():
    record = expected_case()
    want = json.loads(EXPECTED.read_text())
    digest = record.pop("content_digest")
    assert _differences(record, want) == []
    # the digest: sha256 over RFC 8785 bytes, here (no float, ASCII keys) the sorted compact JSON
    text = json.dumps(want, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert digest == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_the_record_validates_once_it_has_its_receipt():
    record = sign_record(expected_case(), None, signed_at="2026-01-01T10:00:01Z")
    validate_record(record)
    bad = json.loads(json.dumps(record))
    bad["outbound"]["items"][0]["resolved_at"] = "2026-01-01 10:00:00+00:00"  # every time must be ISO Z
    with pytest.raises(jsonschema.ValidationError, match="is not valid"):
        validate_record(bad, check_digest=False)


def test_pages_open_with_as_of_and_show_the_new_fields():
    record = sign_record(expected_case(), None, signed_at="2026-01-01T10:00:01Z")
    text = render_ledger_text(record)
    first = text.splitlines()[0]
    assert first == ("As of 2026-01-01T10:00:00.000000Z, this record measured the resolution of 2 of 2 references, "
                     "the notices of the cited works of 1 of 1 references naming a catalog work and the citations "
                     "from the 1 references in this ledger that cite the paper; it did not measure citations from "
                     "outside this ledger.")
    assert "handle p-pisuz2mz5v | aliases: 0704.0001, arXiv:0704.0001, 0704.0001v1" in text
    assert "submitted 2007-04-02T19:18:42Z, last updated 2007-04-03T10:00:00Z" in text
    assert "paper-z \"Paper Z\" reference [3] (verified_fuzzy via raw_fallback)" in text
    assert "retraction_watch_doi_nature at 2025-08-22T00:00:00Z" in text
    assert "unsigned (the ledger has no signing key" in text
    page = render_ledger_html(record)
    assert f'<p class="as-of">{first}</p>' in page.replace("&#x27;", "'")


def test_a_v1_record_stays_readable():
    v1 = load_schema(RECORD_SCHEMA_V1)
    assert v1["properties"]["schema"]["const"] == "pith.paper-citation-record.v1"
    record = expected_case()
    assert record["schema"] == "citeledger.paper-citation-record.v2"
    old = {"schema": RECORD_SCHEMA_V1, "x": 1.0}
    assert content_digest(old) == "sha256:" + hashlib.sha256(b'{"schema":"pith.paper-citation-record.v1",'
                                                                      b'"x":1.0}').hexdigest()


def test_record_takes_every_alias_and_an_unknown_id_is_exit_1(tmp_path, default_catalog, capsys):
    resolve(tmp_path, default_catalog, RETRACTED + [
        {"citing_paper": "0704.0002", "reference_index": 1, "raw": "Nobody. Not in any catalog. J Nowhere 1999;1:1."}])
    base = ["--ledger", str(tmp_path / "ledger"), "--catalog", str(default_catalog), "--format", "json"]
    assert main(["record", "0704.0002", *base]) == 0
    record = json.loads(capsys.readouterr().out)
    aliases = record["paper"]["aliases"]
    assert {"arXiv:0704.0002", "10.48550/arXiv.0704.0002", record["paper"]["handle"]} <= set(aliases)
    for alias in [*aliases, "0704.0002v3", "ARXIV:0704.0002", "p-" + record["paper"]["identity_digest"][:14]]:
        assert main(["record", alias, *base]) == 0, alias
        again = json.loads(capsys.readouterr().out)
        assert again["content_digest"] == record["content_digest"], alias
    for unknown in ["9999.99999", "p-aaaaaaaaaa", "10.9999/nothing"]:
        assert main(["record", unknown, *base]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and unknown in err
