"""The index build's external sort: rows keyed by a 64-bit hash, spread over part files on disk
and read back a part at a time in hash order.

Why: the catalog's index files (postings, identifier lookup, venue locators and their page
lookup) are sorted by a stable 64-bit hash (``candidates.term_hashes``). Sorting them whole in
memory made a build's memory grow with the catalog (14 GB at 30M works). Here each chunk of rows
is appended to ``parts`` files by the top bits of its hashes (in signed order, the order of the
index files); a part is then read back and sorted on its own. So a build holds one chunk and one
part, and ``parts_for`` makes a part's share of rows about the same at any catalog size.

The sort of a part is stable: rows of one hash keep the order they were added in (a chunk's
rows ascend, and chunks are added in row order, so ties come out by row). Every row of one hash
is in one part, so a reader may cut the sorted rows at part boundaries without splitting a hash.
The files are plain bytes (numbers as ``ndarray.tofile``; text as its UTF-8 bytes and an int64
length per row), in a scratch folder the caller owns and removes.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from citeledger.storage.atomic import atomic_stream

PART_ROWS = 4_000_000  # rows a part is meant to hold at most: about 100 MB of hash, row and order
MIN_PARTS, MAX_PARTS = 16, 1 << 14


def parts_for(expected_rows: int) -> int:
    """The number of parts (a power of two from 16 up) that keeps a part near ``PART_ROWS``."""
    parts = MIN_PARTS
    while parts < MAX_PARTS and expected_rows > parts * PART_ROWS:
        parts *= 2
    return parts


def part_bounds(parts: int) -> np.ndarray:
    """The least hash of each part but the first (``HashRuns``' parts: by top bits, in signed
    order): ``np.searchsorted`` of them in sorted hashes cuts those hashes into the parts."""
    shift = 64 - (parts.bit_length() - 1)
    return np.array([(p - parts // 2) << shift for p in range(1, parts)], np.int64)


def large_text(values: pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    """One large_string array (offsets int64) of the values; nulls become empty text."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = values.cast(pa.large_string())
    return values.fill_null("") if values.null_count else values


def _text_buffers(values: pa.LargeStringArray) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (relative to the array's own slice) and the UTF-8 bytes of a large_string array."""
    n = len(values)
    offsets = np.frombuffer(values.buffers()[1], np.int64)[values.offset:values.offset + n + 1]
    data = values.buffers()[2]
    data_np = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return offsets, data_np


class HashRuns:
    """Rows (a hash, integer columns, text columns) added chunk by chunk; ``parts_sorted()`` gives
    them back a part at a time, sorted by hash (stable). ``ints``: name -> dtype of each integer column;
    ``texts``: the text columns' names."""

    def __init__(self, folder: Path, name: str, parts: int, ints: Mapping[str, type | np.dtype] | None = None,
                 texts: Sequence[str] = ()):
        if parts < 2 or parts & (parts - 1):
            raise ValueError(f"parts must be a power of two from 2 up, not {parts}")
        self.folder, self.name, self.parts = folder, name, parts
        self.ints = {k: np.dtype(v) for k, v in (ints or {}).items()}
        self.texts = tuple(texts)
        self._shift = 64 - (parts.bit_length() - 1)
        self.counts = np.zeros(parts, np.int64)
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, part: int, column: str) -> Path:
        return self.folder / f"{self.name}-{part:05d}.{column}"

    @property
    def rows(self) -> int:
        return int(self.counts.sum())

    def add(self, hashes: np.ndarray, ints: Mapping[str, np.ndarray] | None = None,
            texts: Mapping[str, pa.Array | pa.ChunkedArray] | None = None) -> None:
        """Append rows: each to its part's files, in the order given."""
        hashes = np.asarray(hashes, np.int64)
        if not len(hashes):
            return
        part = (hashes >> self._shift) + self.parts // 2  # signed order: the negative hashes first
        order = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[order], np.arange(self.parts + 1))
        columns = {"hash": hashes[order]}
        for name, dtype in self.ints.items():
            columns[name] = np.asarray((ints or {})[name]).astype(dtype, copy=False)[order]
        text_columns = {name: _text_buffers(large_text((texts or {})[name]).take(pa.array(order)))
                        for name in self.texts}
        for p in np.flatnonzero(np.diff(bounds)).tolist():
            a, b = int(bounds[p]), int(bounds[p + 1])
            for name, values in columns.items():
                append_raw(self._path(p, name), values[a:b])
            for name, (offsets, data) in text_columns.items():
                append_raw(self._path(p, name + ".len"), np.diff(offsets[a:b + 1]))
                append_raw(self._path(p, name + ".txt"), data[offsets[a]:offsets[b]])
        self.counts += np.diff(bounds)

    def parts_sorted(self) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray], dict[str, pa.LargeStringArray]]]:
        """Each non-empty part in hash order: (hashes, integer columns, text columns), sorted by
        hash, stably; a part's files are removed once read."""
        for p in np.flatnonzero(self.counts).tolist():
            hashes = np.fromfile(self._path(p, "hash"), np.int64)
            order = np.argsort(hashes, kind="stable")
            ints = {name: np.fromfile(self._path(p, name), dtype)[order] for name, dtype in self.ints.items()}
            texts = {}
            for name in self.texts:
                lengths = np.fromfile(self._path(p, name + ".len"), np.int64)
                data = np.fromfile(self._path(p, name + ".txt"), np.uint8)
                offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)])
                text = pa.LargeStringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(data))
                texts[name] = text.take(pa.array(order))
            for column in ("hash", *self.ints, *(t + s for t in self.texts for s in (".len", ".txt"))):
                self._path(p, column).unlink(missing_ok=True)
            yield hashes[order], ints, texts


