"""The extract step of a catalog build, streamed to disk: every works file becomes Parquet part
files (row groups of ``PART_ROWS``) in the build's staging folder, never one table in memory.

Why: at 10M works the extracted rows held as one Arrow table (plus DuckDB's copy for the merge)
no longer fit a laptop; written as parts, the merge reads them from disk with a memory limit.
Why in tasks: reading a source is per-row Python (JSON, DOI and text normalisation), so a big
plain JSON-lines file is cut at line ends into byte ranges of ``RANGE_BYTES`` and the ranges are
read by ``process_cache`` processes at once. Every task numbers its rows from 1; the rows' final
``ingested_seq`` is the task's offset (the rows of the tasks before it) plus that number, so
the result is the same as one reader going through the files in order, whatever the workers.
"""
from __future__ import annotations

import functools
import hashlib
import json
import operator
import os
import shutil
import tempfile
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from citeledger.app_errors import CatalogSourceError
from citeledger.processes import die_with_parent
from citeledger.sources import source_files, source_rows, works_columnar
from citeledger.storage.atomic import atomic_write_bytes, file_sha256, publish_dir, staged
from citeledger.works.row_schema import SOURCE_FIELDS, WORKS_SCHEMA
from resolvers.notices import notice_sources

PART_ROWS = 50_000  # rows per row group of a part file (and per Arrow conversion)
RANGE_BYTES = 64 << 20  # a plain JSON-lines works file is read in byte ranges of about this size
PARALLEL_BYTES = 128 << 20  # below this many bytes of works files, no worker processes are started
WORKERS = min(os.cpu_count() or 1, 4)
_RANGED = {
    source_rows.SourceFormat.WORKS_JSONL,
    source_rows.SourceFormat.ARXIV_SNAPSHOT,
    source_rows.SourceFormat.OPENALEX,
    source_rows.SourceFormat.CROSSREF,
}


@dataclass(frozen=True)
class Task:
    """One piece of a works file: all of it, or the byte range [start, end) cut at line ends."""

    number: int
    path: Path
    fmt: source_rows.SourceFormat
    start: int = 0
    end: int | None = None


@dataclass
class TaskResult:
    """What a task read: rows written to ``part`` (numbered 1..rows), the lines it went through
    (to number a range's reject lines within the file), rejects and skips."""

    part: Path | None
    rows: int
    lines: int
    rejects: int
    examples: list[tuple[int | None, str]]  # (line in the task, "reason") of the first five rejects
    skipped: dict[str, int] = field(default_factory=dict)


