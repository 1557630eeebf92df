"""Signed receipts of citation records: keys, signing, verify, tampering, rotation, and the private
key never leaving its own file."""
from __future__ import annotations

import base64
import copy
import hashlib
import json
import shutil
import stat
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_ledger_records import RETRACTED, resolve

from citeledger.cli.entry import main
from citeledger.records import receipts, record_files
from citeledger.records.record_json import content_digest, validate_record

PAPERS = ["paper-x", "0704.0002"]
ROWS = RETRACTED + [
    {"citing_paper": "0704.0002", "reference_index": 1,
     "raw": "Some authors. A study later retracted. J Clin Anesth. 2006. doi:10.1016/j.jclinane.2006.02.005"},
    {"citing_paper": "paper-x", "reference_index": 5,
     "raw": "I. Streinu and L. Theran. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
]


@pytest.fixture(scope="module")
def signed_base(tmp_path_factory, default_catalog):
    """A ledger with a signing key and the signed records of two papers, made once for the module."""
    base = tmp_path_factory.mktemp("signed")
    resolve(base, default_catalog, ROWS)
    ledger = base / "ledger"
    assert main(["keys", "init", "--ledger", str(ledger)]) == 0
    paths = record_files.write_records(PAPERS, ledger, default_catalog)
    return ledger, paths


@pytest.fixture
def signed_ledger(signed_base, tmp_path):
    """Each test's own copy of that ledger (file modes kept): some rotate its key or write records."""
    base, paths = signed_base
    ledger = tmp_path / "ledger"
    shutil.copytree(base, ledger)
    return ledger, [ledger / p.relative_to(base) for p in paths]


def _leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, path + (i,))
    else:
        yield path, value


