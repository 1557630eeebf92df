"""Blocking index of a catalog folder: files beside ``works.parquet``, all memory-mapped by the
workers that resolve against it.

Layout (format 5), each written through ``atomic.staged``, ``index.json`` last (its presence means
the rest is complete and its stamp says for which ``works.parquet``):
- ``index_offsets.npy`` (int64, terms + 1), ``index_postings.npy`` (int32): the inverted file in
  CSR form; term t's postings are the ascending 0-based rows of ``works.parquet`` whose title holds
  it (or whose ``vol:page`` locator key it is); ``index_df.npy`` (int64) and ``index_idf.npy``
  (float32) per term;
- ``index_term_hashes.npy`` (int64, ascending): the term lookup (``candidates.TermIds``, a stable
  64-bit hash per term, no strings); a term's id is its position here (terms are numbered in
  hash order);
- ``works.arrow`` and ``work_forms.arrow``: the works' Work columns and comparison forms, row
  aligned with ``works.parquet``, as uncompressed Arrow IPC files;
- ``identifier_keys.arrow``, ``identifier_hashes.npy``, ``identifier_rows.npy``: DOI / arXiv id ->
  row (``IdentifierIndex``; the keys in hash order, in record batches of whole hash parts, so a
  key is read from its batch alone); ``venue_locators.arrow``: venue key, volume, first page -> row, and
  ``venue_pages_hashes.npy``, ``venue_pages_at.npy``: volume, first page -> its entries (``venue_index``).

Why memory-mapped files: a worker process's private memory then does not grow with the catalog;
the pages are shared through the OS cache by every worker (and every run) on the machine, and a
process starts in milliseconds instead of decoding Parquet. At 1M works the resident set of a
loaded retriever was about 1 GB per process when these were decoded into the heap. A mapped page
a process has read still counts in its resident set, though: so the rows a batch needs are read
from the derived row files by positional reads (``work_rows``, beside ``works.arrow``), and the
pages of the mapped arrays are handed back to the page cache past a budget (``mapped_files``).

Why an in-memory postings structure rather than a DuckDB join per batch: the query side needs,
for every reference, the k rarest of its tokens and a ranked top-k of works sharing them. As SQL
that is a join of (query, token) pairs against an unnested token table, a GROUP BY (query, work)
and a window for top-k; in DuckDB that costs a scan of the token table per batch (tens of
millions of rows at 1M works), i.e. time per batch grows with the catalog. The CSR arrays make a
batch cost proportional to the postings of its *selected* tokens only, which ``PostingsIndex``
bounds by a budget.

Tokens are computed with Arrow compute kernels (NFKD, drop combining marks, lower, non
alphanumerics to spaces), the same folding as ``resolvers.parsing.text.fold`` on the query side
(``resolvers.parsing.text.tokens_arrow``).
"""
from __future__ import annotations

import json
import os
import shutil
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterator, Sequence

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from citeledger.index import venue_index
from citeledger.index.venue_index import LOCATOR_SCHEMA, LOCATORS_FILE, PAGES_AT, PAGES_HASHES, locator_rows
from citeledger.options import env_memory_size
from citeledger.storage.atomic import atomic_stream, atomic_write_bytes, staged
from citeledger.storage.external_sort import (
    HashRuns,
    append_raw,
    npy_stream,
    parts_for,
    raw_slices,
    raw_to_npy,
    whole_parts,
    write_sorted,
)
from citeledger.storage.mapped_files import load_array, map_ipc, release_if_over, take_chunked
from citeledger.storage.parquet_batches import parquet_file
from citeledger.storage.places import CatalogDir
from citeledger.storage.sql import sql_literal
from citeledger.works import work_rows
from citeledger.works.row_schema import WORK_FIELDS, WORK_TYPES
from citeledger.works.work_rows import WorkReader
from resolvers.candidates.retrieval import Candidate, PostingsIndex, TermIds, term_hashes, term_idf
from resolvers.errors import ConfigError
from resolvers.model import Work
from resolvers.verification.verify import FORM_COLUMNS, form_columns, forms_from_columns

