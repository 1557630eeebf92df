"""Blocking index of a catalog folder: ``title_tokens.parquet`` next to ``works.parquet``.

Layout: one row per title token, ``token VARCHAR, postings INTEGER[]`` (the 0-based row numbers
in ``works.parquet`` of the works whose title holds the token, ascending), plus key/value metadata
``n_works``, ``works_bytes`` and ``format`` so a stale index (works rewritten since) is detected and rebuilt.

Why an in-memory postings structure rather than a DuckDB join per batch: the query side needs,
for every reference, the k rarest of its tokens and a ranked top-k of works sharing them. As SQL
that is a join of (query, token) pairs against an unnested token table, a GROUP BY (query, work)
and a window for top-k; in DuckDB that costs a scan of the token table per batch (tens of
millions of rows at 1M works), i.e. time per batch grows with the catalog, which breaks the
"10x the catalog costs at most 2x per reference" target. Loading the postings once (via DuckDB,
from the Parquet file) into three numpy arrays (CSR) makes a batch cost proportional to the
postings of its *selected* tokens only, which ``PostingsIndex`` bounds by a budget. Memory: 4
bytes per (work, distinct title token), about 40 MB per million works, plus 16 bytes per distinct
term for the term lookup (``candidates.TermIds``: hashes, not a dict of strings).

Tokens are computed with Arrow compute kernels (NFKD, drop combining marks, lower, non
alphanumerics to spaces), the same folding as ``resolvers.text.fold`` on the query side (``resolvers.text.tokens_arrow``).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from resolvers.candidates import STOPWORDS, Candidate, PostingsIndex, TermIds
from resolvers.model import Work
from resolvers.text import INDEX_TOKEN_MIN_CHARS, tokens_arrow
from resolvers.verify import FORM_COLUMNS, form_columns, forms_from_columns, surname

from .atomic import staged
from .venue_index import LOCATOR_SCHEMA, LOCATORS_FILE, locator_rows
from .work_row import WORK_FIELDS, work_from_values

INDEX_FILE = "title_tokens.parquet"
FORMS_FILE = "work_forms.parquet"  # row-aligned with works.parquet: each work's comparison forms
# 2: locator keys (vol:page) beside the title tokens; 3: work_forms.parquet; 4: venue_locators.parquet
# (``venue_index``). Another format is rebuilt.
INDEX_FORMAT = 4
WORKS_FILE = "works.parquet"


def _locator_keys(volume: pa.Array, first_page: pa.Array) -> pa.Array:
    """Arrow version of ``resolvers.candidates.locator_token``: ``vol:page`` or null."""
    def norm(a):
        a = pc.utf8_lower(pc.utf8_trim_whitespace(pc.cast(a, pa.string())))
        ok = pc.match_substring_regex(a, r"^[a-z]?\d{1,6}$")
        a = pc.replace_substring_regex(a, r"^0+", "")
        a = pc.if_else(pc.equal(a, ""), "0", a)
        return pc.if_else(pc.fill_null(ok, False), a, pa.scalar(None, pa.string()))
    return pc.binary_join_element_wise(norm(volume), norm(first_page), ":")


def _stamp(catalog_dir: Path) -> dict:
    works = catalog_dir / WORKS_FILE
    return {"n_works": pq.ParquetFile(works).metadata.num_rows, "works_bytes": works.stat().st_size,
            "format": INDEX_FORMAT}


def _write_stamped(writer: pq.ParquetWriter | None, path: Path, table: pa.Table, stamp: dict) -> pq.ParquetWriter:
    """Append ``table`` to a Parquet file whose metadata carries ``stamp`` (opened on first use)."""
    table = table.replace_schema_metadata({"citeledger": json.dumps(stamp)})
    if writer is None:
        writer = pq.ParquetWriter(path, table.schema, compression="zstd")
    writer.write_table(table)
    return writer


def _forms_batch(batch: pa.RecordBatch) -> pa.Table:
    """The comparison forms (``verify.form_columns``) of a chunk of works.parquet rows."""
    names = batch.schema.names
    n = batch.num_rows
    venues = batch.column(names.index("venue")) if "venue" in names else pa.nulls(n, pa.string())
    if "authors" in names:
        firsts = batch.column(names.index("authors")).to_pylist()
        surnames = [surname(a[0]) if a else "" for a in firsts]
    else:
        surnames = [""] * n
    cols = form_columns(batch.column(names.index("title")), venues, surnames)
    return pa.table({name: cols[name] for name in FORM_COLUMNS})


def _is_current(path: Path, catalog_dir: Path) -> bool:
    """Was this index file written for the catalog folder's works.parquet, in this format?"""
    if not path.exists():
        return False
    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta.get(b"citeledger", b"{}")) == _stamp(catalog_dir)


