"""Records built in worker processes (``record_workers``) are those built in the caller: the same
content, signed with the ledger's key (each worker loads it), in the papers' order."""
from __future__ import annotations

import json

from test_ledger_records import RETRACTED, resolve

from citeledger.cli.entry import main
from citeledger.records import receipts, record_files
from citeledger.records import workers as record_workers


def test_blocks_cover_every_paper_in_order_in_a_multiple_of_the_workers():
    papers = [f"p{i}" for i in range(10)]
    parts = record_workers.blocks(papers, 2, 3)
    assert [p for part in parts for p in part] == papers
    assert len(parts) == 4 and max(map(len, parts)) <= 3
    assert record_workers.worker_count(10, None) == 1 and record_workers.worker_count(10, 2) == 2


def test_records_written_by_two_workers_equal_those_written_in_the_caller(tmp_path, default_catalog, monkeypatch):
    resolve(tmp_path, default_catalog, RETRACTED + [
        {"citing_paper": "0704.0001", "reference_index": 1,
         "raw": "I. Streinu and L. Theran. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
        {"citing_paper": "0704.0002", "reference_index": 1, "raw": "Nobody. Not in any catalog. J Nowhere 1999;1:1."}])
    ledger = tmp_path / "ledger"
    assert main(["keys", "init", "--ledger", str(ledger)]) == 0
    papers = ["0704.0002", "paper-x", "0704.0001"]
    monkeypatch.setattr(record_files, "RECORDS_PER_WRITE", 2)  # two batches: 2 records, then 1
    advanced: list[int] = []
    alone = [json.loads(p.read_text()) for p in record_files.write_records(papers, ledger, default_catalog,
                                                                            advanced.append, workers=1)]
    assert advanced == [2, 1] and [r["paper"]["id"] for r in alone] == papers
    paths = record_files.write_records(papers, ledger, default_catalog, workers=2)
    assert [p.name for p in paths] == ["0704.0002.json", "paper-x.json", "0704.0001.json"]
    together = [json.loads(p.read_text()) for p in paths]
    keys = receipts.load_public_keys([ledger / "keys"])
    assert all(receipts.verify_record(r, keys) == [] for r in together)
    assert [r["content_digest"] for r in together] == [r["content_digest"] for r in alone]
    assert all(p.with_suffix(".html").exists() and p.with_suffix(".txt").exists() for p in paths)


def test_the_caller_builds_the_first_share_with_a_head_start():
    """The caller is one of the processes: its block (the first) is up to ``head_start`` papers
    longer, as it starts while the spawned ones import; every paper once, in order."""
    papers = [f"p{i}" for i in range(10_000)]
    parts = record_workers.blocks(papers, 2, 5000, 200)
    assert [len(p) for p in parts] == [5200, 4800] and [p for part in parts for p in part] == papers
    assert [len(p) for p in record_workers.blocks(papers[:12], 2, 5000, 200)] == [7, 5]  # at most a quarter more
    assert [len(p) for p in record_workers.blocks(papers[:3], 2, 5000, 200)] == [2, 1]


def test_the_callers_share_is_written_in_the_caller(tmp_path, default_catalog, monkeypatch):
    """With two processes the caller writes the first block itself (reporting each batch as it is
    published) and one spawned process the other."""
    import os

    resolve(tmp_path, default_catalog, RETRACTED)
    ledger = tmp_path / "ledger"
    monkeypatch.setattr(record_files, "RECORDS_PER_WRITE", 1)
    here = []
    own = record_files._write_record_files  # the spawned process runs its own, unpatched
    monkeypatch.setattr(record_files, "_write_record_files",
                        lambda *a, **k: here.append((list(a[0]), os.getpid())) or own(*a, **k))
    advanced: list[int] = []
    papers = ["paper-x", "a", "b", "c"]
    paths = record_files.write_records(papers, ledger, default_catalog, advanced.append, workers=2)
    assert [p.name for p in paths] == ["paper-x.json", "a.json", "b.json", "c.json"]
    assert here == [(["paper-x", "a"], os.getpid())]  # the other block went to the spawned process
    assert advanced == [1, 1, 2]  # the caller's two records one by one, then the worker's block
