"""``import-pith`` keeps a Pith record only when it is what it says it is, under the digest of its
own bytes: a forged copy imported after the genuine record changes nothing (a reject row naming
the file and the fault, exit 1), two genuine records of one paper are both kept with the later
``as_of`` current, and every hostile file (a malformed digest, a member name twice, deep nesting, a
huge file, a FIFO, bytes that are not UTF-8, NaN) is one line naming it, nothing written for it,
while the other files of the same command are imported."""
from __future__ import annotations

import copy
import json
import os
import threading
from pathlib import Path

import duckdb
from pith_fixtures import PITH, citation_record

from citeledger.cli import main
from citeledger.pith import digests
from citeledger.storage import json_documents
from resolvers.jcs import jcs

SEED_RECORD = PITH / "pith-paper-citation-record-2501.00254.json"
SEED_NUMBER = PITH / "pith-number-record-2509.00217.json"


def _import(ledger: Path, *files: Path) -> int:
    return main(["import-pith", *map(str, files), "--ledger", str(ledger)])


def _kept(ledger: Path) -> dict[str, bytes]:
    """Every file the imports kept, by name: what a later import must leave as it was."""
    return {str(p.relative_to(ledger)): p.read_bytes() for folder in ("pith", "pith_records")
            for p in sorted((ledger / folder).glob("*.parquet"))}


def _rejects(ledger: Path) -> list[tuple]:
    return duckdb.sql(f"select file, field, reason from read_parquet('{ledger}/rejects/**/*.parquet') "
                      "order by file").fetchall()


def _pith_output(ledger: Path, capsys, paper: str = "2501.00254") -> str:
    capsys.readouterr()
    assert main(["record", paper, "--format", "pith", "--ledger", str(ledger)]) == 0
    return capsys.readouterr().out


def _forged() -> dict:
    """The published record with one outbound state made ``verified_exact`` with a made-up DOI, the
    digests it states kept as published."""
    record = citation_record()
    obs = record["outbound"][0]
    obs["resolution"]["status"] = "verified_exact"
    obs["citation"]["cited_work"]["doi"] = "10.9999/forged"
    return record


def test_a_forged_copy_after_the_genuine_record_changes_nothing_and_exits_1(tmp_path, capsys):
    ledger = tmp_path / "ledger"
    assert _import(ledger, SEED_RECORD) == 0
    kept, shown = _kept(ledger), _pith_output(ledger, capsys)
    assert shown.encode() == jcs(citation_record()) + b"\n"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(_forged()))
    capsys.readouterr()
    assert _import(ledger, forged) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"citeledger: {forged}: not imported: context_digest: states "
                                               f"{citation_record()['context_digest']}")
    assert _kept(ledger) == kept  # the genuine import untouched, nothing of the forgery written
    assert _pith_output(ledger, capsys) == shown
    [(file, field, reason)] = _rejects(ledger)
    assert (file, field) == (str(forged), "context_digest") and "the content was changed" in reason
    assert main(["compare", "2501.00254", "--ledger", str(ledger), "--format", "json"]) == 0
    pairs = json.loads(capsys.readouterr().out)["pairs"]
    assert next(p["theirs"] for p in pairs if p["reference_index"] == 1)["status"] == "unresolved"


def test_a_forgery_with_every_digest_recomputed_but_counts_left_is_refused_too(tmp_path, capsys):
    ledger = tmp_path / "ledger"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(digests.with_digests(_forged())))
    assert _import(ledger, forged) == 1
    err = capsys.readouterr().err
    assert "state_counts" in err and not (ledger / "pith_records").exists()


def _redated(record: dict, as_of: str, day: str) -> dict:
    """Pith's record of the same paper made later: a new ``as_of`` and the thesis naming its day,
    the digests recomputed (a genuine record, not a forgery)."""
    later = copy.deepcopy(record)
    later["as_of"] = as_of
    later["thesis"] = later["thesis"].replace("15 August 2026", day)
    later["outbound"][0]["resolution"]["observed_at"] = "2026-09-02T00:00:00Z"
    return digests.with_digests(later)


