"""A disk that fills while DuckDB writes is a full disk, named as such: one ``DiskFull`` line
(exit 2, the run id to re-run), not an internal error. DuckDB reports it as a ``FatalException``
when a checkpoint fills the disk (the database is then invalidated) or an ``IOException`` elsewhere,
the errno only in the message; Arrow's ``OSError`` may lose the errno too."""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from citeledger import cli
from citeledger.app_errors import DiskFull
from citeledger.ledger import ledger_store
from citeledger.storage import atomic

ROWS = [{"citing_paper": "paper-a", "reference_index": i,
         "raw": f"Nobody {i}. Not in any catalog. J Nowhere 1999;{i}:1."} for i in range(1, 4)]
CHECKPOINT_FULL = ('FATAL Error: Failed to create checkpoint because of error: Could not write file '
                   '"{path}": No space left on device')


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs mounted for the test and unmounted after it; skipped where mounting is not allowed."""
    mount = shutil.which("mount")
    point = tmp_path / "small"
    point.mkdir()
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a small filesystem needs root")
    done = subprocess.run([mount, "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(point)], capture_output=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True, timeout=30)


def fill(folder: Path, leave: int) -> None:
    """Fill ``folder``'s filesystem to ``leave`` bytes free."""
    stat = os.statvfs(folder)
    with open(folder / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))


def test_a_checkpoint_that_fills_a_real_disk_is_disk_full(small_disk):
    ledger = small_disk / "ledger"
    ledger.mkdir()
    fill(small_disk, 64 * 1024)  # room for DuckDB's file to begin, none for its checkpoint
    with pytest.raises(DiskFull, match="ledger.duckdb"):
        ledger_store.write_ledger_database(ledger, None)
    assert not (ledger / "ledger.duckdb").exists()
    assert [p.name for p in ledger.iterdir()] == []  # nothing staged is left


@pytest.mark.parametrize("error", [
    duckdb.FatalException(CHECKPOINT_FULL.format(path="x")),
    duckdb.IOException('IO Error: Could not write file "x": No space left on device'),
    OSError("[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device"),
    OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)),
])
def test_every_kind_of_full_disk_error_is_disk_full(tmp_path, error):
    with pytest.raises(DiskFull):
        with atomic.disk_errors(tmp_path / "f"):
            raise error


@pytest.mark.parametrize("error", [duckdb.IOException("IO Error: Permission denied"),
                                   duckdb.FatalException("FATAL Error: something else")])
def test_other_duckdb_errors_stay_what_they_are(tmp_path, error):
    with pytest.raises(type(error)):
        with atomic.disk_errors(tmp_path / "f"):
            raise error


def test_a_resolve_whose_ledger_database_fills_the_disk_is_one_disk_full_line(tmp_path, fixture_catalog, capsys,
                                                                              monkeypatch):
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    real_connect = duckdb.connect

    class Filling:
        """A DuckDB connection whose checkpoint fills the disk, as a real one reports it."""

        def __init__(self, path: str, **kwargs):
            self.con, self.path = real_connect(path, **kwargs), path

        def execute(self, sql: str, *args):
            if sql == "CHECKPOINT":
                raise duckdb.FatalException(CHECKPOINT_FULL.format(path=self.path))
            return self.con.execute(sql, *args)

        def close(self):
            self.con.close()

    monkeypatch.setattr(ledger_store.duckdb, "connect", lambda path=":memory:", **kw: Filling(path, **kw)
                        if str(path).endswith(".tmp") else real_connect(path, **kw))
    code = cli.main(["resolve", str(inp), "--catalog", str(fixture_catalog), "--ledger", str(tmp_path / "ledger"),
                     "--run-id", "r-full", "--task-runner", "threads"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and "no space left" in err[0] and "ledger.duckdb" in err[0] and "r-full" in err[0], err