INDEX_FILE = "index.json"  # the stamp, written last: present means the files below are complete
FORMS_FILE = "work_forms.arrow"  # row-aligned with works.parquet: each work's comparison forms
WORKS_ARROW = "works.arrow"  # the Work columns of works.parquet, row-aligned, for memory-mapped reads
ARRAYS = ("offsets", "postings", "df", "idf", "term_hashes")  # index_<name>.npy
# The identifier lookup (DOI, arXiv id -> row of works.parquet): "scheme\tvalue" keys, their stable
# hashes ascending and the row of the best-ranked work holding each (own id before cross-walk).
ID_KEYS, ID_HASHES, ID_ROWS = "identifier_keys.arrow", "identifier_hashes.npy", "identifier_rows.npy"
# 2: locator keys (vol:page) beside the title tokens; 3: work_forms.parquet; 4: venue_locators.parquet
# (``venue_index``); 5: memory-mapped arrays and Arrow IPC files; 6: the venue locators as a mapped
# Arrow IPC file of rows (``venue_locators.arrow``). Format 5 is upgraded (``index.upgrade``), another
# is rebuilt. The locators' (volume, first page) lookup (``venue_pages_*.npy``) is derived from them
# and carries its own stamp (``venue_index.PAGES_STAMP``), not the format: an index without it (made
# by older code, or in a folder this user cannot write) is current, and each process then makes the
# lookup in memory; older code reading an index with it neither minds nor rebuilds.
INDEX_FORMAT = 6
WORKS_FILE = "works.parquet"
# DuckDB's memory for the identifier lookup's query (it runs beside the postings merge)
ID_MEMORY_LIMIT = "1GB"  # unless CITELEDGER_INDEX_MEMORY_LIMIT says otherwise (checked when the query runs)


def index_stamp(catalog_dir: Path) -> dict:
    works = catalog_dir / WORKS_FILE
    return {"n_works": pq.ParquetFile(works).metadata.num_rows, "works_bytes": works.stat().st_size,
            "format": INDEX_FORMAT}


def _forms_batch(batch: pa.RecordBatch) -> pa.Table:
    """The comparison forms (``verify.form_columns``) of a chunk of works.parquet rows."""
    from citeledger.index.terms import first_surnames  # the build's (a reader of the index loads none of it)

    names = batch.schema.names
    n = batch.num_rows
    venues = batch.column(names.index("venue")) if "venue" in names else pa.nulls(n, pa.string())
    surnames = first_surnames(batch.column(names.index("authors"))) if "authors" in names else [""] * n
    cols = form_columns(batch.column(names.index("title")), venues, surnames)
    return pa.table({name: cols[name] for name in FORM_COLUMNS})


def _work_columns(batch: pa.RecordBatch) -> pa.Table:
    """The Work columns of a chunk of works.parquet rows (a column the file lacks: nulls)."""
    names = batch.schema.names
    return pa.table({name: batch.column(names.index(name)) if name in names
                     else pa.nulls(batch.num_rows, WORK_TYPES[name]) for name in WORK_FIELDS},
                    schema=pa.schema([(name, WORK_TYPES[name]) for name in WORK_FIELDS]))


def is_current(catalog_dir: Path) -> bool:
    """Were the index files written for the catalog folder's works.parquet, in this format?"""
    path = catalog_dir / INDEX_FILE
    if not all(p.exists() for p in (path, *index_files(catalog_dir))):
        return False
    try:
        return json.loads(path.read_text()) == index_stamp(catalog_dir)
    except ValueError:
        return False


def index_files(catalog_dir: Path) -> list[Path]:
    """The files the stamp vouches for."""
    return [catalog_dir / FORMS_FILE, catalog_dir / WORKS_ARROW, *(catalog_dir / f"index_{n}.npy" for n in ARRAYS),
            catalog_dir / ID_KEYS, catalog_dir / ID_HASHES, catalog_dir / ID_ROWS, catalog_dir / LOCATORS_FILE]


def require_current(catalog_dir: Path) -> None:
    """Refuse a catalog folder whose index is missing or of an older format. Opening a catalog
    reads only: the index is brought up to date where a build or a run is planned
    (``index_upgrade.ensure_index``, under the catalog's lock), never by a reader."""
    if not is_current(catalog_dir):
        raise ConfigError(f"the catalog index in {catalog_dir} is missing or of an older format: "
                          "`citeledger resolve` brings it up to date when it plans a run, "
                          "or rebuild it with `citeledger catalog build`")


