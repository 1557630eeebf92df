"""A spooled stream (stdin, a pipe) leaves no file behind: SIGTERM while spooling removes it, and
what a killed run left is removed by the next run, while a live concurrent run's spool (locked by
its owner) stays."""
from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from citeledger.inputs import files
from citeledger.inputs.dedupe import read_inputs
from citeledger.inputs.rows import InputLimits

ROWS = b"".join(json.dumps({"citing_paper": "p", "reference_index": i, "raw": f"Ref {i}. 2001."}).encode() + b"\n"
                for i in range(1, 3))


def spools(ledger: Path) -> list[Path]:
    return sorted((ledger / ".input-spool").glob("input-*"))


@contextmanager
def written_pipe(tmp_path: Path, data: bytes) -> Iterator[Path]:
    """A named pipe a writer process fills with ``data``; the writer is waited for (bounded) at the end."""
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat > '{fifo}'"], stdin=subprocess.PIPE)
    assert writer.stdin is not None
    writer.stdin.write(data)
    writer.stdin.close()
    try:
        yield fifo
    finally:
        writer.wait(timeout=30)


def test_sigterm_while_stdin_is_spooled_leaves_no_spool_file(tmp_path, fixture_catalog):
    """Before: the spool of a stdin being read stayed in .input-spool/ after SIGTERM, for ever."""
    ledger = tmp_path / "l"
    repo = Path(__file__).parent.parent
    proc = subprocess.Popen([sys.executable, "-m", "citeledger.cli", "resolve", "-", "--catalog",
                             str(fixture_catalog), "--ledger", str(ledger)], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(ROWS * 1000)  # some bytes, the stream left open: the spool waits for more
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not spools(ledger) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert spools(ledger), "the command never began to spool its stdin"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert spools(ledger) == []


def test_the_next_run_removes_a_dead_runs_spool_and_keeps_a_live_ones(tmp_path):
    """Before: a spool a killed run left stayed for ever (no run removed it)."""
    spool_dir = tmp_path / ".input-spool"
    spool_dir.mkdir()
    dead, live, young = (spool_dir / f"input-{name}.spool" for name in ("dead", "live", "young"))
    for path in (dead, live, young):
        path.write_bytes(b"x" * 1000)
    old = time.time() - 2 * files.SPOOL_GRACE_SECONDS
    for path in (dead, live):
        os.utime(path, (old, old))
    other = spool_dir / "notes.txt"  # not a spool: never touched
    other.write_text("keep")
    with open(live, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # a concurrent run spooling into it
        with written_pipe(tmp_path, ROWS) as fifo:
            sources = files.prepare_inputs([fifo], spool_dir, None, timeout=30)
        try:
            assert sorted(p.name for p in spool_dir.iterdir()) == sorted(
                [live.name, young.name, other.name, sources[0].path.name])
            assert files.remove_stale_spools(spool_dir) == 0  # the new spool is locked by this run
        finally:
            files.discard_spools(sources)
    os.utime(young, (old, old))
    assert files.remove_stale_spools(spool_dir) == 2  # the live run ended, the young one aged
    assert [p.name for p in spool_dir.iterdir()] == [other.name]


def test_a_spooled_pipe_reads_as_before(tmp_path):
    with written_pipe(tmp_path, ROWS) as fifo:
        refs, rejects = read_inputs([fifo], InputLimits())
    assert [r.reference_index for r in refs] == [1, 2] and not rejects
