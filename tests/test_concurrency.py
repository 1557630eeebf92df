"""Two resolve runs on one ledger serialise on the ledger lock (released by the kernel when its
holder dies), a reader querying during a write sees whole batches only, never a broken file, and
batches in threads share the pause of the garbage collector."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from test_crash import BATCH, DRIVER, INPUT_ROWS, REPO, env, ledger_rows, setup  # noqa: F401

from citeledger.ledger.query import run_query


def start(args, **extra):
    return subprocess.Popen([sys.executable, "-c", DRIVER, *map(str, args)], env=env(**extra), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_second_run_waits_for_the_first_and_proceeds_when_it_dies(setup, tmp_path):
    inp, catalog = setup
    ledger = tmp_path / "ledger"
    ready = tmp_path / "ready"
    first = start([inp, catalog, ledger, "first", BATCH], CRASH_POINT="mid_batch", CRASH_READY=str(ready))
    wait_for(ready, first)  # first holds the lock, two batches written, stuck in the third
    second = start([inp, catalog, ledger, "second", BATCH])
    time.sleep(3)
    assert second.poll() is None, "the second run did not wait for the ledger lock"
    assert ledger_rows(ledger, "second") == []
    os.kill(first.pid, signal.SIGKILL)  # the kernel releases the dead holder's lock
    first.wait(30)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err[-2000:]
    resumed = start([inp, catalog, ledger, "first", BATCH])
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0 and out.startswith("DONE True"), err[-2000:]
    first_rows, second_rows = ledger_rows(ledger, "first"), ledger_rows(ledger, "second")
    assert len(first_rows) == len(set(first_rows)) == INPUT_ROWS
    assert first_rows == second_rows  # same references, catalog and code: same ids, states, works


def test_reader_during_writes_sees_whole_batches(setup, tmp_path):
    """Queries run while another process writes batch after batch: every answer counts whole
    batches with no duplicate, and no query fails on a half-written file."""
    inp, catalog = setup
    ledger = tmp_path / "ledger"
    writer = start([inp, catalog, ledger, "busy", 2])  # 30 batches of 2
    seen, errors = [], []

    def read():
        while writer.poll() is None:
            try:
                n, distinct = run_query("select count(*), count(distinct observation_id) from observations",
                                        ledger, catalog).fetchall()[0]
                seen.append((n, distinct))
            except Exception as exc:  # noqa: BLE001 - recorded, asserted below
                # before the writer's first file the folder is no ledger yet: that error is fine
                if not any(m in str(exc) for m in ("No files found", "does not exist", "holds no ledger")):
                    errors.append(repr(exc))
            time.sleep(0.01)

    reader = threading.Thread(target=read)
    reader.start()
    out, err = writer.communicate(timeout=180)
    reader.join()
    assert writer.returncode == 0, err[-2000:]
    assert errors == []
    assert seen and all(n == d and n % 2 == 0 for n, d in seen)
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)  # the ledger only grows


def test_batches_in_threads_share_the_collector_pause():
    """The collector is off while any batch runs and back on when the last one ends, whatever
    order the threads finish in, and after a batch that raised."""
    import gc
    import threading

    from citeledger.run.batches import gc_paused

    assert gc.isenabled()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            first_out.wait(5)
            seen["after_first_left"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after_first_left": False}
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        with gc_paused():
            1 / 0
    assert gc.isenabled()
