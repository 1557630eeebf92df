"""Citation records built in worker processes: a large record write (thousands of papers) is cut
into blocks of papers, and each block is read from the ledger, built, signed, rendered and written
by one process, so both cores build records (building is Python: one process uses one core). The
caller is one of these processes: it builds the first share of the papers itself while the others,
spawned, start (each spawned process imports the app, opens the catalog and builds the schema
validator: about 2 CPU s, a quarter of a millisecond a record of a 10,000-record write). The caller
(``record_files.write_records``) holds the ledger's writer lock for the whole write; the workers only read
the ledger and write their papers' record files. Each worker loads the ledger's active key itself
(the private key never crosses a pipe). Processes are spawned, not forked: DuckDB and the caller's
threads must not be copied mid-flight."""
from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Sequence

from citeledger.processes import die_with_parent, stop_pool
from citeledger.storage.places import CatalogDir, LedgerDir

WORKERS = min(2, os.cpu_count() or 1)  # the machine's cores, at most two: more would share them
MIN_PAPERS = 2000  # below this, starting the processes (about a second each) costs more than it saves


def worker_count(papers: int, workers: int | None) -> int:
    """How many processes build ``papers`` records: 1 (in the caller) for a small write."""
    wanted = WORKERS if workers is None else workers
    return wanted if wanted > 1 and (papers >= MIN_PAPERS or workers is not None) else 1


# Papers the caller's share holds beyond an even split: about what it builds while a spawned process
# starts (imports, catalog, validator: 1.5-2.5 s at 100-150 records/s), so the processes end together.
HEAD_START = 200


def blocks(paper_ids: Sequence[str], workers: int, most: int, head_start: int = 0) -> list[list[str]]:
    """``paper_ids`` cut into blocks of at most ``most`` papers, a multiple of ``process_cache`` many
    blocks of near-equal size (so the processes finish together); the first block up to
    ``head_start`` papers longer (it is the caller's, which starts first; ``records.record_files`` makes a
    block a few percent over ``most`` one pass)."""
    rounds = max(1, math.ceil(len(paper_ids) / (workers * most)))
    size = max(1, math.ceil(len(paper_ids) / (workers * rounds)))
    first = min(len(paper_ids), size + min(head_start, size // 4)) if len(paper_ids) > size else size
    rest = max(1, math.ceil((len(paper_ids) - first) / max(1, workers * rounds - 1)))
    return [list(paper_ids[:first])] + [list(paper_ids[i:i + rest]) for i in range(first, len(paper_ids), rest)]


BlockWriter = Callable[..., list[Path]]  # (paper ids, ledger, catalog, first index[, progress]) -> paths


def write_in_workers(paper_ids: Sequence[str], ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                     progress: Callable[[int], None] | None, workers: int, most: int,
                     write_block: BlockWriter) -> list[Path]:
    """Every paper's record files written by ``process_cache`` processes, the caller one of them: every
    ``process_cache``-th block (the first among them) built here, the others by spawned processes, block by
    block; the paths in ``paper_ids``' order. ``write_block`` (a module-level function, so a spawned
    process can load it by name) writes one block."""
    parts = blocks(paper_ids, workers, most, HEAD_START)
    starts = [sum(map(len, parts[:i])) for i in range(len(parts))]  # each block's place in the write
    mine = set(range(0, len(parts), workers))
    done: dict[int, list[Path]] = {}
    with ProcessPoolExecutor(workers - 1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        try:
            futures = {i: pool.submit(write_block, part, str(ledger_dir), str(catalog_dir), first)
                       for i, (part, first) in enumerate(zip(parts, starts)) if i not in mine}
            for i in sorted(mine):
                done[i] = write_block(parts[i], str(ledger_dir), str(catalog_dir), starts[i], progress)
            for i, future in futures.items():
                done[i] = future.result()
                if progress is not None:
                    progress(len(parts[i]))
        except BaseException:  # Ctrl-C, SIGTERM, a failed block: the other blocks are not waited for
            stop_pool(pool)
            raise
    return [path for i in range(len(parts)) for path in done[i]]