def plan(path: Path, fmt: source_rows.SourceFormat, first: int) -> list[Task]:
    """The tasks of one works file: byte ranges of a big plain JSON-lines file, else the file."""
    size, range_bytes = path.stat().st_size, RANGE_BYTES
    if fmt not in _RANGED or size <= range_bytes or _is_gzip(path) or \
            (fmt is source_rows.SourceFormat.CROSSREF and source_files.is_items_file(path)):
        return [Task(first, path, fmt)]
    bounds = [0]
    with open(path, "rb") as fh:
        while bounds[-1] + range_bytes < size:
            fh.seek(bounds[-1] + range_bytes)
            fh.readline()  # on to the next line end: a line (and a \r\n) is never cut
            if fh.tell() >= size:
                break
            bounds.append(fh.tell())
    bounds.append(size)
    return [Task(first + i, path, fmt, a, b) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _items(task: Task) -> Iterator[Any]:
    """The rows (works, rejects, skips) of a task, in file order; a range is read like the
    whole file would be (UTF-8, bad bytes replaced, lines split as ``open_text`` splits them)."""
    if task.end is None:
        yield from source_files.iter_work_rows(task.path, task.fmt)
        return
    with open(task.path, "rb") as fh:
        fh.seek(task.start)
        data = fh.read(task.end - task.start)
    lines: list[int] = []
    yield from source_files.rows_of_bytes(data, str(task.path), task.fmt, 0, lines)
    yield _Lines(lines[0])


@dataclass(frozen=True)
class _Lines:
    count: int


def run(task: Task, out_dir: str) -> TaskResult:
    """Read one task into ``<out_dir>/part-NNNNNN.parquet`` (none when it has no rows)."""
    result = TaskResult(None, 0, 0, 0, [])
    part = Path(out_dir) / f"part-{task.number:06d}.parquet"
    chunk: list[tuple] = []
    with staged(part) as tmp:
        writer = pq.ParquetWriter(str(tmp), WORKS_SCHEMA, compression="snappy", use_dictionary=False)

        def flush() -> None:
            if chunk:
                writer.write_table(_table(chunk, task.fmt, result.rows))
                result.rows += len(chunk)
                chunk.clear()

        for item in _columnar_items(task) if columnar(task) else _items(task):
            if isinstance(item, source_rows.SourceRow):
                chunk.append(_VALUES(item))
                if len(chunk) >= PART_ROWS:
                    flush()
            elif isinstance(item, pa.Table):
                flush()
                writer.write_table(_numbered(item, task.fmt, result.rows), row_group_size=PART_ROWS)
                result.rows += item.num_rows
            else:
                _count(result, item)
        flush()
        writer.close()
    result.part = part if result.rows else None
    if not result.rows:
        part.unlink()
    return result


COLUMNAR = os.environ.get("CITELEDGER_COLUMNAR_EXTRACT", "1") != "0"  # "0": every row through the per-row reader


def columnar(task: Task) -> bool:
    """Is the task read by the columnar reader (a plain, not gzipped, works JSONL file)?"""
    return COLUMNAR and task.fmt is source_rows.SourceFormat.WORKS_JSONL and not _is_gzip(task.path)


def _columnar_items(task: Task) -> Iterator[Any]:
    """The task's rows as tables of source rows (``works_columnar``), with the rejects and, for
    a block it cannot vouch for, the per-row reader's works and rejects; lines numbered as
    ``_items`` numbers them."""
    with open(task.path, "rb") as fh:
        fh.seek(task.start)
        data = fh.read(-1 if task.end is None else task.end - task.start)
    name, line0 = str(task.path), 0
    for _, block in works_columnar.blocks(data):
        table = works_columnar.read_block(block) if works_columnar.vouched(block) else None
        if table is None:
            counts: list[int] = []
            yield from works_columnar.row_items(block, name, line0, counts)
            line0 += counts[0]
            continue
        rows, rejects = works_columnar.convert(table)
        for i in rejects.tolist():
            yield source_rows.CatalogReject(name, line0 + i + 1, "doi/arxiv_id/title", "no identifier and no title")
        if rows.num_rows:
            yield rows
        line0 += works_columnar.line_count(block)
    if task.end is not None:  # (a whole file's lines are not counted: no task follows it)
        yield _Lines(line0)


def _numbered(rows: pa.Table, fmt: source_rows.SourceFormat, before: int) -> pa.Table:
    """Source rows (``SOURCE_FIELDS`` columns) as a WORKS_SCHEMA table numbered on from ``before`` + 1."""
    n = rows.num_rows
    rows = rows.append_column("sources", pa.array([[fmt.value]] * n, pa.list_(pa.string())))
    rows = rows.append_column("precedence", pa.array(np.full(n, source_rows.SOURCE_PRECEDENCE[fmt], np.int32)))
    rows = rows.append_column("ingested_seq", pa.array(np.arange(before + 1, before + n + 1, dtype=np.int64)))
    return rows.select(WORKS_SCHEMA.names).cast(WORKS_SCHEMA)


_VALUES = operator.attrgetter(*SOURCE_FIELDS)  # a source row's values, in SOURCE_FIELDS order


def _table(rows: list[tuple], fmt: source_rows.SourceFormat, before: int) -> pa.Table:
    """Rows (``_VALUES`` tuples) as a WORKS_SCHEMA table, column by column, numbered on from
    ``before`` + 1 (cheaper than one dict per row)."""
    n = len(rows)
    cols: dict[str, Any] = dict(zip(SOURCE_FIELDS, zip(*rows)))
    cols.update(sources=[[fmt.value]] * n, precedence=[source_rows.SOURCE_PRECEDENCE[fmt]] * n,
                ingested_seq=range(before + 1, before + n + 1))
    return pa.Table.from_arrays([pa.array(cols[f.name], f.type) for f in WORKS_SCHEMA], schema=WORKS_SCHEMA)


def _count(result: TaskResult, item: Any) -> None:
    if isinstance(item, source_rows.CatalogReject):
        result.rejects += 1
        if len(result.examples) < 5:
            result.examples.append((item.line, f"{item.field}: {item.reason}" if item.field else item.reason))
    elif isinstance(item, source_rows.CatalogSkip):
        result.skipped[item.reason] = result.skipped.get(item.reason, 0) + 1
    elif isinstance(item, _Lines):
        result.lines = item.count


class _Inline(Executor):
    """Tasks run in this process, one at a time, when they are too few to pay for workers."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def executor(tasks: Sequence[Task], workers: int = WORKERS) -> Executor:
    """Worker processes (spawned: the parent may hold threads and DuckDB) for big inputs."""
    size = sum((t.end if t.end is not None else t.path.stat().st_size) - t.start for t in tasks)
    if workers <= 1 or len(tasks) <= 1 or size < PARALLEL_BYTES:
        return _Inline()
    return ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=die_with_parent,
                               initargs=(os.getpid(),))


@dataclass
class FileWorks:
    """The works of one source file, read: its report and its tasks' results in order."""

    report: dict[str, Any]
    results: list[TaskResult]


def file_report(path: Path, fmt: source_rows.SourceFormat, results: list[TaskResult], sha256: str) -> dict[str, Any]:
    """A works file's build report: rows, rejects (the first five with their file line), skips."""
    report: dict[str, Any] = {"file": str(path), "sha256": sha256, "format": fmt.value}
    examples: list[str] = []
    lines_before = 0
    for r in results:
        for line, reason in r.examples:
            if len(examples) < 5:
                examples.append(f"{path}:{None if line is None else line + lines_before}: {reason}")
        lines_before += r.lines
    skipped: dict[str, int] = {}
    for r in results:
        for reason, n in r.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + n
    if skipped:
        report["skipped"] = skipped  # records that are not works, by reason (DBLP person pages)
    report.update(rows=sum(r.rows for r in results), rejects=sum(r.rejects for r in results),
                  reject_examples=examples)
    return report


@dataclass
class Extracted:
    """What the source files hold: new work rows as Parquet parts (``WORKS_SCHEMA``, each with
    the offset to add to its ``ingested_seq``), notice events, a report per file."""

    parts: list[tuple[Path, int]]
    notice_events: list[dict[str, Any]]
    files: list[dict[str, Any]]
    ingested_seq: int  # the high-water mark after these rows
    scratch: Any = None  # the temporary folder of the parts when the caller gave none (kept alive)
    new_entries: list[Path] = field(default_factory=list)  # folders of parts read now (``keep_cache``)

    @property
    def works(self) -> pa.Table:
        """The rows as one table (small inputs and tests: the build itself reads the parts)."""
        tables = [pq.read_table(p).append_column("_off", pa.array([off] * pq.ParquetFile(p).metadata.num_rows,
                                                                  pa.int64())) for p, off in self.parts]
        if not tables:
            return WORKS_SCHEMA.empty_table()
        t = pa.concat_tables(tables)
        seq = pa.compute.add(t.column("ingested_seq"), t.column("_off"))
        return t.set_column(t.schema.get_field_index("ingested_seq"), "ingested_seq", seq).drop(["_off"])


EXTRACT_VERSION = 1  # part files of another version are not reused (a reader changed what it gives)
# The code that decides what a works file's rows become: the readers and everything they call
# (``resolvers`` normalises DOIs, ids, names and text). A cache entry made by other code of these
# modules is not reused, so a changed reader never goes on serving the rows its old self made.
_READER_CODE = ("citeledger/sources/source_files.py", "citeledger/catalog/extract_parts.py",
                "citeledger/works/row_schema.py", "citeledger/sources/*.py", "resolvers/**/*.py")


@functools.lru_cache(maxsize=1)
def reader_fingerprint() -> str:
    """sha256 of the reader code's source files (their names and bytes), 12 hex digits."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted({p for pattern in _READER_CODE for p in root.glob(pattern)}):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def cache_key(sha256: str, fmt: str) -> str:
    """The extract cache's entry name for a works file: its digest, format and the reader code."""
    return f"{sha256}-{fmt}-v{EXTRACT_VERSION}-{reader_fingerprint()}"


def extract(files: Sequence[Path], fmt: source_rows.SourceFormat | None, seq: int,
            file_done: Callable[[Path], None] | None = None, staging: Path | None = None,
            workers: int = WORKERS, cache: Path | None = None) -> Extracted:
    """Read every source file: works into part files numbered on from ``seq``, notice events, a
    report per file (``file_done(path)`` after each, in order: the CLI's progress). A works file
    whose digest ``cache`` holds is not read again: its parts there are used as they are."""
    scratch = None
    if staging is None:
        scratch = tempfile.TemporaryDirectory(prefix="citeledger-extract-")
        out = Path(scratch.name)
    else:
        out = Path(tempfile.mkdtemp(dir=staging, prefix="extract-"))
    plans: list[tuple[Path, source_rows.SourceFormat, str, list[Task] | list[TaskResult] | None]] = []
    for path in map(Path, files):
        if not path.exists():
            raise CatalogSourceError(f"{path}: no such file")
        this_fmt = source_files.check_format(path, fmt)
        if this_fmt in source_rows.NOTICE_FORMATS:
            plans.append((path, this_fmt, "", None))
            continue
        key = cache_key(file_sha256(path), this_fmt.value)
        cached = _cached(cache / key) if cache is not None else None
        (out / key).mkdir(exist_ok=True)
        plans.append((path, this_fmt, key, cached if cached is not None else plan(path, this_fmt, len(plans) << 16)))
    result = Extracted([], [], [], seq, scratch)
    with executor([t for *_, tasks in plans for t in tasks or () if isinstance(t, Task)], workers) as pool:
        futures = [[pool.submit(run, t, str(out / key)) if isinstance(t, Task) else t for t in tasks or ()]
                   for _, _, key, tasks in plans]
        for (path, this_fmt, key, tasks), done in zip(plans, futures):
            if tasks is None:
                result.files.append(_notice_file(path, this_fmt, result.notice_events))
            else:
                results = [f.result() if isinstance(f, Future) else f for f in done]
                if tasks and isinstance(tasks[0], Task):
                    _write_meta(out / key, results)
                    result.new_entries.append(out / key)
                for r in results:
                    if r.part is not None:
                        result.parts.append((r.part, result.ingested_seq))
                    result.ingested_seq += r.rows
                result.files.append(file_report(path, this_fmt, results, key.split("-", 1)[0]))
            if file_done is not None:
                file_done(path)
    return result


_META = "results.json"


def _write_meta(entry: Path, results: list[TaskResult]) -> None:
    rows = [{"part": r.part.name if r.part else None, "rows": r.rows, "lines": r.lines, "rejects": r.rejects,
             "examples": r.examples, "skipped": r.skipped} for r in results]
    atomic_write_bytes(entry / _META, json.dumps(rows).encode())


def _cached(entry: Path) -> list[TaskResult] | None:
    """The task results a cache entry holds (its parts in it), or None."""
    if not (entry / _META).exists():
        return None
    rows = json.loads((entry / _META).read_text())
    if not all((entry / r["part"]).exists() for r in rows if r["part"]):
        return None
    return [TaskResult(entry / r["part"] if r["part"] else None, r["rows"], r["lines"], r["rejects"],
                       [(line, reason) for line, reason in r["examples"]], r["skipped"]) for r in rows]


def keep_cache(cache: Path, extracted: Extracted, builds: list[list[dict[str, Any]]]) -> None:
    """After a build is live: keep the parts of the works files it read (in ``cache``, keyed by
    digest and format) and drop the entries of files no build of the catalog names."""
    cache.mkdir(exist_ok=True)
    for entry in extracted.new_entries:
        if not (cache / entry.name).exists():
            publish_dir(entry, cache / entry.name)
    named = {cache_key(f["sha256"], f["format"]) for files in builds for f in files}
    for old in cache.iterdir():
        if old.name not in named:
            (old / _META).unlink(missing_ok=True)  # first: a half-removed entry is never used
            shutil.rmtree(old, ignore_errors=True)


def _notice_file(path: Path, fmt: source_rows.SourceFormat, events: list[dict[str, Any]]) -> dict[str, Any]:
    """Read a notice source (Retraction Watch CSV) into ``events``; returns its file report."""
    reader = notice_sources.read_retraction_watch_csv if fmt is source_rows.SourceFormat.RETRACTION_WATCH_CSV \
        else notice_sources.read_doi_nature_csv
    new_events, all_rejects = reader(path)
    rejects = [r for r in all_rejects if not r.kept]
    events.extend(e.to_dict() for e in new_events)
    return {"file": str(path), "sha256": file_sha256(path), "format": fmt.value, "rows": len(new_events),
            "rejects": len(rejects), "reject_examples": [f"{path}:{r.line}: {r.reason}" for r in rejects[:5]]}