def write_locators(catalog_dir: Path, locators: venue_index.LocatorRuns) -> None:
    """The locator file from the build's sorted parts, then its page lookup."""
    with staged(catalog_dir / LOCATORS_FILE) as tmp:
        writer = _IpcWriter(tmp)
        for table in locators.tables():
            writer.write(table)
        writer.close(LOCATOR_SCHEMA.empty_table())
    write_page_index(catalog_dir, map_ipc(catalog_dir / LOCATORS_FILE))


def write_stamp(catalog_dir: Path, stamp: dict) -> None:
    """The stamp, written last: the files it vouches for are complete."""
    atomic_write_bytes(catalog_dir / INDEX_FILE, json.dumps(stamp).encode())


def drop_file(path: Path) -> None:
    path.unlink(missing_ok=True)


def write_page_index(catalog_dir: Path, table: pa.Table) -> None:
    """The (volume, first page) lookup of the locator table (``venue_index.page_index``): the
    table's batches hashed into hash parts on disk, each sorted and appended (the positions of
    one hash ascend, as ``page_index`` orders them), so memory does not grow with the table."""
    import pyarrow.compute as pc  # the build's (0.06 s to load: a reader of the index loads none)

    scratch = scratch_dir(catalog_dir, "pages-")  # (it runs beside the build's own run folder)
    try:
        pages = HashRuns(scratch, "pages", parts_for(table.num_rows), ints={"at": np.int64})
        at = 0
        for batch in table.to_batches():
            if batch.num_rows:
                keys = pc.binary_join_element_wise(batch.column("volume"), batch.column("first_page"), "\t")
                pages.add(term_hashes(keys),
                          {"at": np.arange(at, at + batch.num_rows, dtype=np.int64)})
            at += batch.num_rows
            release_if_over()
        write_sorted(pages, catalog_dir / PAGES_HASHES, "at", catalog_dir / PAGES_AT)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    atomic_write_bytes(catalog_dir / venue_index.PAGES_STAMP, json.dumps(index_stamp(catalog_dir)).encode())  # last


def write_work_rows(catalog_dir: Path) -> None:
    """The row files of the works and their forms (``work_rows``), from the two Arrow files; the
    pages the conversion maps are handed back as it goes (``mapped_files``)."""
    stamp = index_stamp(catalog_dir)
    works, forms = map_ipc(catalog_dir / WORKS_ARROW), map_ipc(catalog_dir / FORMS_FILE)
    with atomic_stream(catalog_dir / work_rows.ROWS_FILE) as fh, \
            npy_stream(catalog_dir / work_rows.ROWS_OFFSETS, np.int64, works.num_rows + 1) as offsets:
        at = 0
        offsets.write(np.zeros(1, np.int64))
        for data, lengths in work_rows.records(works, forms):
            fh.write(data)
            offsets.write(at + np.cumsum(lengths))
            at += len(data)
            release_if_over()
    atomic_write_bytes(catalog_dir / work_rows.ROWS_STAMP, json.dumps(work_rows.rows_stamp(stamp)).encode())  # last


