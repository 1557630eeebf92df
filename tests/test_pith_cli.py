"""Pith's record formats on the command line: ``record/records --format pith`` over the embedded
sample pass Pith's schema with every member of the published record; a Pith record signed with a
key the test makes verifies through ``verify --pith-key`` and every tamper fails naming why;
``import-pith`` -> ``query`` -> ``compare`` on the published records sets Pith's states beside
citeledger's, and leaves citeledger's ``current`` as it was."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import duckdb
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pith_fixtures import PITH, citation_record, number_record, seed_keys_missing

from citeledger.cli import main
from citeledger.pith import consistency, digests, pith_receipts, schema
from citeledger.records import pith_files
from citeledger.records.record_json import validate_record
from resolvers.jcs import jcs

REPO = Path(__file__).parent.parent
SEED_RECORD = PITH / "pith-paper-citation-record-2501.00254.json"
SEED_NUMBER = PITH / "pith-number-record-2509.00217.json"


@pytest.fixture(scope="module")
def sample_ledger(tmp_path_factory, default_catalog) -> Path:
    """The embedded sample resolved against the embedded catalog, with its records written."""
    ledger = tmp_path_factory.mktemp("pith-ledger") / "ledger"
    assert main(["resolve", str(REPO / "data" / "sample_references.jsonl"), "--catalog", str(default_catalog),
                 "--ledger", str(ledger), "--run-id", "sample"]) == 0
    return ledger


def test_the_published_record_passes_the_schema_and_records_validate_sends_it_there():
    assert schema.schema_errors(citation_record()) == []
    validate_record(citation_record())  # Pith's, under the name citeledger's v1 carried
    broken = citation_record()
    del broken["reference_resolution"]["displayed"]
    with pytest.raises(Exception, match="displayed"):
        validate_record(broken)


def test_records_format_pith_of_the_sample_pass_the_schema_with_every_member(sample_ledger, default_catalog, capsys):
    common = ["--ledger", str(sample_ledger), "--catalog", str(default_catalog)]
    assert main(["records", "--format", "pith", *common]) == 0
    files = sorted((sample_ledger / "records" / "pith").glob("*.json"))
    assert len(files) == 5  # the sample's five citing papers
    for file in files:
        pith = json.loads(file.read_bytes())
        assert schema.schema_errors(pith) == [], file.name
        assert seed_keys_missing(pith) == set(), file.name
        assert pith["context_digest"] == digests.context_digest(pith)
        assert file.read_bytes() == jcs(pith) + b"\n"  # written as RFC 8785 bytes
        assert (file.parent / pith["citeledger"]["files"]["html"]).is_file()  # citeledger's own page beside it
        assert consistency.problems(pith) == []
        unlinked = [o["standing_notice"] for o in pith["outbound"] if o["citation"]["cited_work"]["work_id"] is None]
        assert all(n["state"] == "unavailable" and n["reason"] for n in unlinked)
    capsys.readouterr()
    assert main(["record", "arXiv:2212.11766v1", "--format", "pith", *common]) == 0
    assert capsys.readouterr().out.encode() == (sample_ledger / "records" / "pith" / "2212.11766.json").read_bytes()


def test_sign_without_a_key_or_without_pith_is_a_usage_error(sample_ledger, default_catalog, capsys):
    common = ["--ledger", str(sample_ledger), "--catalog", str(default_catalog)]
    assert main(["record", "2212.11766", "--sign", *common]) == 2
    assert "--sign is for --format pith" in capsys.readouterr().err
    assert main(["record", "2212.11766", "--format", "pith", "--sign", *common]) == 2
    assert "no signing key" in capsys.readouterr().err
    assert main(["records", "--format", "pith", "--sign", *common]) == 2  # before any record is written
    captured = capsys.readouterr()
    assert "no signing key" in captured.err and "written" not in captured.out


def _key_file(tmp_path: Path, key_id: str, private: Ed25519PrivateKey) -> Path:
    raw = private.public_key().public_bytes_raw()
    path = tmp_path / f"{key_id}.json"
    path.write_text(json.dumps({"key_id": key_id, "algorithm": "ed25519", "public_key_b64": base64.b64encode(raw).decode()}))
    return path


def _flip(digest: str) -> str:
    head, hexes = (digest[:7], digest[7:]) if digest.startswith("sha256:") else ("", digest)
    return head + ("1" if hexes[0] != "1" else "2") + hexes[1:]


CITATION_TAMPERS = [
    ("content", lambda r: r["outbound"][0]["resolution"].update(status="verified_exact"), ["content_changed"]),
    ("context digest", lambda r: r.update(context_digest=_flip(r["context_digest"])), ["digest_changed"]),
    ("receipt digest", lambda r: r["receipt"].update(canonical_sha256=_flip(r["receipt"]["canonical_sha256"])),
     ["digest_changed", "signature_invalid"]),
    ("signature", lambda r: r["receipt"].update(
        signature_b64=base64.b64encode(Ed25519PrivateKey.generate().sign(b"x")).decode()), ["signature_invalid"]),
    ("key id", lambda r: r["receipt"].update(key_id="another-key"), ["key_id_mismatch"]),
    ("fingerprint", lambda r: r["receipt"].update(public_key_fingerprint="0" * 32), ["fingerprint_mismatch"]),
    ("unsigned", lambda r: r["receipt"].update(signature_status="unsigned"), ["not_signed"]),
    ("algorithm", lambda r: r["receipt"].update(algorithm="rsa"), ["unsupported"]),
    ("receipt gone", lambda r: r.pop("receipt"), ["no receipt"]),
]


def _failures(out: str, path: Path) -> list[str]:
    line = next(line for line in out.splitlines() if line.startswith(f"{path}:"))
    if line.endswith(": ok"):
        return []
    parts = [part.split(":")[0] for part in line.split(": FAILED: ", 1)[1].split("; ")]
    return [p for p in parts if p != "inconsistent"]  # the receipt's failures (the content's: test_pith_verify)


def test_a_pith_record_signed_with_the_test_key_verifies_and_every_tamper_fails_naming_why(tmp_path, capsys):
    private = Ed25519PrivateKey.generate()
    key = _key_file(tmp_path, "test-key-1", private)
    signing = pith_receipts.PithSigningKey("test-key-1", private)
    signed = dict(citation_record(), receipt=pith_receipts.sign_citation_record(
        citation_record(), signing, "2026-09-01T00:00:00Z", "test-builder"))
    number = dict(number_record(), **pith_receipts.sign_canonical_record(
        number_record()["canonical_record"], signing, "2026-09-01T00:00:00Z", "test-builder"))
    files = {"signed": signed, "number": number}
    for what, tamper, _ in CITATION_TAMPERS:
        copy = json.loads(json.dumps(signed))
        tamper(copy)
        files[what] = copy
    paths = {name: tmp_path / f"{name.replace(' ', '-')}.json" for name in files}
    for name, doc in files.items():
        paths[name].write_text(json.dumps(doc, indent=1))
    capsys.readouterr()
    assert main(["verify", "--pith-key", str(key), str(paths["signed"]), str(paths["number"])]) == 0
    assert main(["verify", "--pith-key", str(key), *map(str, paths.values())]) == 1
    out = capsys.readouterr().out
    assert _failures(out, paths["signed"]) == _failures(out, paths["number"]) == []
    for what, _, expected in CITATION_TAMPERS:
        assert _failures(out, paths[what]) == expected, what
    assert main(["verify", "--pith-key", str(PITH / "pith-signing-key.json"), str(paths["signed"])]) == 1
    assert _failures(capsys.readouterr().out, paths["signed"]) == ["key_id_mismatch", "fingerprint_mismatch",
                                                                   "signature_invalid"]


def test_the_published_number_record_verifies_under_pith_key_through_the_cli(capsys):
    assert main(["verify", "--pith-key", str(PITH / "pith-signing-key.json"), str(SEED_NUMBER)]) == 0
    assert capsys.readouterr().out.strip() == f"{SEED_NUMBER}: ok"


def test_the_ledger_key_signs_pith_records_and_keys_show_gives_the_key_to_verify_them(
        tmp_path, sample_ledger, default_catalog, capsys):
    ledger = tmp_path / "ledger"
    assert main(["resolve", str(REPO / "data" / "sample_references.jsonl"), "--catalog", str(default_catalog),
                 "--ledger", str(ledger)]) == 0
    assert main(["keys", "init", "--ledger", str(ledger)]) == 0
    printed = capsys.readouterr().out
    assert main(["keys", "show", "--ledger", str(ledger), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert f"key id {doc['key_id']}, fingerprint {doc['fingerprint_sha256_hex']}" in printed
    key = tmp_path / "ledger-key.json"
    key.write_text(json.dumps(doc))
    assert main(["records", "--format", "pith", "--sign", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    files = sorted((ledger / "records" / "pith").glob("*.json"))
    assert len(files) == 5
    for file in files:
        pith = json.loads(file.read_bytes())
        assert pith["receipt"]["key_id"] == doc["key_id"]
        assert schema.schema_errors({k: v for k, v in pith.items() if k != "receipt"}) == []
    capsys.readouterr()
    assert main(["verify", "--pith-key", str(key), *map(str, files)]) == 0
    assert main(["verify", "--pith-key", str(PITH / "pith-signing-key.json"), str(files[0])]) == 1


def _seed_references(path: Path) -> None:
    """References of 2501.00254 as Pith's record shows them: the text Pith parsed as the title (its
    BibTeX artefacts and author fragments among them), or the title and arXiv id of the paper Pith
    names as cited. The embedded catalog holds none of those papers."""
    rows = []
    for obs in citation_record()["outbound"]:
        citation = obs["citation"]
        paper, title = citation["cited_paper"], (citation["cited_work"]["title"] or "").strip()
        raw = f"{paper['title']}. arXiv:{paper['arxiv_id']}" if paper else title
        if raw:
            rows.append({"citing_paper": "2501.00254", "reference_index": citation["reference_index"], "raw": raw,
                         "source": citation["source"]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_import_query_compare_sets_pith_beside_citeledger_and_current_stays_citeledger(
        tmp_path, default_catalog, capsys):
    ledger, refs = tmp_path / "ledger", tmp_path / "refs.jsonl"
    _seed_references(refs)
    assert main(["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(ledger)]) == 0
    con = duckdb.connect()
    before = con.sql(f"select * from read_parquet('{ledger}/observations/**/*.parquet') order by all").fetchall()
    for _ in range(2):  # importing again keeps the same files, never a second copy
        assert main(["import-pith", str(SEED_RECORD), str(SEED_NUMBER), "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert "pith.paper-citation-record.v1 of 2501.00254, 30 observations, digests hold" in out
    assert "pith_number_record of 2509.00217, 0 observations" in out
    assert len(list((ledger / "pith_records").glob("*.parquet"))) == 2
    after = con.sql(f"select * from read_parquet('{ledger}/observations/**/*.parquet') order by all").fetchall()
    assert after == before  # citeledger's observations untouched

    assert main(["query", "select direction, status, count(*) as n from pith_observations group by all order by all",
                 "--ledger", str(ledger), "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [{"direction": "inbound", "status": "verified_exact", "n": 1},
                    {"direction": "outbound", "status": "unresolved", "n": 24},
                    {"direction": "outbound", "status": "verified_fuzzy", "n": 5}]
    assert main(["query", "select count(*) as n from current where source = 'pith'", "--ledger", str(ledger),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"n": 0}

    assert main(["compare", "arXiv:2501.00254v1", "--ledger", str(ledger), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    ours = {p["reference_index"]: p["ours"]["status"] for p in result["pairs"] if p["ours"]}
    theirs = {p["reference_index"]: p["theirs"]["status"] for p in result["pairs"] if p["theirs"]}
    assert (result["references"], result["pith"], result["citeledger"]) == (29, 29, len(ours))
    assert result["both"] == len(ours) > 0
    # Pith's verified_fuzzy on author fragments: citeledger calls them parse_uncertain
    assert {i for i, s in theirs.items() if s == "verified_fuzzy"} == {9, 14, 15, 16, 26}
    assert {ours[i] for i in (9, 14, 15, 16, 26)} == {"parse_uncertain"}
    # a paper the embedded catalog does not hold, named by its arXiv id: unresolved on both sides
    assert ours[5] == theirs[5] == "unresolved"
    assert sum(result["state_pairs"].values()) == 29

    # inbound: Pith's one citing paper, which the ledger does not hold
    assert (result["inbound"]["pith"], result["inbound"]["citeledger"]) == (1, 0)
    [inbound] = result["inbound"]["pairs"]
    assert (inbound["citing_paper"], inbound["reference_index"], inbound["theirs"]["status"]) == \
        ("2604.19654", 6, "verified_exact")

    assert main(["compare", "2501.00254", "--ledger", str(ledger)]) == 0
    table = capsys.readouterr().out.splitlines()
    line9 = next(line for line in table if line.split()[:1] == ["9"])
    assert line9.split()[:4] == ["9", "parse_uncertain", "verified_fuzzy", "NO"]
    assert any(line.split()[:2] == ["2604.19654#6", "-"] for line in table)


def test_a_file_that_does_not_read_as_a_record_is_refused_naming_it_and_the_others_are_kept(tmp_path, capsys):
    ledger = tmp_path / "ledger"
    bad = tmp_path / "bad.json"
    broken = citation_record()
    broken["outbound"][3]["resolution"].pop("status")
    bad.write_text(json.dumps(broken))
    assert main(["import-pith", str(SEED_RECORD), str(bad), "--ledger", str(ledger)]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == f"citeledger: {bad}: not imported: outbound[3].resolution.status: missing"
    assert "pith.paper-citation-record.v1 of 2501.00254" in captured.out
    assert len(list((ledger / "pith_records").glob("*.parquet"))) == 1
    (tmp_path / "v2.json").write_text(json.dumps({"schema": "citeledger.paper-citation-record.v2"}))
    assert main(["import-pith", str(tmp_path / "v2.json"), "--ledger", str(ledger)]) == 1
    assert "not a Pith record (citeledger.paper-citation-record.v2)" in capsys.readouterr().err
    (tmp_path / "text.json").write_text("{not json")
    assert main(["import-pith", str(tmp_path / "text.json"), "--ledger", str(ledger)]) == 1
    assert f"{tmp_path / 'text.json'}: not imported: line 1 column 2: not JSON" in capsys.readouterr().err
    assert main(["compare", "2501.00254", "--ledger", str(tmp_path / "none")]) == 2  # no ledger there


def test_catalog_citation_counts_become_dated_measurements_one_per_source(tmp_path, capsys):
    """OpenAlex's ``cited_by_count`` (a real record: 962, its newest copy) and Crossref's
    ``is-referenced-by-count`` (a real response: 9) reach the catalog and the Pith record, each
    with its source and time; a work both count keeps two measurements, never a sum."""
    crossref = json.loads((REPO / "tests" / "fixtures" / "http" / "crossref" /
                           "works_10.1021_acs.orglett.9b00971_typical.json").read_text())["message"]
    (tmp_path / "crossref.jsonl").write_text(json.dumps(crossref) + "\n")
    catalog, ledger, refs = tmp_path / "catalog", tmp_path / "ledger", tmp_path / "refs.jsonl"
    assert main(["catalog", "build", "--catalog", str(catalog), str(tmp_path / "crossref.jsonl"),
                 str(REPO / "tests" / "fixtures" / "catalog" / "openalex" / "works")]) == 0
    refs.write_text("".join(json.dumps({"citing_paper": paper, "reference_index": 1, "raw": "A. Author. Some title. 2019."})
                            + "\n" for paper in ("10.7717/peerj.4375", "10.1021/acs.orglett.9b00971")))
    assert main(["resolve", str(refs), "--catalog", str(catalog), "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    found = {}
    for paper in ("10.7717/peerj.4375", "10.1021/acs.orglett.9b00971"):
        assert main(["record", paper, "--format", "pith", "--ledger", str(ledger), "--catalog", str(catalog)]) == 0
        pith = json.loads(capsys.readouterr().out)
        assert schema.schema_errors(pith) == []
        found[paper] = (pith["external_citation_measurements"],
                        next(lane for lane in pith["coverage"] if lane["lane"] == "external_citation_measurements"))
    assert found["10.7717/peerj.4375"][0] == [{"measure": "cited_by_count", "observed_at": "2025-06-11T00:03:37.532706Z",
                                               "source": "openalex", "value": 962,
                                               "work": "https://openalex.org/W2741809807"}]
    assert found["10.1021/acs.orglett.9b00971"][0] == [{"measure": "is-referenced-by-count",
                                                        "observed_at": "2021-03-19T04:12:29Z", "source": "crossref",
                                                        "value": 9, "work": "10.1021/acs.orglett.9b00971"}]
    assert found["10.7717/peerj.4375"][1]["state"] == "measured"
    both = pith_files.measurements({"work_id": "doi:10.1/x", "doi": "10.1/x", "source_ids": ["openalex:W1"],
                                    "cited_by_count_openalex": 12, "cited_by_count_openalex_at": "2026-01-01T00:00:00Z",
                                    "cited_by_count_crossref": 9, "cited_by_count_crossref_at": "2026-02-01T00:00:00Z"})
    assert [(m["source"], m["value"]) for m in both] == [("openalex", 12), ("crossref", 9)]
    assert pith_files.measurements({"cited_by_count_crossref": 9, "cited_by_count_crossref_at": None}) == []