def _changed(value):
    """The value with one byte changed (a string's last character, a number by one, a flag flipped)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str) and value:
        return value[:-1] + ("A" if value[-1] != "A" else "B")
    return "x"


def _set(record, path, value):
    target = record
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


def test_keys_init_makes_a_private_key_0600_and_a_key_id_from_the_public_key(signed_ledger):
    ledger, _ = signed_ledger
    kid = receipts.active_key_id(ledger)
    private = ledger / "keys" / f"{kid.replace(':', '-')}.private.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert kid == "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]
    public = json.loads((ledger / "keys" / f"{kid.replace(':', '-')}.pub.json").read_text())
    assert base64.b64decode(public["public_key"]) == raw
    assert main(["keys", "init", "--ledger", str(ledger)]) == 2  # a second init does not replace it silently


def test_written_records_are_signed_valid_and_verify(signed_ledger, capsys):
    ledger, paths = signed_ledger
    for path in paths:
        record = json.loads(path.read_text())
        validate_record(record)
        assert record["receipt"]["state"] == "signed"
        assert record["receipt"]["signed_digest"] == record["content_digest"]
    assert main(["verify", *map(str, paths), "--ledger", str(ledger)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{p}: ok" for p in paths]


def test_every_changed_field_fails_and_says_why(signed_ledger):
    ledger, paths = signed_ledger
    keys = receipts.load_public_keys([ledger / "keys"])
    record = json.loads(paths[0].read_text())
    assert receipts.verify_record(record, keys) == []
    leaves = list(_leaves(record))
    assert len(leaves) > 200
    for path, value in leaves:
        tampered = copy.deepcopy(record)
        _set(tampered, path, _changed(value))
        problems = receipts.verify_record(tampered, keys)
        assert problems, f"changing {path} went unnoticed"
        why = " ".join(problems)
        if path[0] == "receipt":
            assert any(w in why for w in ("signature", "signed_digest", "unsigned", "key", "algorithm")), (path, why)
        else:
            assert "does not match the content" in why, (path, why)


def test_a_removed_reference_a_swapped_signature_and_another_key_fail(signed_ledger):
    ledger, paths = signed_ledger
    keys = receipts.load_public_keys([ledger / "keys"])
    a, b = (json.loads(p.read_text()) for p in paths)
    removed = copy.deepcopy(a)
    del removed["outbound"]["items"][0]
    assert "does not match the content" in receipts.verify_record(removed, keys)[0]
    swapped = copy.deepcopy(a)
    swapped["receipt"]["signature"] = b["receipt"]["signature"]
    assert receipts.verify_record(swapped, keys) == [
        f"signature does not verify with key {a['receipt']['key_id']}: the receipt or its signature was "
        "changed, or another key signed it"]
    other = receipts.SigningKey("ed25519:0000000000000000", Ed25519PrivateKey.generate())
    stranger = receipts.sign_record(copy.deepcopy(a), receipts.SigningKey(
        receipts.key_id(other.private.public_key()), other.private))
    assert "not among the trusted keys" in receipts.verify_record(stranger, keys)[0]
    impostor = receipts.sign_record(copy.deepcopy(a), receipts.SigningKey(a["receipt"]["key_id"], other.private))
    assert "signature does not verify" in receipts.verify_record(impostor, keys)[0]


def test_verify_cli_names_the_failure_and_exits_1(signed_ledger, tmp_path, capsys):
    ledger, paths = signed_ledger
    record = json.loads(paths[0].read_text())
    record["outbound"]["items"][0]["cited_as"]["raw"] += "."
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    assert main(["verify", str(paths[1]), str(bad), "--ledger", str(ledger)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{paths[1]}: ok"
    assert out[1].startswith(f"{bad}: FAILED: content_digest sha256:") and "changed after it was built" in out[1]


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq not installed")
def test_a_record_verifies_after_jq_sorts_and_reindents_it(signed_ledger, tmp_path, capsys):
    ledger, paths = signed_ledger
    sorted_copy = tmp_path / "sorted.json"
    sorted_copy.write_bytes(subprocess.run(["jq", "-S", ".", str(paths[0])], check=True, capture_output=True).stdout)
    assert sorted_copy.read_bytes() != paths[0].read_bytes()
    assert main(["verify", str(sorted_copy), "--ledger", str(ledger)]) == 0
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(json.loads(paths[0].read_text()), sort_keys=True, separators=(",", ":"),
                                  ensure_ascii=True))
    assert main(["verify", str(compact), "--public-key", str(next((ledger / "keys").glob("*.pub.json")))]) == 0


def test_rotation_keeps_old_records_verifiable(signed_ledger, default_catalog):
    ledger, paths = signed_ledger
    old = receipts.active_key_id(ledger)
    assert main(["keys", "init", "--rotate", "--ledger", str(ledger)]) == 0
    new = receipts.active_key_id(ledger)
    assert new != old and not (ledger / "keys" / f"{old.replace(':', '-')}.private.pem").exists()
    old_record = json.loads(paths[0].read_text())
    [path] = record_files.write_records(PAPERS[1:], ledger, default_catalog)
    new_record = json.loads(path.read_text())
    assert (old_record["receipt"]["key_id"], new_record["receipt"]["key_id"]) == (old, new)
    keys = receipts.load_public_keys([ledger / "keys"])
    assert receipts.verify_record(old_record, keys) == receipts.verify_record(new_record, keys) == []
    only_new = receipts.load_public_keys([ledger / "keys" / f"{new.replace(':', '-')}.pub.json"])
    assert "not among the trusted keys" in receipts.verify_record(old_record, only_new)[0]


def test_without_a_key_records_say_they_are_unsigned_and_do_not_verify(tmp_path, default_catalog):
    resolve(tmp_path, default_catalog, ROWS)
    [path] = record_files.write_records(PAPERS[:1], tmp_path / "ledger", default_catalog)
    record = json.loads(path.read_text())
    validate_record(record)
    assert record["receipt"] | {"signed_at": None} == {
        "state": "unsigned", "algorithm": None, "key_id": None, "canonicalization": "RFC 8785 JCS",
        "signed_digest": record["content_digest"], "signed_at": None, "builder": receipts.BUILDER,
        "why_unsigned": receipts.UNSIGNED_WHY, "signature": None}
    assert not (tmp_path / "ledger" / "keys").exists()  # no key is made behind the user's back
    assert receipts.verify_record(record, {}) == [f"unsigned record ({receipts.UNSIGNED_WHY})"]


def test_the_private_key_is_in_no_ledger_file_but_its_own(signed_ledger, default_catalog, capsys):
    ledger, _ = signed_ledger
    assert main(["record", "paper-x", "--ledger", str(ledger), "--catalog", str(default_catalog),
                 "--format", "json"]) == 0
    printed = capsys.readouterr().out.encode()
    kid = receipts.active_key_id(ledger)
    key_file = ledger / "keys" / f"{kid.replace(':', '-')}.private.pem"
    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    raw = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                serialization.NoEncryption())
    der = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    forms = [raw, der, base64.b64encode(raw), base64.b64encode(der), base64.urlsafe_b64encode(raw).rstrip(b"="),
             raw.hex().encode(), raw.hex().upper().encode(), base64.b32encode(raw).rstrip(b"=")]
    holders = sorted(str(p.relative_to(ledger)) for p in ledger.rglob("*") if p.is_file()
                     and any(f in p.read_bytes() for f in forms))
    assert holders == [str(key_file.relative_to(ledger))]
    assert not any(f in printed for f in forms)
    assert len(list(ledger.rglob("*.json"))) >= 3  # the search did look at the records


def test_receipts_and_records_take_the_content_digest_from_one_definition():
    """The digest a receipt signs and the one a record is built with are one function (v1 and v2)."""
    assert receipts.content_digest is content_digest


@pytest.mark.parametrize("text", ["../../outside", "ed25519:../../x", "ed25519:0123456789abcdef/..", "x" * 500])
def test_an_active_key_file_naming_no_key_id_is_a_one_line_error(signed_ledger, tmp_path, text):
    """The key id in keys/ACTIVE becomes a file name: only ed25519: and 16 hex digits is taken."""
    ledger, _ = signed_ledger
    outside = tmp_path / "outside.private.pem"
    outside.write_bytes(private_pem_text := Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    (ledger / "keys" / "ACTIVE").write_text(text + "\n")
    with pytest.raises(receipts.ConfigError) as caught:
        receipts.active_key(ledger)
    assert "is not a key id" in str(caught.value) and "\n" not in str(caught.value)
    assert main(["keys", "init", "--ledger", str(ledger)]) == 2
    assert main(["keys", "init", "--rotate", "--ledger", str(ledger)]) == 0  # the way out the error names
    assert outside.read_bytes() == private_pem_text and receipts.active_key(ledger) is not None


def test_verify_goes_on_after_a_deeply_nested_file(signed_ledger, tmp_path, capsys):
    ledger, paths = signed_ledger
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    shallow = tmp_path / "shallow.json"  # parsed, but deeper than the canonical form follows
    shallow.write_text('{"receipt": {}, "x": ' + "[" * 900 + "]" * 900 + "}")
    assert main(["verify", str(nested), str(shallow), str(paths[0]), "--ledger", str(ledger)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and "FAILED" in out[0] and "nested too deeply" in out[0]
    assert "FAILED" in out[1] and out[2].endswith(": ok")