def ensure_index(catalog_dir: str | Path) -> dict | None:
    """Build the blocking index and the work forms of a catalog folder unless both are current
    (reads two files' metadata); returns the build stats, or None. A run calls it when it is
    planned, so a catalog from an earlier index format is brought up to date once, before worker
    processes that would each rebuild it start."""
    catalog_dir = Path(catalog_dir)
    if all(_is_current(catalog_dir / name, catalog_dir) for name in (INDEX_FILE, FORMS_FILE, LOCATORS_FILE)):
        return None
    return build_index(catalog_dir)


def build_index(catalog_dir: str | Path, chunk_rows: int = 200_000) -> dict:
    """Write ``title_tokens.parquet`` for ``<catalog_dir>/works.parquet``; returns build stats.

    Call it after every rewrite of works.parquet (the retriever rebuilds a stale index itself).
    Streams the titles in chunks of 200k rows (1M works: peak 1.0 GB, 1.4 GB with 1M-row chunks).
    Both files are staged (``atomic.staged``): two processes rebuilding a stale index never mix
    bytes, and a crash leaves the old file or none.
    """
    catalog_dir = Path(catalog_dir)
    t0 = time.perf_counter()
    vocab: dict[str, int] = {}
    keys: list[np.ndarray] = []
    pf = pq.ParquetFile(catalog_dir / WORKS_FILE)
    names = pf.schema_arrow.names
    columns = ["title"] + [c for c in ("volume", "first_page") if c in names]
    extra = [c for c in ("venue", "authors", "work_id") if c in names]
    stamp = _stamp(catalog_dir)
    row0 = 0
    locators: list[pa.Table] = []
    with staged(catalog_dir / FORMS_FILE) as forms_tmp:
        forms = None
        for batch in pf.iter_batches(batch_size=chunk_rows, columns=columns + extra):
            forms = _write_stamped(forms, forms_tmp, _forms_batch(batch), stamp)
            keys.append(_batch_keys(batch, len(columns) == 3, row0, vocab))
            if len(columns) == 3 and {"venue", "work_id"} <= set(extra):
                locators.append(locator_rows(batch))
            row0 += batch.num_rows
        if forms is None:  # no works: an empty forms file all the same
            empty = pa.RecordBatch.from_pydict({"title": pa.array([], pa.string())})
            forms = _write_stamped(forms, forms_tmp, _forms_batch(empty), stamp)
        table, n_postings = _postings_table(keys, vocab)
        forms.close()  # the forms first: an index file present means its forms are too
    with staged(catalog_dir / LOCATORS_FILE) as locators_tmp:
        located = pa.concat_tables(locators) if locators else LOCATOR_SCHEMA.empty_table()
        _write_stamped(None, locators_tmp, located, stamp).close()
    with staged(catalog_dir / INDEX_FILE) as index_tmp:  # last: an index file means the others are there
        _write_stamped(None, index_tmp, table, stamp).close()
    return {"works": row0, "tokens": len(vocab), "postings": n_postings,
            "seconds": round(time.perf_counter() - t0, 2)}


def _batch_keys(batch: pa.RecordBatch, locators: bool, row0: int, vocab: dict[str, int]) -> np.ndarray:
    """The (token id << 32 | row) keys of a chunk of works: title tokens, plus ``vol:page``
    locator keys when the works have those columns (they share the postings)."""
    lists = tokens_arrow(batch.column(0))
    flat = pc.list_flatten(lists)
    parent = pc.list_parent_indices(lists).to_numpy().astype(np.int64) + row0
    stop = pa.array(sorted(STOPWORDS))
    keep = pc.and_(pc.greater_equal(pc.utf8_length(flat), INDEX_TOKEN_MIN_CHARS), pc.invert(pc.is_in(flat, value_set=stop)))
    flat = pc.filter(flat, keep)
    parent = parent[keep.to_numpy(zero_copy_only=False)]
    if locators:
        loc = _locator_keys(batch.column(1), batch.column(2))
        valid = pc.is_valid(loc)
        flat = pa.concat_arrays([flat.combine_chunks() if isinstance(flat, pa.ChunkedArray) else flat,
                                 pc.filter(loc, valid)])
        parent = np.concatenate([parent, np.flatnonzero(valid.to_numpy(zero_copy_only=False)) + row0])
    enc = pc.dictionary_encode(flat).combine_chunks() if isinstance(flat, pa.ChunkedArray) else pc.dictionary_encode(flat)
    local = enc.dictionary.to_pylist()
    gid = np.fromiter((vocab.setdefault(t, len(vocab)) for t in local), dtype=np.int64, count=len(local))
    tok = gid[enc.indices.to_numpy()]
    return tok << 32 | parent


