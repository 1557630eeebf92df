"""The works' rows in row-major order, read by positional reads: what a resolving batch needs of
the works it looks at (their Work fields and comparison forms), without mapping the catalog.

Why: ``works.arrow`` and ``work_forms.arrow`` are column-major; a batch reads some 40,000 rows
at random, i.e. a page of every column buffer per row, and a mapped page counts in the resident
set of every process that read it (with Linux's 64 KB fault-around, one batch maps most of both
files: 5.7 GB per worker at 10M works). Here a row is one JSON array (the values of
``WORK_FIELDS`` then ``FORM_COLUMNS``, as Arrow's ``to_pylist`` gives them) in ``work_rows.bin``,
found through ``work_rows_offsets.npy`` (int64, rows + 1): two ``os.pread`` calls per row, and
the file's pages stay in the OS page cache, shared, counted in no process.

The files are derived from the two Arrow files and carry their own stamp (``work_rows.json``:
the index stamp they were made for plus ``ROWS_FORMAT``), written last; an index without them is
current and the readers then take the rows from the mapped Arrow files (``works_at``).
"""
from __future__ import annotations

import json
import os
from collections import deque
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import orjson
import pyarrow as pa

from citeledger.storage.mapped_files import load_array, map_ipc, take_chunked
from citeledger.works.row_schema import WORK_FIELDS, WORK_TYPES, works_from_columns
from resolvers.model import Work
from resolvers.verification.verify import FORM_COLUMNS

ROWS_FILE = "work_rows.bin"
ROWS_OFFSETS = "work_rows_offsets.npy"
ROWS_STAMP = "work_rows.json"  # {index stamp..., "rows_format": ROWS_FORMAT}, written last
ROWS_FORMAT = 1
COLUMNS = (*WORK_FIELDS, *FORM_COLUMNS)
_LISTS = tuple(i for i, name in enumerate(WORK_FIELDS) if pa.types.is_list(WORK_TYPES[name]))
_FLAGS = tuple(i for i, name in enumerate(WORK_FIELDS) if pa.types.is_boolean(WORK_TYPES[name]))
_SETTERS = tuple(getattr(Work, name).__set__ for name in WORK_FIELDS)  # each field's slot, set without __init__
# A batch's rows are announced to the kernel (``posix_fadvise`` WILLNEED) before they are read:
# rows not in the page cache are then fetched together instead of one read waiting after another.
# 5,000 rows of the 10M catalog's 5.7 GB row file, page cache dropped: 355-422 ms -> 62-78 ms
# (193-202 -> 38-52 ms of CPU); cached: 24 -> 26 ms.
_WILLNEED = getattr(os, "POSIX_FADV_WILLNEED", None) if hasattr(os, "posix_fadvise") else None


def rows_stamp(index_stamp: dict) -> dict:
    return {**index_stamp, "rows_format": ROWS_FORMAT}


def rows_current(gen_dir: Path, index_stamp: dict) -> bool:
    """Are the row files there, made for the index whose stamp is ``index_stamp``?"""
    try:
        made_for = json.loads((gen_dir / ROWS_STAMP).read_text())
    except (OSError, ValueError):
        return False
    return made_for == rows_stamp(index_stamp) and (gen_dir / ROWS_FILE).exists() and (gen_dir / ROWS_OFFSETS).exists()


def records(works: pa.Table, forms: pa.Table, chunk_rows: int = 100_000) -> Iterator[tuple[bytes, np.ndarray]]:
    """The rows of the two row-aligned tables as JSON arrays, a chunk at a time: the chunk's
    bytes and each row's length."""
    if works.num_rows != forms.num_rows or tuple(works.column_names) != WORK_FIELDS:
        raise ValueError("works.arrow and work_forms.arrow are not row-aligned Work columns")
    for start in range(0, works.num_rows, chunk_rows):
        cols = [t.column(name).slice(start, chunk_rows).to_pylist()
                for t, names in ((works, WORK_FIELDS), (forms, FORM_COLUMNS)) for name in names]
        encoded = [orjson.dumps(row) for row in zip(*cols)]
        yield b"".join(encoded), np.fromiter(map(len, encoded), np.int64, len(encoded))


def works_by_field(columns: Sequence[Sequence], count: int) -> list[Work]:
    """``count`` Works from their values by field (``WORK_FIELDS`` order; further columns are
    ignored), converted as ``row_schema.works_from_columns`` converts them (lists to tuples, null
    flags False). Each field is set in every Work by its slot in one C loop: the dataclass's own
    ``__init__`` (13 frozen setattrs a Work) was a third of a lookup. (Work has no
    ``__post_init__``: the objects are the ones ``Work(*values)`` makes, equal and hashed alike.)"""
    works = [object.__new__(Work) for _ in range(count)]
    for i, (setter, column) in enumerate(zip(_SETTERS, columns)):
        if i in _LISTS:
            column = [tuple(v) if v else () for v in column]
        elif i in _FLAGS:
            column = [bool(v) for v in column]
        deque(map(setter, works, column), maxlen=0)
    return works