class _IpcWriter:
    """Batches appended to one staged Arrow IPC file (opened on the first batch)."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.writer: pa.ipc.RecordBatchFileWriter | None = None

    def write(self, table: pa.Table) -> None:
        if self.writer is None:
            self.writer = pa.ipc.new_file(str(self.tmp), table.schema)
        self.writer.write_table(table)

    def close(self, empty: pa.Table) -> None:
        if self.writer is None:
            self.write(empty)
        if self.writer is not None:
            self.writer.close()


def build_index(catalog_dir: CatalogDir, chunk_rows: int = 200_000) -> dict:
    """Write the index files of ``<catalog_dir>/works.parquet``; returns build stats.

    Call it after every rewrite of works.parquet (the retriever rebuilds a stale index itself).
    External: the works stream through in chunks of 200k rows; each chunk's (term hash, row)
    pairs and locator entries go to part files on disk by their hashes (``external_sort``), as do the
    identifier keys streamed from DuckDB; each part is then sorted on its own and appended to the
    index files. So no vocabulary, postings list or key table is held whole, and the build's
    memory is bounded by a chunk and a part, not the catalog. Every file is staged
    (``atomic.staged``) and the stamp is written last: two processes rebuilding a stale index
    never mix bytes, and a crash leaves the old stamp (then the index is rebuilt) or none."""
    catalog_dir = Path(catalog_dir)
    t0 = time.perf_counter()
    runs_dir = scratch_dir(catalog_dir)
    pf = parquet_file(catalog_dir / WORKS_FILE)
    names = pf.schema_arrow.names
    columns = ["title"] + [c for c in ("volume", "first_page") if c in names]
    rest = [c for c in WORK_FIELDS if c in names and c not in columns]
    stamp = index_stamp(catalog_dir)
    row0 = 0
    with_locators = len(columns) == 3 and "venue" in rest
    terms = HashRuns(runs_dir, "terms", parts_for(stamp["n_works"] * TERMS_PER_WORK), ints={"row": np.int32})
    locators = venue_index.LocatorRuns(runs_dir, stamp["n_works"])
    with staged(catalog_dir / FORMS_FILE) as forms_tmp, staged(catalog_dir / WORKS_ARROW) as works_tmp:
        forms, works = _IpcWriter(forms_tmp), _IpcWriter(works_tmp)
        for batch, out in _chunk_outputs(pf.iter_batches(batch_size=chunk_rows, columns=columns + rest),
                                         len(columns) == 3, with_locators):
            forms.write(out[0])
            works.write(out[1])
            terms.add(out[2][0], {"row": out[2][1]})
            if out[3] is not None:
                locators.add(out[3])
            row0 += batch.num_rows
        empty = pa.RecordBatch.from_pydict({"title": pa.array([], pa.string())})
        forms.close(_forms_batch(empty))
        works.close(_work_columns(empty))
    n_pairs = terms.rows
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:  # the identifier lookup (DuckDB, numpy) beside the merge
            identifiers = pool.submit(_write_identifier_index, catalog_dir, runs_dir)
            n_terms = _merge_runs(catalog_dir, terms, row0)
            write_locators(catalog_dir, locators)
            identifiers.result()
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    write_work_rows(catalog_dir)
    atomic_write_bytes(catalog_dir / INDEX_FILE, json.dumps(stamp).encode())
    return {"works": row0, "tokens": n_terms, "postings": n_pairs,
            "seconds": round(time.perf_counter() - t0, 2)}


INDEX_THREADS = min(os.cpu_count() or 1, 4)  # chunks in the works at once (Arrow and numpy release the GIL)


def _chunk_outputs(batches: Iterator[pa.RecordBatch], with_pages: bool, with_locators: bool
                   ) -> Iterator[tuple[pa.RecordBatch, tuple]]:
    """Each chunk of works with its forms, Work columns, (term hash, row) pairs and locator rows,
    in order; ``INDEX_THREADS`` chunks are computed at once (memory: that many chunks)."""
    from citeledger.index.terms import batch_terms

    def outputs(batch: pa.RecordBatch, row0: int) -> tuple:
        forms = _forms_batch(batch)
        return (forms, _work_columns(batch), batch_terms(batch, forms.column("f_norm"), with_pages, row0),
                locator_rows(batch, row0) if with_locators else None)

    pending: deque[tuple[pa.RecordBatch, Future]] = deque()
    row0 = 0
    with ThreadPoolExecutor(max_workers=INDEX_THREADS) as pool:
        for batch in batches:
            pending.append((batch, pool.submit(outputs, batch, row0)))
            row0 += batch.num_rows
            if len(pending) >= INDEX_THREADS:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()


def scratch_dir(catalog_dir: Path, kind: str = "") -> Path:
    """A run folder of this process's own (two processes may bring one old catalog up to date at
    once; ``kind`` names a second one a build makes beside its first, e.g. ``pages-``); the folders
    of builds whose process is gone (killed) are removed first."""
    for old in catalog_dir.glob(".index-runs-*"):
        pid = old.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(old, ignore_errors=True)
    runs = catalog_dir / f".index-runs-{kind}{os.getpid()}"
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir()
    return runs


# (term hash, row) pairs a work gives, about (title words and the locator key; 12.8 at 10M
# synthetic works, 13 in the shared catalog): sizes the postings' parts (``external_sort.parts_for``)
TERMS_PER_WORK = 14


def _merge_runs(catalog_dir: Path, terms: HashRuns, n_works: int) -> int:
    """Sort each part of the pairs into the postings file, and write the per-term arrays; returns
    the number of terms. Term ids are positions in hash order, so the term lookup is the hashes.
    The per-term arrays go through raw files (their length is known at the end), a slice at a time."""
    hashes_raw, df_raw = terms.folder / "term-hashes.raw", terms.folder / "term-df.raw"
    n_terms = 0
    with npy_stream(catalog_dir / "index_postings.npy", np.int32, terms.rows) as postings:
        for h, ints, _ in terms.parts_sorted():
            postings.write(ints["row"])
            starts = np.flatnonzero(np.concatenate(([True], h[1:] != h[:-1])))
            append_raw(hashes_raw, h[starts])
            append_raw(df_raw, np.diff(np.append(starts, len(h))).astype(np.int64))
            n_terms += len(starts)
    with npy_stream(catalog_dir / "index_offsets.npy", np.int64, n_terms + 1) as offsets, \
            npy_stream(catalog_dir / "index_df.npy", np.int64, n_terms) as df, \
            npy_stream(catalog_dir / "index_idf.npy", np.float32, n_terms) as idf:
        at = 0
        offsets.write(np.zeros(1, np.int64))
        for counts in raw_slices(df_raw, np.int64):
            offsets.write(at + np.cumsum(counts))
            at += int(counts.sum())
            df.write(counts)
            idf.write(term_idf(counts, n_works))
    raw_to_npy(hashes_raw, catalog_dir / "index_term_hashes.npy", np.int64, n_terms)
    return n_terms


_ID_SQL = """
    SELECT i.scheme || chr(9) || i.value AS key, arg_min(w.file_row_number, (i.rank, i.work_id)) AS row
    FROM read_parquet({ids}) i JOIN read_parquet({works}, file_row_number = true) w USING (work_id)
    GROUP BY i.scheme, i.value"""


ID_BATCH_KEYS = 1 << 21  # keys of the lookup's Arrow file a record batch holds at least (whole parts)


def _write_identifier_index(catalog_dir: Path, runs_dir: Path) -> None:
    """The identifier lookup files, from ``identifiers.parquet`` (none there: an empty lookup).
    DuckDB picks each key's row within the build's memory limit (spilling beside the index
    runs); its answer streams into hash parts, each sorted and appended to the three files."""
    ids = catalog_dir / "identifiers.parquet"
    n_ids = pq.ParquetFile(ids).metadata.num_rows if ids.exists() else 0
    keys_runs = HashRuns(runs_dir, "identifiers", parts_for(n_ids), ints={"row": np.int64}, texts=("key",))
    if ids.exists():
        spill = runs_dir / "identifiers-spill"
        memory = env_memory_size("CITELEDGER_INDEX_MEMORY_LIMIT", ID_MEMORY_LIMIT)
        con = duckdb.connect(config={"memory_limit": memory, "threads": INDEX_THREADS,
                                     "temp_directory": str(spill),
                                     "preserve_insertion_order": False})
        try:
            reader = con.sql(_ID_SQL.format(ids=sql_literal(ids), works=sql_literal(catalog_dir / WORKS_FILE))
                             ).to_arrow_reader(1 << 18)
            for batch in reader:
                keys = batch.column(0)
                keys_runs.add(term_hashes(keys), {"row": batch.column(1).to_numpy(zero_copy_only=False)}, {"key": keys})
        finally:
            con.close()
    n = keys_runs.rows
    with npy_stream(catalog_dir / ID_HASHES, np.int64, n) as hashes, \
            npy_stream(catalog_dir / ID_ROWS, np.int64, n) as rows, \
            staged(catalog_dir / ID_KEYS) as tmp:
        def key_tables() -> Iterator[pa.Table]:  # each part's keys; its hashes and rows written as it goes
            for h, ints, texts in keys_runs.parts_sorted():
                hashes.write(h)
                rows.write(ints["row"])
                yield pa.table({"key": texts["key"]})

        writer = _IpcWriter(tmp)
        for table in whole_parts(key_tables(), ID_BATCH_KEYS):
            writer.write(table)
        writer.close(pa.table({"key": pa.array([], pa.large_string())}))


class IdentifierIndex:
    """DOI / arXiv id -> works.parquet row, memory-mapped: no per-identifier heap in a worker
    (an in-memory table of 10M works' identifiers is about a GB per process)."""

    def __init__(self, catalog_dir: Path):
        self.keys_by_hash = TermIds.from_sorted(load_array(catalog_dir / ID_HASHES, plain=False))
        self.rows = load_array(catalog_dir / ID_ROWS, plain=False)
        self.keys = map_ipc(catalog_dir / ID_KEYS).column("key")  # in record batches of whole hash parts

    def lookup(self, scheme: str, values: Sequence[str]) -> dict[str, int]:
        """The row of each value found; a hash shared by another key (checked) is a miss."""
        values = sorted(set(v for v in values if v))
        if not values:
            return {}
        asked = [f"{scheme}\t{v}" for v in values]
        pos = self.keys_by_hash.ids(asked)  # the key's position in hash order, -1 when absent
        hit = np.flatnonzero(pos >= 0)  # (a batch at once: numpy scalars one by one cost more than the search)
        if not len(hit):
            return {}
        at = pos[hit]
        stored = take_chunked(self.keys, at).to_pylist()
        rows = np.asarray(self.rows)[at].tolist()
        return {values[i]: row for i, held, row in zip(hit.tolist(), stored, rows) if held == asked[i]}


def _save(path: Path, array: np.ndarray) -> None:
    with atomic_stream(path) as fh:
        np.save(fh, np.ascontiguousarray(array), allow_pickle=False)


def _load_index(catalog_dir: Path) -> tuple[PostingsIndex, int]:
    """The stored index, memory-mapped (read-only): nothing per term is copied into the heap. As
    plain ndarray views of the maps: slicing a ``np.memmap`` costs more than the binary search
    in the slice (re-scoring slices a postings list per query term)."""
    stamp = json.loads((catalog_dir / INDEX_FILE).read_text())
    a = {name: load_array(catalog_dir / f"index_{name}.npy") for name in ARRAYS}
    terms = TermIds.from_sorted(a["term_hashes"])
    index = PostingsIndex(terms, a["offsets"], a["postings"], stamp["n_works"], df=a["df"], idf=a["idf"])
    return index, stamp["n_works"]


class ParquetRetriever:
    """Candidate retrieval over a catalog folder: its index arrays memory-mapped once per process
    (their pages handed back to the page cache past a budget: ``mapped_files``), the works and
    their forms read by positional reads (``work_rows``).

    Thread-safe for reads (numpy and Arrow are read-only here; no DuckDB connection is kept).
    """

    def __init__(self, catalog_dir: CatalogDir, **index_options):
        self.catalog_dir = Path(catalog_dir)
        require_current(self.catalog_dir)
        self.index, self.n_works = _load_index(self.catalog_dir)
        self.reader = WorkReader(self.catalog_dir, index_stamp(self.catalog_dir))
        for k, v in index_options.items():
            setattr(self.index, k, v)

    def _works_forms(self, rows: Sequence[int]) -> tuple[dict[int, Work], dict[int, object]]:
        """The works at these rows and their stored comparison forms (no text folding at query time)."""
        works, cols = self.reader.works_and_forms(rows)
        forms = forms_from_columns(cols, [works[r].volume for r in rows], [works[r].first_page for r in rows])
        return works, dict(zip(rows, forms))

    def candidates_batch(self, queries: Sequence[Sequence[str]], k: int = 20) -> list[list[Candidate]]:
        found = self.index.query_rows(queries, k)
        rows = sorted({r for pairs in found for r, _ in pairs})
        works, forms = self._works_forms(rows)
        release_if_over()
        return [[Candidate(works[r], r, s, forms[r]) for r, s in pairs] for pairs in found]

    def document_frequency(self, token: str) -> int:
        return self.index.document_frequency(token)


def save_array(path: Path, array: np.ndarray) -> None:
    """An array file written as the index's own are (``shards`` writes its arrays through it)."""
    _save(path, array)