def _postings_table(keys: list[np.ndarray], vocab: dict[str, int]) -> tuple[pa.Table, int]:
    """The index table (token, ascending postings) of every chunk's keys, and its postings count."""
    # sort + drop repeats: np.unique's hash path costs ~10x a plain sort on tens of millions of keys
    allkeys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    keys.clear()
    allkeys.sort()
    if len(allkeys):
        allkeys = allkeys[np.concatenate(([True], allkeys[1:] != allkeys[:-1]))]
    tok = (allkeys >> 32).astype(np.int64)
    postings = (allkeys & 0xFFFFFFFF).astype(np.int32)
    del allkeys
    counts = np.bincount(tok, minlength=len(vocab))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32 if len(postings) < 2**31 else np.int64)
    words: list[str | None] = [None] * len(vocab)
    for t, i in vocab.items():
        words[i] = t
    table = pa.table({"token": pa.array(words, pa.string()),
                      "postings": pa.ListArray.from_arrays(pa.array(offsets), pa.array(postings))})
    return table, int(len(postings))


def _load_index(catalog_dir: Path) -> tuple[PostingsIndex, int]:
    stamp = _stamp(catalog_dir)
    table = pq.read_table(catalog_dir / INDEX_FILE, columns=["token", "postings"])
    plist = table.column("postings").combine_chunks()
    offsets = np.asarray(plist.offsets.to_numpy(), dtype=np.int64)
    values = plist.values.to_numpy().astype(np.int32, copy=False)
    tokens = table.column("token")
    step = 65_536  # a slice of Python strings at a time: a million at once would stay in the heap

    def stream():
        for start in range(0, len(tokens), step):
            yield from tokens.slice(start, step).to_pylist()
    terms = TermIds(stream(), len(tokens))
    return PostingsIndex(terms, offsets - offsets[0], values, stamp["n_works"]), stamp["n_works"]


class ParquetRetriever:
    """Candidate retrieval over a catalog folder; loads the index and work columns once.

    Thread-safe for reads (numpy and Arrow are read-only here; no DuckDB connection is kept).
    """

    def __init__(self, catalog_dir: str | Path, **index_options):
        self.catalog_dir = Path(catalog_dir)
        ensure_index(self.catalog_dir)
        self.index, self.n_works = _load_index(self.catalog_dir)
        self.forms = pq.read_table(self.catalog_dir / FORMS_FILE).combine_chunks()
        for k, v in index_options.items():
            setattr(self.index, k, v)
        schema_names = pq.read_schema(self.catalog_dir / WORKS_FILE).names
        self.works = pq.read_table(self.catalog_dir / WORKS_FILE,
                                   columns=[c for c in WORK_FIELDS if c in schema_names]).combine_chunks()
        # Arrow's allocator keeps the decompression and combine buffers of these reads for reuse;
        # handing them back to the system saves about 350 MB per process at 1M works
        pa.default_memory_pool().release_unused()

    def _works(self, rows: Sequence[int]) -> dict[int, Work]:
        if not rows:
            return {}
        taken = self.works.take(pa.array(rows, pa.int64()))
        cols = {name: taken.column(name).to_pylist() for name in taken.column_names}  # columnar: faster than rows
        none = [None] * len(rows)
        columns = [cols.get(name, none) for name in WORK_FIELDS]
        return {r: work_from_values(values) for r, values in zip(rows, zip(*columns))}

    def _forms(self, rows: Sequence[int], works: dict[int, Work]) -> dict[int, object]:
        """The stored comparison forms of these rows (no text folding at query time)."""
        if not rows:
            return {}
        taken = self.forms.take(pa.array(rows, pa.int64()))
        cols = {name: taken.column(name).to_pylist() for name in FORM_COLUMNS}
        forms = forms_from_columns(cols, [works[r].volume for r in rows], [works[r].first_page for r in rows])
        return dict(zip(rows, forms))

    def candidates_batch(self, queries: Sequence[Sequence[str]], k: int = 20) -> list[list[Candidate]]:
        found = self.index.query_rows(queries, k)
        rows = sorted({r for pairs in found for r, _ in pairs})
        works = self._works(rows)
        forms = self._forms(rows, works)
        return [[Candidate(works[r], r, s, forms[r]) for r, s in pairs] for pairs in found]

    def document_frequency(self, token: str) -> int:
        return self.index.document_frequency(token)
