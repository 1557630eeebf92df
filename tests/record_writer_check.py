"""A pytest plugin (named in conftest.py): every citation record any test writes is checked as it
is written: it validates against the JSON schema it names (v2, or v1) with its content digest
(``records.validate_record``: the writer itself validates only some records of a write); its JSON
file's bytes are the exact RFC 8785 writer's (``jcs_exact``) of the whole record and a newline (a v1
record's, ``json.dumps(record, indent=2, ensure_ascii=False)``'s; the file is made by
``record_pages.render_json`` from the bytes the builder digested), and its content digest's and
receipt's canonical bytes from the fast path (``resolvers.jcs.jcs``, orjson) are ``jcs_exact``'s."""
from __future__ import annotations

import hashlib
import json

import pytest

from citeledger.ledger.ledger_store import LedgerStore
from citeledger.records.record_json import validate_record
from resolvers.jcs import jcs, jcs_exact

CHECKED = {"records": 0}


def check_record_file(data: bytes) -> None:
    """The schema and digest, then the bytes."""
    record = json.loads(data)
    validate_record(record)
    check_record_bytes(data, record)


def check_record_bytes(data: bytes, record: dict | None = None) -> None:
    """The file's bytes and the canonical bytes its digest and receipt are taken over (``record``:
    the file read, when the caller has it)."""
    record = json.loads(data) if record is None else record
    if record.get("schema") == "pith.paper-citation-record.v1":
        assert data == (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()
    else:
        assert data == jcs_exact(record) + b"\n"
    body = {k: v for k, v in record.items() if k not in ("content_digest", "receipt")}
    assert jcs(body) == jcs_exact(body)
    if record.get("schema") == "citeledger.paper-citation-record.v2":  # built with jcs_plain: the exact digest
        assert record["content_digest"] == "sha256:" + hashlib.sha256(jcs_exact(body)).hexdigest()
    if isinstance(record.get("receipt"), dict):
        receipt = {k: v for k, v in record["receipt"].items() if k != "signature"}
        assert jcs(receipt) == jcs_exact(receipt)
    CHECKED["records"] += 1


@pytest.fixture(autouse=True)
def _check_written_records(monkeypatch):
    write = LedgerStore.write_records_batch

    def checked(self, pages, *args, **kwargs):
        for _, files in pages:
            check_record_file(files["json"])
        return write(self, pages, *args, **kwargs)

    monkeypatch.setattr(LedgerStore, "write_records_batch", checked)