def test_two_genuine_records_of_one_paper_are_both_kept_and_the_later_as_of_is_current(tmp_path, capsys):
    ledger = tmp_path / "ledger"
    later = _redated(citation_record(), "2026-09-03T08:00:00Z", "3 September 2026")
    path = tmp_path / "later.json"
    path.write_bytes(jcs(later))
    assert _import(ledger, path, SEED_RECORD) == 0  # the later one first: as_of decides, not the order
    assert len(list((ledger / "pith_records").glob("*.parquet"))) == 2
    assert _pith_output(ledger, capsys).encode() == jcs(later) + b"\n"
    assert _import(ledger, SEED_RECORD) == 0  # imported again: the same file, still not current
    assert len(list((ledger / "pith_records").glob("*.parquet"))) == 2
    assert _pith_output(ledger, capsys).encode() == jcs(later) + b"\n"
    assert main(["query", "select count(*) as n, count(distinct stored_as) as records from pith_observations",
                 "--ledger", str(ledger), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"n": 60, "records": 2}


def _hostile_files(tmp_path: Path) -> dict[str, Path]:
    """One file of each hostile form, with what its refusal must say."""
    text = json.dumps(citation_record(), separators=(",", ":"))
    files = {}

    def write(name: str, data: bytes) -> None:
        files[name] = tmp_path / f"{name}.json"
        files[name].write_bytes(data)

    write("malformed-digest", json.dumps(dict(citation_record(), context_digest="sha256:../../x")).encode())
    forged_first = '{"outbound": ' + json.dumps(_forged()["outbound"]) + ", " + text[1:]
    write("duplicate-keys", forged_first.encode())
    write("deep-nesting", b'{"schema": "pith.paper-citation-record.v1", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    huge = text.encode() + b" " * (json_documents.MAX_DOCUMENT_BYTES + 1 - len(text))
    write("huge", huge)
    write("not-utf8", text.replace("Automatically", "Automatic\xe9lly").encode("latin-1"))
    write("nan", text.replace('"year":2024', '"year":NaN').encode())
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    files["fifo"] = fifo
    return files


HOSTILE_SAYS = {
    "malformed-digest": "context_digest: 'sha256:../../x' is not a sha256 digest",
    "duplicate-keys": 'member name "outbound" appears twice',
    "deep-nesting": "nested too deeply",
    "huge": "larger than 16 MiB",
    "not-utf8": "not UTF-8",
    "nan": "NaN is not a JSON number",
    "fifo": "a FIFO (named pipe), not a record file",
}


def test_every_hostile_form_is_one_line_naming_the_file_and_the_others_are_imported(tmp_path, capsys):
    ledger = tmp_path / "ledger"
    files = _hostile_files(tmp_path)
    done: dict[str, int] = {}
    worker = threading.Thread(target=lambda: done.setdefault("rc", _import(ledger, *files.values(), SEED_RECORD)))
    worker.start()
    worker.join(120)
    if worker.is_alive():  # a FIFO opened for reading: be its writer so the thread ends, then fail
        os.close(os.open(files["fifo"], os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        raise AssertionError("import-pith blocked on a FIFO")
    assert done["rc"] == 1
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == len(files), lines
    for name, path in files.items():
        [line] = [line for line in lines if line.startswith(f"citeledger: {path}: not imported: ")]
        assert HOSTILE_SAYS[name] in line, line
    assert out.count("kept as") == 1 and str(SEED_RECORD) in out  # the genuine file of the same command
    assert len(list((ledger / "pith_records").glob("*.parquet"))) == 1
    assert sorted(f for f, _, _ in _rejects(ledger)) == sorted(map(str, files.values()))
    assert _pith_output(ledger, capsys).encode() == jcs(citation_record()) + b"\n"


def test_a_receipt_is_checked_without_a_key_against_the_digest_and_with_one_against_the_key(tmp_path, capsys):
    """A receipt naming another digest than the record's is refused by itself; with ``--pith-key`` a
    receipt whose signature is not the key's is refused, one that is imports as verified."""
    import base64

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from citeledger.pith import pith_receipts

    private = Ed25519PrivateKey.generate()
    key_file = tmp_path / "key.json"
    key_file.write_text(json.dumps({"key_id": "k1", "algorithm": "ed25519",
                                    "public_key_b64": base64.b64encode(private.public_key().public_bytes_raw()).decode()}))
    record = citation_record()
    receipt = pith_receipts.sign_citation_record(record, pith_receipts.PithSigningKey("k1", private), "2026-09-01T00:00:00Z", "t")
    signed, other_digest, other_key = (tmp_path / f"{n}.json" for n in ("signed", "other-digest", "other-key"))
    signed.write_text(json.dumps(dict(record, receipt=receipt)))
    other_digest.write_text(json.dumps(dict(record, receipt=dict(receipt, canonical_sha256="0" * 64))))
    stranger = pith_receipts.sign_citation_record(record, pith_receipts.PithSigningKey("k1", Ed25519PrivateKey.generate()),
                                             "2026-09-01T00:00:00Z", "t")
    other_key.write_text(json.dumps(dict(record, receipt=stranger)))
    ledger = tmp_path / "ledger"
    assert _import(ledger, other_digest) == 1
    assert "receipt.canonical_sha256: '" + "0" * 64 + "' is not the record's context digest" in capsys.readouterr().err
    assert main(["import-pith", str(other_key), str(signed), "--pith-key", str(key_file),
                 "--ledger", str(ledger)]) == 1
    out, err = capsys.readouterr()
    assert f"{other_key}: not imported: receipt: fingerprint_mismatch" in err and str(signed) in out
    assert main(["query", "select signed, receipt_key_id, receipt_verified from pith_records", "--ledger", str(ledger),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"signed": True, "receipt_key_id": "k1", "receipt_verified": True}
