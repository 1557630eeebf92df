"""``verify`` checks everything it can: a number record's members outside its signed digest (the pith
number, the title, the paper's facts, the links) against the content that is signed; a member name
twice is a failure in every JSON read as a record (citeledger's v2 records and key files too); a key
document holding a point of small order, outside the prime-order subgroup or encoded
non-canonically is refused; and a tampered file's bytes never reach the terminal raw."""
from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pith_fixtures import PITH, citation_record, key_document, number_record

from citeledger.cli import main
from citeledger.pith import digests, ed25519_points, pith_receipts

PITH_KEY = PITH / "pith-signing-key.json"
IDENTITY = bytes.fromhex("01" + "00" * 31)
SMALL_ORDER = [IDENTITY, bytes.fromhex("ec" + "ff" * 30 + "7f"), bytes(32), bytes.fromhex("00" * 31 + "80"),
               bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
               bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"),
               bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
               bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85")]
NON_CANONICAL = [bytes.fromhex("ee" + "ff" * 30 + "7f"), bytes.fromhex("ed" + "ff" * 30 + "7f"),
                 bytes.fromhex("01" + "00" * 30 + "80")]  # y >= p twice; x = 0 with the sign bit set


def _verify(capsys, key: Path, *files: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", "--pith-key", str(key), *map(str, files)])
    return code, capsys.readouterr().out


def _write(path: Path, document) -> Path:
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    return path


NUMBER_TAMPERS = [
    ("pith number", lambda r: r.update(pith_number="pith:2025:AAAAAAAAAAAAAAAAAAAAAAAAAA"), "pith_number:"),
    ("short number", lambda r: r.update(short_pith_number="pith:AAAAAAAA"), "short_pith_number:"),
    ("title", lambda r: r["paper"].update(title="A Different Paper"), "paper.title:"),
    ("category", lambda r: r["paper"].update(primary_cat="hep-th"), "paper.primary_cat:"),
    ("source", lambda r: r["source"].update(id="2509.00218"), "source:"),
    ("alias", lambda r: r["aliases"][2].update(alias_value="10.48550/arxiv.2509.00218"), "aliases: doi"),
    ("link", lambda r: r["links"].update(paper="https://pith.science/paper/AAAAAAAA"), "links:"),
    ("snapshot", lambda r: r["graph_snapshot"]["paper"].update(title="Other"), "graph_snapshot.paper:"),
]


@pytest.mark.parametrize("what, tamper, says", NUMBER_TAMPERS, ids=[t[0] for t in NUMBER_TAMPERS])
def test_a_number_record_member_outside_the_signed_digest_is_checked(tmp_path, capsys, what, tamper, says):
    record = number_record()
    tamper(record)
    code, out = _verify(capsys, PITH_KEY, _write(tmp_path / "number.json", record))
    assert code == 1 and f"FAILED: inconsistent: {says}" in out, out
    assert "signature_invalid" not in out  # the receipt itself still holds: only the check finds it


def test_the_published_number_record_holds_and_its_citation_record_is_consistent(tmp_path, capsys):
    code, out = _verify(capsys, PITH_KEY, PITH / "pith-number-record-2509.00217.json")
    assert (code, out.strip().endswith(": ok")) == (0, True)
    code, out = _verify(capsys, PITH_KEY, PITH / "pith-paper-citation-record-2501.00254.json")
    assert code == 1 and out.strip().endswith("FAILED: no receipt: the citation record is not signed "
                                              "(Pith publishes its citation records unsigned)")


def _signed_citation(private: Ed25519PrivateKey, record: dict | None = None) -> dict:
    record = record or citation_record()
    key = pith_receipts.PithSigningKey("test-key", private)
    return dict(record, receipt=pith_receipts.sign_citation_record(record, key, "2026-09-01T00:00:00Z", "test"))


def _key(tmp_path: Path, raw: bytes, key_id: str = "test-key") -> Path:
    return _write(tmp_path / f"{key_id}-{raw.hex()[:8]}.json",
                  {"key_id": key_id, "algorithm": "ed25519", "public_key_b64": base64.b64encode(raw).decode()})


def test_a_signed_citation_record_fails_a_changed_as_of_and_counts_a_forger_recomputed(tmp_path, capsys):
    private = Ed25519PrivateKey.generate()
    key = _key(tmp_path, private.public_key().public_bytes_raw())
    signed = _signed_citation(private)
    assert _verify(capsys, key, _write(tmp_path / "signed.json", signed))[0] == 0
    redated = dict(signed, as_of="2027-01-01T00:00:00Z")  # outside the context digest
    code, out = _verify(capsys, key, _write(tmp_path / "redated.json", redated))
    assert code == 1 and "inconsistent: as_of: '2027-01-01T00:00:00Z' is not the day the thesis names" in out
    forged = copy.deepcopy(citation_record())
    forged["reference_resolution"]["state_counts"]["verified_exact"] = 5
    forged["reference_resolution"]["state_counts"]["unresolved"] = 19
    code, out = _verify(capsys, key, _write(tmp_path / "counts.json", _signed_citation(private, digests.with_digests(forged))))
    assert code == 1 and "inconsistent: reference_resolution.state_counts.unresolved: 19, but 24" in out


def test_a_member_name_twice_fails_verify_for_pith_and_citeledger_records(tmp_path, capsys):
    """A forged ``outbound`` first and the genuine one last: Python's reader keeps the last, DuckDB's
    the first; either way the file is not one record."""
    private = Ed25519PrivateKey.generate()
    key = _key(tmp_path, private.public_key().public_bytes_raw())
    text = json.dumps(_signed_citation(private))
    forged = copy.deepcopy(citation_record()["outbound"])
    forged[0]["resolution"]["status"] = "verified_exact"
    twice = _write(tmp_path / "twice.json", '{"outbound": ' + json.dumps(forged) + ", " + text[1:])
    code, out = _verify(capsys, key, twice)
    assert code == 1
    assert f'{twice}: FAILED: cannot read a JSON record: member name "outbound" appears twice in one object' in out
    v2 = _write(tmp_path / "v2.json", '{"schema": "x", "schema": "citeledger.paper-citation-record.v2"}')
    capsys.readouterr()
    assert main(["verify", "--public-key", str(_ledger_key(tmp_path)), str(v2)]) == 1
    assert 'FAILED: cannot read a JSON record: member name "schema" appears twice' in capsys.readouterr().out


def _ledger_key(tmp_path: Path) -> Path:
    from cryptography.hazmat.primitives import serialization

    pem = Ed25519PrivateKey.generate().public_key().public_bytes(serialization.Encoding.PEM,
                                                                 serialization.PublicFormat.SubjectPublicKeyInfo)
    path = tmp_path / "ledger-key.pem"
    path.write_bytes(pem)
    return path


def test_the_identity_point_as_a_key_would_verify_a_forgery_and_is_refused(tmp_path, capsys):
    forged = citation_record()
    forged["outbound"][0]["resolution"]["status"] = "verified_exact"
    forged = digests.with_digests(forged)
    digest = forged["context_digest"].removeprefix("sha256:")
    receipt = {"algorithm": "ed25519", "canonical_sha256": digest, "key_id": "pith-v1-2026-05", "kind": "pith_receipt",
               "public_key_fingerprint": pith_receipts.fingerprint(
                   pith_receipts.Ed25519PublicKey.from_public_bytes(IDENTITY)),
               "signature_b64": base64.b64encode(IDENTITY + bytes(32)).decode(),  # R = identity, S = 0
               "signature_status": "signed_v1", "signed_message": "canonical_sha256_bytes"}
    forged_file = _write(tmp_path / "forged.json", dict(forged, receipt=receipt))
    assert pith_receipts.verify_citation_record(forged, receipt, pith_receipts.TrustedKey(
        "pith-v1-2026-05", pith_receipts.Ed25519PublicKey.from_public_bytes(IDENTITY))) == []  # what the refusal stops
    key = _key(tmp_path, IDENTITY, "pith-v1-2026-05")
    capsys.readouterr()
    assert main(["verify", "--pith-key", str(key), str(forged_file)]) == 2
    assert "refused: a point of small order" in capsys.readouterr().err


@pytest.mark.parametrize("raw", SMALL_ORDER + NON_CANONICAL, ids=lambda r: r.hex()[:8] + r.hex()[-2:])
def test_small_order_and_non_canonical_keys_are_refused_in_key_documents_and_key_files(tmp_path, capsys, raw):
    assert ed25519_points.key_problem(raw)
    with pytest.raises(ValueError, match="refused"):
        pith_receipts.trusted_key({"key_id": "k", "algorithm": "ed25519", "public_key_hex": raw.hex()})
    pub = _write(tmp_path / "ed25519-bad.pub.json", {"key_id": "x", "algorithm": "ed25519",
                                                      "public_key": base64.b64encode(raw).decode()})
    record = _write(tmp_path / "record.json", {"schema": "citeledger.paper-citation-record.v2"})
    capsys.readouterr()
    assert main(["verify", "--public-key", str(pub), str(record)]) == 2
    assert "refused" in capsys.readouterr().err


def test_a_point_with_a_small_order_part_is_refused_and_real_keys_pass():
    assert ed25519_points.key_problem(base64.b64decode(key_document()["public_key_b64"])) is None
    for _ in range(5):
        assert ed25519_points.key_problem(Ed25519PrivateKey.generate().public_key().public_bytes_raw()) is None
    x, y, z, t = ed25519_points._add(ed25519_points.decode(base64.b64decode(key_document()["public_key_b64"])),
                                     ed25519_points.decode(SMALL_ORDER[4]))
    inverse = pow(z, ed25519_points.P - 2, ed25519_points.P)
    x, y = x * inverse % ed25519_points.P, y * inverse % ed25519_points.P
    mixed = (y | (x & 1) << 255).to_bytes(32, "little")
    assert ed25519_points.key_problem(mixed) == "a point outside the prime-order subgroup (it has a small-order part)"


def test_control_characters_of_a_file_reach_the_terminal_escaped(tmp_path, capsys):
    record = number_record()
    record["pith_number"] = "pith:2025:\x1b[2K\rREPAINTED: ok\x1b[0m"
    name = tmp_path / "esc\x1b[31m\nname.json"
    code, out = _verify(capsys, PITH_KEY, _write(name, record))
    assert code == 1 and "\x1b" not in out and "\r" not in out and len(out.strip().splitlines()) == 1
    assert "\\x1b[2K" in out and "esc\\x1b[31m\\x0aname.json: FAILED" in out
