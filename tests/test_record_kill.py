"""A record write killed (SIGKILL) in the middle of writing a file: every record file in place is
whole and verifies, none is half written, what the killed writer staged is only under its
leftover names, and the next write removes those and writes every record whole."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_ledger_records import RETRACTED, resolve

from citeledger.cli.entry import main
from citeledger.records import receipts, record_files

REPO = Path(__file__).resolve().parents[1]

# The child writes the records one per batch and kills itself halfway through the file write number
# KILL_AT (a batch is three files; the batch before is published once the next one is staged).
CHILD = """
import os, signal, sys
from citeledger.storage import atomic
from citeledger.records import record_files
record_files.RECORDS_PER_WRITE = 1
real, calls = os.write, []
def write(fd, data):
    calls.append(fd)
    if len(calls) == int(sys.argv[4]):
        real(fd, bytes(data)[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    return real(fd, data)
atomic.os.write = write
record_files.write_records(sys.argv[3].split(","), sys.argv[1], sys.argv[2], workers=1)
"""

PAPERS = ["paper-x", "0704.0001", "0704.0002", "paper-y", "paper-z"]


def _whole_records(folder: Path, keys: dict) -> dict[str, bytes]:
    """The record files in place (not staged): each JSON verifying, each page ending as a page
    ends and naming its record's digest; by name."""
    files = {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.startswith(".")}
    for name, data in files.items():
        stem, suffix = name.rsplit(".", 1)
        record = json.loads(files[stem + ".json"])
        assert receipts.verify_record(record, keys) == [], name
        if suffix != "json":
            assert data.endswith(b"</body></html>\n" if suffix == "html" else b"\n")
            assert record["content_digest"].encode() in data, name
    return files


@pytest.fixture(scope="module")
def signed_ledger(tmp_path_factory, default_catalog) -> Path:
    """The resolved ledger with a signing key and no records yet; each case writes into a copy."""
    base = tmp_path_factory.mktemp("record-kill")
    resolve(base, default_catalog, RETRACTED + [
        {"citing_paper": "0704.0001", "reference_index": 1,
         "raw": "I. Streinu and L. Theran. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
        {"citing_paper": "paper-y", "reference_index": 1, "raw": "Nobody. Not in any catalog. J Nowhere 1999;1:1."}])
    assert main(["keys", "init", "--ledger", str(base / "ledger")]) == 0
    return base / "ledger"


@pytest.mark.parametrize("kill_at", [2, 8, 11])
def test_a_write_killed_mid_file_leaves_whole_records_and_a_rerun_writes_all(tmp_path, default_catalog, signed_ledger,
                                                                            kill_at):
    ledger = tmp_path / "ledger"
    shutil.copytree(signed_ledger, ledger)
    assert not (ledger / "records").exists()
    keys = receipts.load_public_keys([ledger / "keys"])
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.run([sys.executable, "-c", CHILD, str(ledger), str(default_catalog), ",".join(PAPERS),
                            str(kill_at)], env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr
    folder = ledger / "records"
    before = _whole_records(folder, keys)
    stems = {name.rsplit(".", 1)[0] for name in before}
    assert all(f"{stem}.{s}" in before for stem in stems for s in ("json", "txt", "html"))  # whole triples
    assert len(stems) == max(0, (kill_at - 1) // 3 - 1)  # the batches published before the kill
    staged = [p.name for p in folder.iterdir() if p.name.startswith(".")]
    assert staged and all(name.endswith(".tmp") for name in staged)  # the killed writer's, by their names
    paths = record_files.write_records(PAPERS, ledger, default_catalog, workers=1)
    after = _whole_records(folder, keys)
    assert sorted(after) == sorted(f"{p.stem}.{s}" for p in paths for s in ("json", "txt", "html"))
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]
