"""The notice columns of a catalog generation, read by row: what a run's notice step needs of a
linked work beyond its row file (which notice sources hold it, and the update relations of the
few works whose records carry any), and a work id -> row lookup.

Why: ``sources`` and ``relations`` are only in works.parquet, and joining a run's linked work ids
against all of it in DuckDB was the notice step's time (2.1 s of CPU for 19,000 works at 10M).
Here a work costs a hash search (stable 64-bit hashes of the work ids, sorted, as the identifier
lookup keeps them), a byte of flags and a take of its DOI, arXiv id, other DOIs and withdrawn flag from the
mapped ``works.arrow``; relations by binary search among the rows that have any.

Files (``FILES``), derived from works.parquet (seconds at 1M works): written by the build's index
step, and on first open of a generation without them (``ensure``). Their stamp (the index stamp
and ``NOTICE_FORMAT``, as a small array) is written last. A folder this user cannot write keeps
working: the notice step then joins against works.parquet (``ParquetCatalog.work_rows``).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa

# (``pyarrow.compute`` is imported by the functions that use it: 0.06 s to load, which a process that
# only opens the catalog, as ``citeledger record`` does, need not pay)
from citeledger.app_errors import DiskFull, LedgerPathError
from citeledger.index import blocking
from citeledger.storage.external_sort import HashRuns, npy_stream, parts_for, write_sorted
from citeledger.storage.mapped_files import load_array, map_ipc, take_chunked
from citeledger.storage.parquet_batches import parquet_file
from resolvers.candidates.retrieval import TermIds, term_hashes

# The catalog columns the notice step reads of a work (and the DOI it writes)
NOTICE_COLUMNS = ("doi", "arxiv_id", "alt_dois", "withdrawn", "sources", "relations")
FLAGS = "notice_flags.npy"  # uint8 per row: which of ``HELD`` hold the work (bit i: HELD[i])
ID_HASHES, ID_ROWS = "notice_id_hashes.npy", "notice_id_rows.npy"  # work id hashes ascending, their rows
REL_ROWS, REL_ENDS, REL_TEXT = "notice_rel_rows.npy", "notice_rel_ends.npy", "notice_rel_text.npy"
STAMP = "notice_stamp.npy"  # int64: n_works, works_bytes, index format, NOTICE_FORMAT; written last
FILES = (FLAGS, ID_HASHES, ID_ROWS, REL_ROWS, REL_ENDS, REL_TEXT, STAMP)
NOTICE_FORMAT = 2  # 2: the arXiv sources among HELD
WORK_COLUMNS = ("work_id", "doi", "arxiv_id", "alt_dois", "withdrawn")  # read from works.arrow
HELD = ("crossref", "openalex", "arxiv_snapshot", "arxiv_oai")  # arXiv's: whether arXiv's record was read
NAMES = (*WORK_COLUMNS, "sources", "relations")  # the sources whose holding a work changes its notice's sources checked


def _stamp_values(gen_dir: Path, stamp: dict | None = None) -> np.ndarray:
    stamp = stamp or blocking.index_stamp(gen_dir)
    return np.array([stamp["n_works"], stamp["works_bytes"], stamp["format"], NOTICE_FORMAT], np.int64)


def is_current(gen_dir: Path, stamp: dict | None = None) -> bool:
    """Were the notice files written for this generation's works.parquet (``stamp``: its index
    stamp, when the caller read it), in this format?"""
    try:
        made_for = np.load(gen_dir / STAMP, allow_pickle=False)
    except (OSError, ValueError):
        return False
    return np.array_equal(made_for, _stamp_values(gen_dir, stamp)) and all((gen_dir / f).exists() for f in FILES)


def _source_flags(sources: pa.Array, n: int) -> np.ndarray:
    """The ``HELD`` bits of each row's list of sources."""
    import pyarrow.compute as pc

    flags = np.zeros(n, np.uint8)
    values = pc.list_flatten(sources)
    parents = pc.list_parent_indices(sources).to_numpy()
    for bit, name in enumerate(HELD):
        hit = pc.equal(values, name).to_numpy(zero_copy_only=False)
        flags[parents[hit]] |= np.uint8(1 << bit)
    return flags


def write(gen_dir: Path, chunk_rows: int = 500_000) -> None:
    """Derive the notice files from works.parquet, a chunk of rows at a time (stamp last). The
    work id hashes are sorted on disk by hash parts (``external_sort``, stable: a hash's rows
    ascend) and the flags streamed to their file, so memory does not grow with the catalog
    (in memory: a chunk, a part, and the relations of the few works that carry any)."""
    import pyarrow.compute as pc

    stamp = _stamp_values(gen_dir)
    pf = parquet_file(gen_dir / blocking.WORKS_FILE)
    names = pf.schema_arrow.names
    n_works = pf.metadata.num_rows
    columns = [c for c in ("work_id", "sources", "relations") if c in names]
    rel_rows, rel_text, row0 = [], [], 0
    scratch = blocking.scratch_dir(gen_dir, "notices-")
    try:
        ids = HashRuns(scratch, "notice-ids", parts_for(n_works), ints={"row": np.int64})
        with npy_stream(gen_dir / FLAGS, np.uint8, n_works) as flags:
            for batch in pf.iter_batches(batch_size=chunk_rows, columns=columns):
                n = batch.num_rows
                ids.add(term_hashes(batch.column("work_id")), {"row": np.arange(row0, row0 + n, dtype=np.int64)})
                flags.write(_source_flags(batch.column("sources"), n) if "sources" in names else np.zeros(n, np.uint8))
                if "relations" in names:
                    have = pc.is_valid(batch.column("relations"))
                    rel_rows.append(np.flatnonzero(have.to_numpy(zero_copy_only=False)) + row0)
                    rel_text.append(pc.filter(batch.column("relations"), have))
                row0 += n
        write_sorted(ids, gen_dir / ID_HASHES, "row", gen_dir / ID_ROWS)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = pa.concat_arrays(rel_text).cast(pa.large_string()) if rel_text else pa.array([], pa.large_string())
    save = blocking.save_array
    save(gen_dir / REL_ROWS, np.concatenate(rel_rows).astype(np.int64) if rel_rows else np.zeros(0, np.int64))
    save(gen_dir / REL_ENDS, _string_ends(text))
    save(gen_dir / REL_TEXT, _string_bytes(text))
    save(gen_dir / STAMP, stamp)  # last: the files above are complete


