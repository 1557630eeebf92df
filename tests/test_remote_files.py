"""Resolvers write no file: harvest checkpoints and the Retraction Watch copy are handed in by
citeledger (``remote_files``), whose files go through ``atomic.py``."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citeledger.storage.remote_state import FileCheckpoint, FileCopy
from resolvers.remote.checkpoint import MemoryCheckpoint

RESOLVERS = Path(__file__).resolve().parent.parent / "resolvers"
WRITES = re.compile(r"tempfile|os\.(replace|rename|unlink|remove|makedirs)|\.write_(text|bytes)\(|\.mkdir\(|"
                    r"open\([^)]*['\"][wax]b?['\"]")


def test_resolvers_write_no_file():
    found = [f"{p.relative_to(RESOLVERS.parent)}:{n}: {line.strip()}"
             for p in sorted(RESOLVERS.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if WRITES.search(line)]
    assert found == []


def test_file_checkpoint_keeps_the_bytes_of_the_old_json_file(tmp_path):
    state = {"request": {"from": "2026-01-01", "until": None}, "resumption_token": "x|1", "completed": False, "é": 1}
    checkpoint = FileCheckpoint(tmp_path / "state" / "arxiv_oai.json")
    assert checkpoint.read() == {}
    checkpoint.write(state)
    assert checkpoint.path.read_text() == json.dumps(state, sort_keys=True, indent=1)
    assert checkpoint.read() == state
    assert [p.name for p in checkpoint.path.parent.iterdir()] == ["arxiv_oai.json"]


@pytest.mark.parametrize("damaged", [b"{not json", b"\xff\xfe", b"[1, 2]"])
def test_a_damaged_checkpoint_starts_over(tmp_path, damaged):
    path = tmp_path / "c.json"
    path.write_bytes(damaged)
    assert FileCheckpoint(path).read() == {}


def test_memory_checkpoint_keeps_a_copy():
    state = {"cursor": "C1", "request": {"rows": 1}}
    checkpoint = MemoryCheckpoint()
    checkpoint.write(state)
    state["request"]["rows"] = 2
    assert checkpoint.read() == {"cursor": "C1", "request": {"rows": 1}}


def test_a_copy_that_fails_midway_leaves_the_previous_one(tmp_path):
    copy = FileCopy(tmp_path / "rw.csv")
    with copy.replace() as fh:
        fh.write(b"old")
    with pytest.raises(ConnectionResetError), copy.replace() as fh:
        fh.write(b"new, cut")
        raise ConnectionResetError
    assert copy.path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["rw.csv"]
