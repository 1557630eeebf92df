"""A Pith record file that cannot be read is one line naming the file, whatever is wrong with it:
JSON nested past the parser's depth, a number of thousands of digits, a member of the wrong type
where an object is read, a value a digest cannot hold (NaN, an integer past 2**53). ``import-pith``
writes nothing for it but its reject row (exit 1); ``verify --pith-key`` reports the file ``FAILED``
and goes on (exit 1)."""
from __future__ import annotations

import json

import pytest
from pith_fixtures import PITH, citation_record, number_record

from citeledger.cli import main


def _deep(path):
    path.write_text("[" * 100_000 + "]" * 100_000)


def _long_number(path):
    path.write_text('{"schema": ' + "9" * 5000 + "}")


def _receipt_list(path):
    path.write_text(json.dumps(dict(number_record(), receipt=[1, 2])))


def _snapshot_list(path):
    path.write_text(json.dumps(dict(number_record(), graph_snapshot=[1])))


def _nan(path):
    record = citation_record()
    record["outbound"][0]["citation"]["cited_work"]["doi"] = float("nan")
    path.write_text(json.dumps(record))


def _past_double(path):
    record = citation_record()
    record["outbound"][0]["citation"]["reference_index"] = 2**70
    path.write_text(json.dumps(record))


BAD = {"deep": _deep, "long-number": _long_number, "receipt-list": _receipt_list,
       "snapshot-list": _snapshot_list, "nan": _nan, "past-double": _past_double}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_an_unreadable_pith_file_is_one_line_naming_it_and_nothing_is_written(kind, tmp_path, capsys):
    path = tmp_path / f"{kind}.json"
    BAD[kind](path)
    ledger = tmp_path / "ledger"
    assert main(["import-pith", str(path), "--ledger", str(ledger)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"citeledger: {path}: ") and "internal error" not in err, err
    assert len(err.splitlines()) == 1
    assert not (ledger / "pith").exists() and not (ledger / "pith_records").exists()


@pytest.mark.parametrize("kind", ["deep", "long-number"])
def test_verify_reports_an_unreadable_file_by_name_and_goes_on(kind, tmp_path, capsys):
    path = tmp_path / f"{kind}.json"
    BAD[kind](path)
    key = PITH / "pith-signing-key.json"
    good = PITH / "pith-number-record-2509.00217.json"
    assert main(["verify", "--pith-key", str(key), str(path), str(good)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}: FAILED: cannot read a JSON record") and out[1] == f"{good}: ok"


def test_an_unreadable_key_file_is_one_line_naming_it(tmp_path, capsys):
    key = tmp_path / "key.json"
    _deep(key)
    assert main(["verify", "--pith-key", str(key), str(PITH / "pith-number-record-2509.00217.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"citeledger: --pith-key {key}: ") and "internal error" not in err, err