def _string_ends(text: pa.Array) -> np.ndarray:
    """Offsets (len + 1) of a large-string array's values in its data."""
    return np.frombuffer(text.buffers()[1], np.int64)[text.offset:text.offset + len(text) + 1].copy()


def _string_bytes(text: pa.Array) -> np.ndarray:
    data = text.buffers()[2]
    return np.frombuffer(data, np.uint8).copy() if data is not None and len(text) else np.zeros(0, np.uint8)


def ensure(gen_dir: Path) -> bool:
    """Write the notice files of a generation that lacks them (made before they existed), once.
    False when the folder cannot be written (the notice step then reads works.parquet)."""
    if is_current(gen_dir):
        return True
    try:
        write(gen_dir)
    except (OSError, LedgerPathError, DiskFull):
        return False
    return True


def open_current(gen_dir: Path, stamp: dict | None = None) -> "NoticeFile | None":
    """The generation's notice files, or None when it has none (the notice step then reads
    works.parquet). Reads only: ``ensure`` writes them where a run is planned."""
    return NoticeFile(gen_dir) if is_current(gen_dir, stamp) else None


class NoticeFile:
    """The notice files of a generation, memory-mapped (read-only, thread-safe), and the columns
    of ``works.arrow`` the notice step reads (mapped: a take of a few columns, where a read of
    the row file decodes every field and form of a work, cost 20 times the CPU)."""

    def __init__(self, gen_dir: Path):
        self.gen_dir = gen_dir
        self.flags = load_array(gen_dir / FLAGS)
        self.ids = TermIds.from_sorted(load_array(gen_dir / ID_HASHES))
        self.id_rows = load_array(gen_dir / ID_ROWS)
        self.rel_rows = load_array(gen_dir / REL_ROWS)
        self.rel_ends = load_array(gen_dir / REL_ENDS)
        self.rel_text = load_array(gen_dir / REL_TEXT)
        self._works: pa.Table | None = None

    def works(self) -> pa.Table:
        """``WORK_COLUMNS`` of ``works.arrow``, mapped on first use."""
        if self._works is None:
            self._works = map_ipc(self.gen_dir / blocking.WORKS_ARROW).select(list(WORK_COLUMNS))
        return self._works

    def rows(self, work_ids: Sequence[str]) -> dict[str, int]:
        """The row each work id's hash names (unchecked: a hash two ids share names one of them)."""
        pos = self.ids.ids(list(work_ids))
        return {w: int(self.id_rows[p]) for w, p in zip(work_ids, pos.tolist()) if p >= 0}

    def relations(self, rows: list[int]) -> dict[int, str]:
        """The relations JSON of the works at ``rows`` (ascending) that carry any."""
        at = np.searchsorted(self.rel_rows, rows) if len(self.rel_rows) else np.zeros(0, np.int64)
        hits = [(r, int(i)) for r, i in zip(rows, at.tolist()) if i < len(self.rel_rows) and int(self.rel_rows[i]) == r]
        ends = self.rel_ends
        return {r: bytes(self.rel_text[int(ends[i]):int(ends[i + 1])]).decode() for r, i in hits}

    def sources(self, rows: list[int]) -> list[list[str]]:
        """Of each work's sources, those in ``HELD`` (the notice step asks no other)."""
        lists = [[s for bit, s in enumerate(HELD) if flags >> bit & 1] for flags in range(1 << len(HELD))]
        return [lists[f] for f in self.flags[rows].tolist()] if rows else []


def notice_rows(notices: NoticeFile, work_ids: Sequence[str],
                fallback: Callable[[list[str]], dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The notice columns of works by id, as ``ParquetCatalog.work_rows`` gives them (of their
    sources only those in ``HELD``): rows found by hash, checked against the work id the row
    holds; an id whose hash another work shares goes to ``fallback`` (works.parquet)."""
    found = notices.rows(sorted(set(work_ids)))
    rows = sorted(set(found.values()))
    if not rows:
        return {}
    taken = take_chunked(notices.works(), rows)
    values = dict(zip(rows, zip(*(taken.column(c).to_pylist() for c in WORK_COLUMNS), notices.sources(rows))))
    relations = notices.relations(rows)
    get = relations.get
    out = {work_id: dict(zip(NAMES, (*values[row], get(row)))) for work_id, row in found.items()
           if values[row][0] == work_id}
    clashed = [w for w in found if w not in out]
    return {**out, **fallback(clashed)} if clashed else out
