"""Schema validation of a record write counted over the whole write, not per worker block: each
block knows where it starts."""
from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from test_ledger_records import RETRACTED, resolve

from citeledger.records import record_files
from citeledger.records import workers as record_workers


def test_validation_is_counted_over_the_whole_write(tmp_path, default_catalog, monkeypatch):
    resolve(tmp_path, default_catalog, RETRACTED)
    checked: list[str] = []
    monkeypatch.setattr(record_files, "validate_record", lambda record: checked.append(record["paper"]["id"]))
    record_files.write_block(["paper-x"], str(tmp_path / "ledger"), str(default_catalog), first=2501)
    assert checked == []  # the 2502nd record of a write: not a 2500th
    record_files.write_block(["paper-x"], str(tmp_path / "ledger"), str(default_catalog), first=2500)
    assert checked == ["paper-x"]
    assert [n for n in range(6000) if record_files.validated(n)] == [2500, 5000]  # a small write loads no jsonschema


def test_worker_blocks_know_where_they_start(monkeypatch):
    submitted = []

    class InProcess:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, part, ledger_dir, catalog_dir, first):
            submitted.append((part, first))
            done: Future = Future()
            done.set_result([Path(p) for p in part])
            return done

    monkeypatch.setattr(record_workers, "ProcessPoolExecutor", InProcess)
    caller = []  # the blocks the caller writes itself (every second one, from the first)
    def write_block(part, ledger_dir, catalog_dir, first, progress):
        return caller.append((part, first)) or [Path(p) for p in part]

    papers = [f"p{i}" for i in range(10)]
    written = record_workers.write_in_workers(papers, "ledger", "catalog", None, 2, 3, write_block)
    assert [first for _, first in caller] == [0, 6] and [first for _, first in submitted] == [3, 9]
    assert [p.name for p in written] == papers
