"""Record batches published in a background thread (``record_publish.Publisher``) while the next is
built: in order, one in flight at most, every batch on the disk before the write returns or
raises; and schema validation counted over the whole write, not per worker block."""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from citeledger import record_files, record_workers, records
from citeledger.record_publish import Publisher
from test_ledger_records import RETRACTED, resolve


class SlowLedger:
    """A ledger whose batches take a while to reach the disk; it notes what overlapped."""

    def __init__(self, fail_on: int | None = None):
        self.done: list[list[str]] = []
        self.busy = threading.Lock()
        self.overlapped = False
        self.fail_on = fail_on

    def write_records_batch(self, batch):
        if not self.busy.acquire(blocking=False):
            self.overlapped = True
            self.busy.acquire()
        try:
            time.sleep(0.05)
            if self.fail_on is not None and len(self.done) == self.fail_on:
                raise OSError("disk gone")
            self.done.append([stem for stem, _ in batch])
            return [Path(f"{stem}.json") for stem, _ in batch]
        finally:
            self.busy.release()


def batches(n):
    return [[(f"p{b}-{i}", {"json": b"{}"}) for i in range(2)] for b in range(n)]


def test_batches_are_published_in_order_one_at_a_time_with_progress():
    ledger, advanced = SlowLedger(), []
    with Publisher(ledger, advanced.append) as publish:
        for batch in batches(4):
            publish(batch)
            assert len(ledger.done) < 4  # publish returns before its batch is written
    assert not ledger.overlapped and advanced == [2, 2, 2, 2]
    assert ledger.done == [[s for s, _ in b] for b in batches(4)]
    assert [p.name for p in publish.written] == [f"{s}.json" for b in batches(4) for s, _ in b]


def test_a_failed_build_waits_for_the_batch_in_flight_and_a_failed_publish_raises():
    ledger = SlowLedger()
    with pytest.raises(ValueError):
        with Publisher(ledger, None) as publish:
            publish(batches(1)[0])
            raise ValueError("a record could not be built")
    assert ledger.done == [["p0-0", "p0-1"]]  # on the disk before the error reached the caller
    failing = SlowLedger(fail_on=1)
    with pytest.raises(OSError, match="disk gone"):
        with Publisher(failing, None) as publish:
            for batch in batches(3):
                publish(batch)
    assert failing.done == [["p0-0", "p0-1"]]


def test_validation_is_counted_over_the_whole_write(tmp_path, default_catalog, monkeypatch):
    resolve(tmp_path, default_catalog, RETRACTED)
    checked: list[str] = []
    monkeypatch.setattr(records, "validate_record", lambda record: checked.append(record["paper"]["id"]))
    record_files.write_block(["paper-x"], str(tmp_path / "ledger"), str(default_catalog), first=1001)
    assert checked == []  # the 1002nd record of a write: past the first 20, not a 500th
    record_files.write_block(["paper-x"], str(tmp_path / "ledger"), str(default_catalog), first=1000)
    assert checked == ["paper-x"]
    assert [n for n in range(1200) if record_files.validated(n)] == [*range(20), 500, 1000]


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
    papers = [f"p{i}" for i in range(10)]
    written = record_workers.write_in_workers(papers, "ledger", "catalog", None, 2, 3)
    assert [first for _, first in submitted] == [0, 3, 6, 9] and [p.name for p in written] == papers
