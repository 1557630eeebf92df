"""Citation records built in worker processes: a large record write (thousands of papers) is cut
into blocks of papers, and each block is read from the ledger, built, signed, rendered and written
by one process of a pool, so both cores build records (building is Python: one process uses one
core). The caller (``record_files.write_records``) holds the ledger's writer lock for the whole
write; the workers only read the ledger and write their papers' record files. Each worker loads
the ledger's active key itself (the private key never crosses a pipe). Processes are spawned, not
forked: DuckDB and the caller's threads must not be copied mid-flight."""
from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Sequence

WORKERS = min(2, os.cpu_count() or 1)  # the machine's cores, at most two: more would share them
MIN_PAPERS = 2000  # below this, starting the processes (about a second each) costs more than it saves


def worker_count(papers: int, workers: int | None) -> int:
    """How many processes build ``papers`` records: 1 (in the caller) for a small write."""
    wanted = WORKERS if workers is None else workers
    return wanted if wanted > 1 and (papers >= MIN_PAPERS or workers is not None) else 1


def blocks(paper_ids: Sequence[str], workers: int, most: int) -> list[list[str]]:
    """``paper_ids`` cut into blocks of at most ``most`` papers, a multiple of ``workers`` many
    blocks of near-equal size (so the processes finish together)."""
    rounds = max(1, math.ceil(len(paper_ids) / (workers * most)))
    size = max(1, math.ceil(len(paper_ids) / (workers * rounds)))
    return [list(paper_ids[i:i + size]) for i in range(0, len(paper_ids), size)]


def write_in_workers(paper_ids: Sequence[str], ledger_dir: str | Path, catalog_dir: str | Path,
                     progress: Callable[[int], None] | None, workers: int, most: int) -> list[Path]:
    """Every paper's record files written by ``workers`` processes, block by block; the paths in
    ``paper_ids``' order."""
    from . import record_files

    parts = blocks(paper_ids, workers, most)
    written: list[Path] = []
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        starts = [sum(map(len, parts[:i])) for i in range(len(parts))]  # each block's place in the write
        futures = [pool.submit(record_files.write_block, part, str(ledger_dir), str(catalog_dir), first)
                   for part, first in zip(parts, starts)]
        for part, future in zip(parts, futures):
            written += future.result()
            if progress is not None:
                progress(len(part))
    return written
