"""The venue + volume + first page index of a catalog generation (``venue_locators.arrow``).

One entry per work that has all three: ``venue_key`` (``resolvers.identifiers.journal_ref.venue_key``: every
spelling of a venue meets on one key), ``volume`` and ``first_page`` (``number_key``: lower case,
leading zeros dropped) and the work's ``row`` in ``works.arrow``, with ``hash`` the stable 64-bit
hash (``candidates.term_hashes``) of the three joined by tabs; sorted by hash, then row.
``citeledger.index.blocking`` writes it beside the title index (same staleness stamp) as an
uncompressed Arrow IPC file, so every worker memory-maps it (no copy per process) and
``LocatorIndex`` answers a batch with a binary search, the works read from the mapped
``works.arrow``: no query engine, no join of ``works.parquet``. The build sorts the entries on
disk by hash parts (``LocatorRuns``, ``external_sort``) and writes them in record batches of whole
parts (a batch from 2M entries up, the last one fewer), so the entries of one hash are in one batch and the reader
searches and takes batch by batch (an index written as one batch reads the same). A title-less reference
(``G. Aad et al., Phys. Lett. B 716, 1 (2012)``) finds its work here.

Beside it, ``venue_pages_hashes.npy`` and ``venue_pages_at.npy``: the hash of
volume and first page joined by a tab, ascending, and the entry of ``venue_locators.arrow`` each
belongs to (``page_index``). A string whose venue OCR misread asks for every work at its volume
and page whatever the venue (``rows_at_volume_page``); this answers it by binary search, where a
scan of the volume and page columns cost time linear in the catalog (a sixth of the resolution
time at 10M works). Being derived, the pair has its own stamp (``venue_pages.json``: the index
stamp it was made under, written last) instead of a new index format: an index without it stays
current for older and newer code alike, and is read with the lookup made in memory.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

# (``pyarrow.compute`` is imported by the functions that use it: 0.06 s to load, which a process that
# only opens the catalog, as ``citeledger record`` does, need not pay)
from citeledger.storage.external_sort import HashRuns, parts_for, whole_parts
from citeledger.storage.mapped_files import load_array, take_chunked
from resolvers.candidates.retrieval import term_hashes
from resolvers.catalog import LocatorKey
from resolvers.identifiers.journal_ref import number_key, venue_key
from resolvers.model import Work

LOCATORS_FILE = "venue_locators.arrow"
PAGES_HASHES, PAGES_AT = "venue_pages_hashes.npy", "venue_pages_at.npy"  # (volume, first page) -> entries
PAGES_STAMP = "venue_pages.json"  # the index stamp the two were made under, written after them
KEY_COLUMNS = ("venue_key", "volume", "first_page")
LOCATOR_SCHEMA = pa.schema([("hash", pa.int64()), ("venue_key", pa.string()), ("volume", pa.string()),
                            ("first_page", pa.string()), ("row", pa.int64())])


def locator_rows(batch: pa.RecordBatch, row0: int) -> pa.Table:
    """The index entries (unsorted, without hashes) of a chunk of works.parquet rows (columns
    venue, volume, first_page) starting at row ``row0``, as a compact Arrow table: a 10M-work
    build holds all of them until the end. Keys are made once per distinct venue, volume and page
    (a catalog holds far fewer of each than works), then spread over the rows by Arrow."""
    import pyarrow.compute as pc

    def column(name: str) -> pa.Array:
        a = batch.column(batch.schema.names.index(name))
        return a if a.type == pa.string() else a.cast(pa.string())

    def keyed(name: str, key: Callable[[str | None], str]) -> pa.Array:
        encoded = pc.dictionary_encode(column(name))
        keys = pa.array([key(v) or None for v in encoded.dictionary.to_pylist()], pa.string())
        return keys.take(encoded.indices)

    cols = [keyed("venue", venue_key), keyed("volume", number_key), keyed("first_page", number_key),
            pa.array(np.arange(row0, row0 + batch.num_rows, dtype=np.int64))]
    keep = pc.fill_null(pc.and_(pc.and_(pc.is_valid(cols[0]), pc.is_valid(cols[1])), pc.is_valid(cols[2])), False)
    return pa.table([pc.filter(c, keep) for c in cols], schema=_ENTRY_SCHEMA)


_ENTRY_SCHEMA = pa.schema([field for field in LOCATOR_SCHEMA if field.name != "hash"])


def _joined(venue: Any, volume: Any, page: Any) -> pa.Array:
    """The hashed form of keys: the three joined by tabs."""
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pa.array(venue, pa.string()), pa.array(volume, pa.string()),
                                       pa.array(page, pa.string()), "\t")


LOCATOR_BATCH_ROWS = 1 << 21  # entries of the locator file a record batch holds at least (whole hash parts)


class LocatorRuns:
    """A build's locator entries (``locator_rows`` chunks), hashed and spread over hash parts on
    disk as the works stream by (``external_sort``); ``tables()`` gives the index file's rows, sorted
    by hash, then row (chunks come in row order, and a part's sort keeps it among equal hashes)."""

    def __init__(self, folder: Path, n_works: int):
        self.runs = HashRuns(folder, "locators", parts_for(n_works), ints={"row": np.int64}, texts=KEY_COLUMNS)

    def add(self, entries: pa.Table) -> None:
        columns = [entries.column(n).combine_chunks() for n in KEY_COLUMNS]
        self.runs.add(term_hashes(_joined(*columns)), {"row": entries.column("row").to_numpy()},
                      dict(zip(KEY_COLUMNS, columns)))

    def tables(self) -> Iterator[pa.Table]:
        """The sorted entries, in tables of whole parts of ``LOCATOR_BATCH_ROWS`` or more (the last
        may hold fewer)."""
        parts = (pa.table([pa.array(hashes), *(texts[n].cast(pa.string()) for n in KEY_COLUMNS), pa.array(ints["row"])],
                          schema=LOCATOR_SCHEMA) for hashes, ints, texts in self.runs.parts_sorted())
        return whole_parts(parts, LOCATOR_BATCH_ROWS)


def page_index(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The (volume, first page) lookup of a locator table: the hashes of volume and first page
    joined by a tab, ascending, and the table position of each (ascending among equal hashes)."""
    import pyarrow.compute as pc

    if not table.num_rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    hashes = term_hashes(pc.binary_join_element_wise(table.column("volume").combine_chunks(),
                                                     table.column("first_page").combine_chunks(), "\t"))
    order = np.lexsort((np.arange(len(hashes), dtype=np.int64), hashes))
    return hashes[order], order.astype(np.int64)


class _SortedChunks:
    """The ascending hash column of the mapped locator file, searched chunk by chunk (no copy of
    it into the heap): the build writes it in record batches of whole hash parts, so the entries
    of one hash are all in one batch (``external_sort``)."""

    def __init__(self, column: pa.ChunkedArray):
        self.chunks: list[tuple[int, np.ndarray]] = []
        start = 0
        for chunk in column.chunks:
            if len(chunk):
                self.chunks.append((start, chunk.to_numpy()))
            start += len(chunk)
        self.firsts = np.array([values[0] for _, values in self.chunks], np.int64)
        self.size = start

    def __len__(self) -> int:
        return self.size

    def spans(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first and past-the-last positions of each hash (equal when it is absent)."""
        lo, hi = np.zeros(len(h), np.int64), np.zeros(len(h), np.int64)
        if not self.chunks:
            return lo, hi
        which = np.maximum(np.searchsorted(self.firsts, h, "right") - 1, 0)
        for k in np.unique(which).tolist():
            start, values = self.chunks[k]
            mask = which == k
            lo[mask] = np.searchsorted(values, h[mask], "left") + start
            hi[mask] = np.searchsorted(values, h[mask], "right") + start
        return lo, hi


class LocatorIndex:
    """(venue key, volume, first page) -> rows of works.arrow, over the mapped index file; and
    (volume, first page) -> its entries, over the mapped ``page_index`` arrays (made here when
    not given: a small table built in memory)."""

    def __init__(self, table: pa.Table, pages: tuple[np.ndarray, np.ndarray] | None = None):
        self.table = table
        self.hashes = _SortedChunks(table.column("hash"))
        self.page_hashes, self.page_at = pages if pages is not None else page_index(table)

    def rows(self, keys: Sequence[LocatorKey]) -> dict[LocatorKey, list[int]]:
        """The rows at each key found, ascending; a hash shared by another key (checked) is no hit."""
        wanted = sorted({k for k in keys if all(k)})
        if not wanted or not len(self.hashes):
            return {}
        h = term_hashes(_joined(*(list(column) for column in zip(*wanted))))
        lo, hi = self.hashes.spans(h)
        spans = [(key, a, b) for key, a, b in zip(wanted, lo.tolist(), hi.tolist()) if b > a]
        if not spans:
            return {}
        at = np.concatenate([np.arange(a, b) for _, a, b in spans])
        stored = take_chunked(self.table.select([*KEY_COLUMNS, "row"]), at).to_pydict()
        found = list(zip(*(stored[n] for n in KEY_COLUMNS), stored["row"]))
        out: dict[LocatorKey, list[int]] = {}
        i = 0
        for key, a, b in spans:
            for venue, volume, page, row in found[i:i + b - a]:
                if (venue, volume, page) == key:
                    out.setdefault(key, []).append(row)
            i += b - a
        return out


    def rows_at_volume_page(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, int]]]:
        """(volume, first page) -> (venue key, row) of every entry there, whatever its venue, in
        the index's order (asked only for strings whose venue keys met nothing): a binary search
        in the page hashes; entries whose hash another pair shares are checked and dropped."""
        import pyarrow.compute as pc

        wanted = sorted({p for p in pairs if all(p)})
        if not wanted or not len(self.page_hashes):
            return {}
        h = term_hashes(pc.binary_join_element_wise(pa.array([v for v, _ in wanted], pa.string()),
                                                    pa.array([p for _, p in wanted], pa.string()), "\t"))
        lo, hi = np.searchsorted(self.page_hashes, h, "left"), np.searchsorted(self.page_hashes, h, "right")
        spans = [np.asarray(self.page_at[a:b]) for a, b in zip(lo.tolist(), hi.tolist()) if b > a]
        if not spans:
            return {}
        at = np.unique(np.concatenate(spans))  # in table order, as a scan of the table finds them
        hits = take_chunked(self.table.select([*KEY_COLUMNS, "row"]), at).to_pydict()
        wanted_set = set(wanted)
        out: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for venue, volume, page, row in zip(*(hits[n] for n in KEY_COLUMNS), hits["row"]):
            if (volume, page) in wanted_set:
                out.setdefault((volume, page), []).append((venue, row))
        return out