def write_sorted(runs: HashRuns, hashes_path: Path, column: str, column_path: Path) -> None:
    """The runs' hashes and one of their integer columns, in hash order, streamed to two ``.npy``
    files (a lookup: sorted hashes, and what each names)."""
    with npy_stream(hashes_path, np.int64, runs.rows) as hashes, \
            npy_stream(column_path, runs.ints[column], runs.rows) as values:
        for part_hashes, ints, _ in runs.parts_sorted():
            hashes.write(part_hashes)
            values.write(ints[column])


def whole_parts(tables: Iterable[pa.Table], min_rows: int) -> Iterator[pa.Table]:
    """The parts' tables (each one part, in order) joined into tables of ``min_rows`` rows or more,
    the last one fewer: a record batch of a lookup file then never cuts a part, so it holds every
    row of its hashes and a reader searches one batch for a hash."""
    pending: list[pa.Table] = []
    for table in tables:
        pending.append(table)
        if sum(t.num_rows for t in pending) >= min_rows:
            yield pa.concat_tables(pending).combine_chunks()
            pending = []
    if pending:
        yield pa.concat_tables(pending).combine_chunks()


@contextmanager
def npy_stream(path: Path, dtype: type | np.dtype, length: int) -> Iterator["NpyStream"]:
    """A 1-d ``.npy`` file of ``length`` values written piece by piece through ``atomic_stream``:
    the same bytes as ``np.save`` of the whole array, without the array in memory (nor a written
    map's dirty pages in the resident set)."""
    with atomic_stream(path) as fh:
        stream = NpyStream(fh, np.dtype(dtype), length)
        yield stream
        if stream.written != length:
            raise ValueError(f"{path.name}: {stream.written} values written, {length} announced")


class NpyStream:
    """The open ``.npy`` file of ``npy_stream``: its header written, values appended in order."""

    def __init__(self, fh, dtype: np.dtype, length: int):
        self.fh, self.dtype, self.length, self.written = fh, dtype, length, 0
        header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (length,)}
        np.lib.format.write_array_header_1_0(fh, header)

    def write(self, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, self.dtype)
        if self.written + len(values) > self.length:
            raise ValueError(f"more than the {self.length} values announced")
        self.fh.write(values.data)
        self.written += len(values)


def append_raw(path: Path, values: np.ndarray) -> None:
    """Scratch, not data: values appended to a raw array file of a run folder (read back by
    ``np.fromfile`` or ``raw_slices``; the folder goes when the build ends)."""
    with open(path, "ab") as fh:
        np.ascontiguousarray(values).tofile(fh)


def raw_to_npy(raw: Path, path: Path, dtype: type | np.dtype, length: int) -> None:
    """A raw array file (``append_raw``) as a ``.npy`` file of its ``length`` values, copied a
    slice at a time (``npy_stream``: the count is checked)."""
    with npy_stream(path, dtype, length) as out:
        for values in raw_slices(raw, dtype):
            out.write(values)


def raw_slices(path: Path, dtype: type | np.dtype, step: int = 1 << 22) -> Iterator[np.ndarray]:
    """A raw array file (``ndarray.tofile``) read back ``step`` values at a time (none when
    nothing was ever appended to it: no file)."""
    dtype = np.dtype(dtype)
    if not path.exists():
        return
    with open(path, "rb") as fh:
        while True:
            values = np.fromfile(fh, dtype, count=step)
            if not len(values):
                return
            yield values