class RowFile:
    """Positional reads of the row files: thread-safe (``pread`` keeps no file position). The
    offsets are memory-mapped (8 bytes a row, read for a whole batch by one numpy take; their
    pages are handed back with the catalog's other maps, ``mapped_files.release_if_over``)."""

    def __init__(self, gen_dir: Path):
        self.fd = os.open(gen_dir / ROWS_FILE, os.O_RDONLY)
        self.offsets = load_array(gen_dir / ROWS_OFFSETS)
        self.fds: tuple[int, ...] = (self.fd,)
        if hasattr(os, "posix_fadvise"):  # random reads: no read-ahead filling the cache
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_RANDOM)

    def values(self, rows: Sequence[int]) -> list[list]:
        """Each row's values (``COLUMNS`` order), in the order of ``rows`` (ascending reads best)."""
        if not len(rows):
            return []
        at = np.asarray(rows, dtype=np.int64)
        starts, ends = self.offsets[at].tolist(), self.offsets[at + 1].tolist()
        pread, fd = os.pread, self.fd
        if _WILLNEED is not None:  # every row's read asked for before the first waits (see ``_WILLNEED``)
            advise = os.posix_fadvise
            for a, b in zip(starts, ends):
                advise(fd, a, b - a, _WILLNEED)
        return orjson.loads(b"[" + b",".join([pread(fd, b - a, a) for a, b in zip(starts, ends)]) + b"]")

    def works(self, rows: Sequence[int]) -> dict[int, Work]:
        """The Works at ``rows``."""
        values = self.values(rows)
        return dict(zip(rows, works_by_field(list(zip(*values)), len(values)))) if values else {}

    def works_and_forms(self, rows: Sequence[int]) -> tuple[dict[int, Work], dict[str, list]]:
        """The Works at ``rows`` and their stored forms by column (``FORM_COLUMNS``, rows' order)."""
        values = self.values(rows)
        if not values:
            return {}, {name: [] for name in FORM_COLUMNS}
        columns = list(zip(*values))
        works = dict(zip(rows, works_by_field(columns, len(values))))
        return works, {name: list(columns[i]) for i, name in enumerate(FORM_COLUMNS, len(WORK_FIELDS))}

    def close(self) -> None:
        fds, self.fds = getattr(self, "fds", ()), ()
        for fd in fds:
            os.close(fd)

    def __del__(self) -> None:
        self.close()


def works_at(table: pa.Table, rows: Sequence[int]) -> dict[int, Work]:
    """The works at these rows of a (mapped) works table, as Work records."""
    if not rows:
        return {}
    taken = take_chunked(table, rows)
    cols = {name: taken.column(name).to_pylist() for name in taken.column_names}  # columnar: faster than rows
    none = [None] * len(rows)
    return dict(zip(rows, works_from_columns([cols.get(name, none) for name in WORK_FIELDS])))


class WorkReader:
    """The works (and their stored forms) at rows of a catalog generation: positional reads of
    the row files when they are current, else takes from the mapped Arrow files (a generation
    this user could not add the row files to)."""

    def __init__(self, gen_dir: Path, index_stamp: dict):
        self.gen_dir = gen_dir
        self.row_file = RowFile(gen_dir) if rows_current(gen_dir, index_stamp) else None
        self._tables: tuple[pa.Table, pa.Table] | None = None

    def tables(self) -> tuple[pa.Table, pa.Table]:
        """``works.arrow`` and ``work_forms.arrow``, mapped on first use."""
        if self._tables is None:
            self._tables = (map_ipc(self.gen_dir / "works.arrow"), map_ipc(self.gen_dir / "work_forms.arrow"))
        return self._tables

    def works(self, rows: Sequence[int]) -> dict[int, Work]:
        if self.row_file is not None:
            return self.row_file.works(rows)
        return works_at(self.tables()[0], rows)

    def works_and_forms(self, rows: Sequence[int]) -> tuple[dict[int, Work], dict[str, list]]:
        """The Works at ``rows`` and their forms by column (``FORM_COLUMNS``, in the rows' order)."""
        if self.row_file is not None:
            return self.row_file.works_and_forms(rows)
        works = works_at(self.tables()[0], rows)
        taken = take_chunked(self.tables()[1], rows) if rows else None
        return works, {name: taken.column(name).to_pylist() if taken is not None else [] for name in FORM_COLUMNS}