def lookup(index: LocatorIndex, works_at: Any, keys: Sequence[LocatorKey]) -> dict[LocatorKey, list[Work]]:
    """(venue key, volume, first page) -> the works there, by work id; ``works_at(rows)`` reads
    the works at rows of the mapped works table."""
    found = index.rows(keys)
    works = works_at(sorted({r for rows in found.values() for r in rows}))
    return {key: sorted((works[r] for r in rows), key=lambda w: w.work_id) for key, rows in found.items()}


def lookup_volume_page(index: LocatorIndex, works_at: Any,
                       pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, Work]]]:
    """(volume, first page) -> (venue key, work) of every work printed there, whatever its venue:
    a string whose venue OCR misread compares the venue keys itself (``locator_match``)."""
    found = index.rows_at_volume_page(pairs)
    works = works_at(sorted({r for hits in found.values() for _, r in hits}))
    return {pair: sorted(((venue, works[r]) for venue, r in hits), key=lambda vw: (vw[0], vw[1].work_id))
            for pair, hits in found.items()}


def pages_current(gen_dir: Path, index_stamp: dict) -> bool:
    """Are the page lookup's files there, made for the index whose stamp is ``index_stamp``?"""
    try:
        made_for = json.loads((gen_dir / PAGES_STAMP).read_text())
    except (OSError, ValueError):
        return False
    return made_for == index_stamp and (gen_dir / PAGES_HASHES).exists() and (gen_dir / PAGES_AT).exists()


def load(gen_dir: Path, map_ipc: Any, pages_on_disk: bool) -> LocatorIndex:
    """The generation's locators, mapped; their page lookup mapped too when on disk and current,
    else made in memory (a generation this user could not add it to)."""
    if not pages_on_disk:
        return LocatorIndex(map_ipc(gen_dir / LOCATORS_FILE))
    pages = tuple(load_array(gen_dir / name) for name in (PAGES_HASHES, PAGES_AT))
    return LocatorIndex(map_ipc(gen_dir / LOCATORS_FILE), (pages[0], pages[1]))
