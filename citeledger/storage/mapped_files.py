"""The catalog's memory-mapped files, with the pages a process has touched handed back to the OS
page cache once they pass a budget.

Why: a page of a mapped file that a process has read counts in that process's resident set until
the mapping goes, and Linux maps up to 64 KB around every page fault. Workers that read rows at
random (the index arrays, the identifier and locator files) so came to hold most of a 10M-work
catalog each: summed over the process tree, 18 GB at 10M works. ``release_if_over`` drops this
process's mappings of those pages (``madvise(MADV_DONTNEED)``: the file's pages stay in the page
cache, shared by every process, and come back on the next read as minor faults, never from disk
unless the cache lost them) when the file-backed resident set has grown by more than
``PAGE_BUDGET`` since the last release. The maps are Python ``mmap`` objects (Arrow's own
``memory_map`` cannot be advised) that the arrays and Arrow buffers read from without a copy.
"""
from __future__ import annotations

import mmap
import os
import threading
import weakref
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

PAGE_BUDGET = 256 << 20  # bytes of mapped catalog a process may hold before its maps are released
_MAPS: "weakref.WeakSet[mmap.mmap]" = weakref.WeakSet()
_LOCK = threading.Lock()
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_baseline: list[int | None] = [None]  # file-backed resident bytes after the last release


def map_file(path: Path) -> mmap.mmap:
    """A read-only shared map of ``path``, released with the others by ``release_if_over``."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        mapped = mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_READ) if size else mmap.mmap(-1, 1)
    _register(mapped)
    return mapped


def _register(mapped: mmap.mmap) -> None:
    with _LOCK:
        _MAPS.add(mapped)
        if _baseline[0] is None:
            _baseline[0] = file_resident_bytes()


def map_ipc(path: Path) -> pa.Table:
    """An Arrow IPC file as a table whose buffers are the file's pages (zero copy)."""
    return pa.ipc.open_file(pa.BufferReader(pa.py_buffer(map_file(path)))).read_all()


def take_chunked(values: pa.ChunkedArray | pa.Table, at: np.ndarray | Sequence[int]) -> pa.Array | pa.Table:
    """The rows at positions ``at`` (in that order) of a column or table of several record
    batches, taken batch by batch: Arrow's ``take`` of a chunked column first copies the column
    whole into one array (a mapped file's every page, at each call)."""
    at = np.asarray(at, np.int64)
    chunks = values.column(0).chunks if isinstance(values, pa.Table) else values.chunks
    if len(chunks) <= 1:
        return values.take(pa.array(at))
    starts = np.cumsum([0] + [len(c) for c in chunks])
    order = np.argsort(at, kind="stable")
    sorted_at = at[order]
    cuts = np.searchsorted(sorted_at, starts)  # chunk k's asked positions: sorted_at[cuts[k]:cuts[k + 1]]
    pieces = [values.slice(int(starts[k]), int(starts[k + 1] - starts[k]))
              .take(pa.array(sorted_at[cuts[k]:cuts[k + 1]] - starts[k]))
              for k in range(len(chunks)) if cuts[k + 1] > cuts[k]]
    if isinstance(values, pa.Table):
        joined = pa.concat_tables(pieces).combine_chunks() if pieces else values.slice(0, 0)
    else:
        joined = pa.concat_arrays([p.combine_chunks() for p in pieces]) if pieces else values.chunk(0).slice(0, 0)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return joined.take(pa.array(inverse))


def load_array(path: Path, plain: bool = True) -> np.ndarray:
    """A ``.npy`` file, memory-mapped read-only; ``plain``: as an ndarray view of the map (slicing
    a ``np.memmap`` costs more than the binary searches run in the slices)."""
    array = np.load(path, mmap_mode="r")
    mapped = getattr(array, "_mmap", None)
    if isinstance(mapped, mmap.mmap):
        _register(mapped)
    return np.asarray(array) if plain else array


def file_resident_bytes() -> int:
    """This process's resident pages backed by files (RssFile + RssShmem, /proc/self/statm's
    third field); 0 where there is no /proc."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[2]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def release_if_over(budget: int | None = None) -> bool:
    """Hand the pages of every live map back to the page cache when the file-backed resident set
    grew by more than ``budget`` (default ``PAGE_BUDGET``) since the last release; True when it
    did. Safe while other threads read: a released page is read again from the cache on its next
    touch."""
    budget = PAGE_BUDGET if budget is None else budget
    now = file_resident_bytes()
    with _LOCK:
        base = _baseline[0] if _baseline[0] is not None else now
        if now - base <= budget:
            return False
    release()
    return True


def release() -> None:
    """Hand the pages of every live map back to the page cache (see ``release_if_over``)."""
    with _LOCK:
        for mapped in list(_MAPS):
            mapped.madvise(mmap.MADV_DONTNEED)
        _baseline[0] = file_resident_bytes()
