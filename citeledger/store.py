"""The one module that owns DuckDB and Parquet: the catalog on disk, the ledger on disk, the views.

Atomicity is by rename. A catalog build writes a new generation folder and then swaps the
``CURRENT`` pointer (a rename), so a killed build leaves the previous catalog intact. A ledger
batch is staged in ``<ledger>/.staging`` and renamed into place; its observations file is written
last and is the batch's completion mark, so a re-run of the same run id skips exactly the
batches that finished.
"""
from __future__ import annotations

import errno
import hashlib
from contextlib import contextmanager
import json
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import duckdb
import pyarrow as pa

from resolvers.errors import CatalogSourceError, ConfigError, DiskFull, LedgerPathError
from resolvers.model import Work

from . import sources as src

# --- schemas -------------------------------------------------------------------------------

WORKS_SCHEMA = pa.schema([
    ("work_id", pa.string()), ("doi", pa.string()), ("arxiv_id", pa.string()), ("title", pa.string()),
    ("authors", pa.list_(pa.string())), ("year", pa.int32()), ("venue", pa.string()),
    ("volume", pa.string()), ("first_page", pa.string()), ("pmid", pa.string()), ("type", pa.string()),
    ("alt_dois", pa.list_(pa.string())), ("withdrawn", pa.bool_()), ("relations", pa.string()),
    ("sources", pa.list_(pa.string())), ("precedence", pa.int32()), ("ingested_seq", pa.int64()),
])

OBSERVATION_SCHEMA = pa.schema([
    ("observation_id", pa.string()), ("observation_digest", pa.string()), ("run_id", pa.string()),
    ("observed_at", pa.timestamp("us", tz="UTC")), ("citing_paper", pa.string()),
    ("reference_index", pa.int64()), ("raw", pa.string()), ("source", pa.string()),
    ("status", pa.string()), ("reason", pa.string()), ("resolver_source", pa.string()),
    ("work_id", pa.string()), ("doi", pa.string()), ("arxiv_id", pa.string()),
    ("extracted_dois", pa.list_(pa.string())), ("extracted_arxiv_ids", pa.list_(pa.string())),
    ("score", pa.float64()), ("evidence", pa.string()),
])

REJECT_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("file", pa.string()), ("line", pa.int64()), ("field", pa.string()),
    ("reason", pa.string()), ("excerpt", pa.string()),
])

NOTICE_EVENT_SCHEMA = pa.schema([
    ("original_doi", pa.string()), ("type", pa.string()), ("date", pa.string()),
    ("notice_doi", pa.string()), ("source", pa.string()), ("sources", pa.list_(pa.string())),
    ("record_id", pa.string()), ("nature_raw", pa.string()), ("reasons", pa.list_(pa.string())),
])

NOTICE_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("work_id", pa.string()), ("doi", pa.string()), ("state", pa.string()),
    ("reason", pa.string()), ("standing", pa.string()), ("events", pa.string()),
    ("sources_checked", pa.list_(pa.string())), ("checked_at", pa.timestamp("us", tz="UTC")),
])

RUN_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("started_at", pa.timestamp("us", tz="UTC")),
    ("finished_at", pa.timestamp("us", tz="UTC")), ("inputs", pa.list_(pa.string())),
    ("catalog_fingerprint", pa.string()), ("references", pa.int64()), ("rejects", pa.int64()),
    ("state_counts", pa.string()), ("seconds", pa.float64()), ("errors", pa.string()),
    # since the nightly issue (older run files lack these; the views read them with union_by_name)
    ("trigger", pa.string()),  # resolve | nightly
    ("catalog_seq", pa.int64()),  # the catalog's ingested_seq when the run resolved: works above it are newer
    ("transitions", pa.int64()),  # state or work changes this run recorded (see the transitions view)
    ("notices_changed", pa.int64()),  # notices re-checked by this run that differ from the previous ones
    ("timings", pa.string()),  # JSON: seconds per step
])

ARROW_CHUNK_ROWS = 50_000  # works converted to Arrow at a time during a catalog build

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_run_id(run_id: str) -> str:
    """Run ids become folder names: allow only a safe alphabet."""
    if not _RUN_ID.match(run_id or "") or ".." in run_id:
        raise ConfigError(f"run id {run_id!r} must be 1-128 letters, digits, '.', '_' or '-'")
    return run_id


def sql_literal(value: str | Path) -> str:
    """Quote a string for SQL. Only paths we build ever pass through here, never user input."""
    return "'" + str(value).replace("'", "''") + "'"


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


@contextmanager
def disk_errors(path: Path, access: bool = True) -> Iterator[None]:
    """A full disk (or quota) while writing ``path`` becomes one ``DiskFull`` naming it, and a
    folder we may not write one ``LedgerPathError``, instead of a traceback; the writers below
    remove their staged file on the way out, so nothing partial is left either way."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _NO_SPACE:
            raise DiskFull(path) from exc
        if access and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST):
            raise LedgerPathError(f"cannot write {path}: {exc.strerror} ({exc.filename or path})") from exc
        raise
    except duckdb.IOException as exc:  # DuckDB's own writes report ENOSPC in its message
        if "no space left" in str(exc).lower():
            raise DiskFull(path) from exc
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with disk_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def remove_leftovers(directory: Path) -> int:
    """Remove the staged files (``.NAME.XXXX.tmp``) that writers killed mid-write left in
    ``directory``; only under the folder's writer lock, where no live writer can own one."""
    removed = 0
    for leftover in [*directory.glob(".*.tmp"), *directory.glob(".*.tmp.wal")] if directory.is_dir() else ():
        leftover.unlink(missing_ok=True)
        removed += 1
    return removed


def check_ledger_dir(ledger_dir: str | Path, write: bool = True) -> Path:
    """The ledger folder, or a one-line error when it cannot be one: a file given as ``--ledger``,
    a folder this process may not write (for commands that write)."""
    path = Path(ledger_dir)
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent  # the nearest folder that exists decides whether we can create it
    if probe.exists() and not probe.is_dir():
        raise LedgerPathError(f"ledger {path}: {probe} is a file, not a folder (give --ledger a folder)")
    if write and not os.access(probe, os.W_OK | os.X_OK):
        raise LedgerPathError(f"ledger {path}: {probe} is not writable by this user")
    return path


def write_parquet(table: pa.Table, path: Path, staging: Path) -> None:
    """Write an Arrow table as Parquet through DuckDB into ``staging``, then rename into place."""
    with disk_errors(path):
        _write_parquet(table, path, staging)


def _write_parquet(table: pa.Table, path: Path, staging: Path) -> None:
    staging.mkdir(parents=True, exist_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=staging, prefix=f"{path.stem}.", suffix=".parquet")
    os.close(fd)
    con = duckdb.connect()
    try:
        con.register("to_write", table)
        con.execute(f"COPY (SELECT * FROM to_write) TO {sql_literal(tmp)} (FORMAT parquet, COMPRESSION zstd)")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        con.close()
        if os.path.exists(tmp):
            os.unlink(tmp)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --- catalog -------------------------------------------------------------------------------


@dataclass
class CatalogBuildReport:
    generation: str
    works: int
    added: int
    notice_events: int
    fingerprint: str
    files: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


class CatalogStore:
    """A catalog folder: ``CURRENT`` names the live generation folder holding the Parquet files."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)

    def current(self) -> Path | None:
        pointer = self.dir / "CURRENT"
        if not pointer.exists():
            return None
        gen = self.dir / pointer.read_text().strip()
        return gen if (gen / "manifest.json").exists() else None

    def manifest(self) -> dict[str, Any]:
        gen = self.current()
        if gen is None:
            raise ConfigError(f"no catalog in {self.dir}: run `citeledger catalog build --catalog {self.dir} FILE...`")
        return json.loads((gen / "manifest.json").read_text())

    def exists(self) -> bool:
        return self.current() is not None

    def build(self, files: Sequence[str | Path], fmt: src.SourceFormat | None = None,
              file_done: Callable[[Path], None] | None = None) -> CatalogBuildReport:
        """Add the works (and notices) of ``files`` to the catalog, merging with what is there
        (``file_done(path)`` after each file has been read: the CLI's progress).

        Idempotent: the same or overlapping files add nothing twice, because works are keyed by
        their stable ``work_id`` and fields are merged by source precedence.
        """
        from .locking import exclusive

        files = source_files(files)
        with disk_errors(self.dir):
            self.dir.mkdir(parents=True, exist_ok=True)
        with exclusive(self.dir), disk_errors(self.dir, access=False):  # one builder at a time
            return self._build(files, fmt, file_done)  # (the lock dies with its holder; staging goes on error)

    def _build(self, files: Sequence[str | Path], fmt: src.SourceFormat | None = None,
               file_done: Callable[[Path], None] | None = None) -> CatalogBuildReport:
        started = time.monotonic()
        for leftover in [*self.dir.glob(".building-*"), *self.dir.glob(".CURRENT.*.tmp")]:
            # what a killed build left behind; safe to remove under the lock
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
        previous = self.current()
        for orphan in self.dir.glob("gen-*"):  # moved into place by a build killed before the pointer swap
            if previous is None or orphan.name > previous.name:
                shutil.rmtree(orphan, ignore_errors=True)
        prev_manifest = json.loads((previous / "manifest.json").read_text()) if previous else {}
        seq0 = int(prev_manifest.get("ingested_seq", 0))
        gen_no = int(prev_manifest.get("generation_no", 0)) + 1
        staging = Path(tempfile.mkdtemp(dir=self.dir, prefix=".building-"))
        try:
            file_reports: list[dict[str, Any]] = []
            new_tables: list[pa.Table] = []
            notice_events: list[dict[str, Any]] = []
            built_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
            # which notice sources the catalog holds, and when each was last loaded
            notice_sources: dict[str, str] = dict(prev_manifest.get("notice_sources", {}))
            seq = seq0
            for path in files:
                path = Path(path)
                if not path.exists():
                    raise CatalogSourceError(f"{path}: no such file")
                this_fmt = fmt or src.sniff_format(path)
                report = {"file": str(path), "sha256": file_sha256(path), "format": this_fmt.value}
                if this_fmt in src.NOTICE_FORMATS:
                    events, rejects = _read_notice_source(path, this_fmt)
                    notice_events.extend(events)
                    notice_sources.update({e["source"]: built_at for e in events})
                    report.update(rows=len(events), rejects=len(rejects),
                                  reject_examples=[f"{path}:{r.line}: {r.reason}" for r in rejects[:5]])
                else:
                    # rows go to Arrow in chunks: a million works never sit in memory as Python objects
                    prec = src.SOURCE_PRECEDENCE[this_fmt]
                    rejects, chunk, n_rows = [], [], 0
                    for item in src.iter_work_rows(path, this_fmt):
                        if isinstance(item, src.SourceReject):
                            rejects.append(item)
                            continue
                        seq += 1
                        n_rows += 1
                        d = item.as_dict()
                        d.update(sources=[this_fmt.value], precedence=prec, ingested_seq=seq)
                        chunk.append(d)
                        if len(chunk) >= ARROW_CHUNK_ROWS:
                            new_tables.append(pa.Table.from_pylist(chunk, schema=WORKS_SCHEMA))
                            chunk = []
                    if chunk:
                        new_tables.append(pa.Table.from_pylist(chunk, schema=WORKS_SCHEMA))
                    report.update(rows=n_rows, rejects=len(rejects),
                                  reject_examples=[f"{r.file}:{r.line}: {r.reason}" for r in rejects[:5]])
                file_reports.append(report)
                if file_done is not None:
                    file_done(path)

            gen_name = f"gen-{gen_no:06d}"
            gen_dir = staging / gen_name
            gen_dir.mkdir()
            con = duckdb.connect()
            con.execute("SET preserve_insertion_order=true")
            new_table = pa.concat_tables(new_tables) if new_tables else WORKS_SCHEMA.empty_table()
            del new_tables
            con.register("new_works", new_table)
            if previous and (previous / "works.parquet").exists():
                con.execute(f"CREATE VIEW old_works AS SELECT * FROM read_parquet({sql_literal(previous / 'works.parquet')})")
            else:
                con.execute("CREATE VIEW old_works AS SELECT * FROM new_works WHERE false")
            before = con.execute("SELECT count(*) FROM old_works").fetchone()[0]
            # Field by field: the first non-null value by (precedence, newest first).
            pick = lambda col: (f"first({col} ORDER BY precedence, ingested_seq DESC) "  # noqa: E731
                                f"FILTER (WHERE {col} IS NOT NULL) AS {col}")
            pick_list = lambda col: (f"coalesce(first({col} ORDER BY precedence, ingested_seq DESC) "  # noqa: E731
                                     f"FILTER (WHERE len({col}) > 0), []) AS {col}")
            # Every DOI any source gives a work is kept: the primary one (a journal DOI before
            # arXiv's own 10.48550 DOI, then by precedence) and the others as cross-walks, so a
            # reference or a Retraction Watch row naming any of them finds the work.
            merged_sql = f"""
                SELECT * REPLACE (list_filter(alt_dois, lambda d: d IS DISTINCT FROM doi) AS alt_dois) FROM (
                SELECT work_id,
                       first(doi ORDER BY doi LIKE '10.48550/arxiv.%', precedence, ingested_seq DESC)
                           FILTER (WHERE doi IS NOT NULL) AS doi,
                       {pick('arxiv_id')}, {pick('title')}, {pick_list('authors')},
                       {pick('year')}, {pick('venue')}, {pick('volume')}, {pick('first_page')}, {pick('pmid')},
                       {pick('type')},
                       list_sort(list_distinct(flatten(list(list_concat(alt_dois,
                           CASE WHEN doi IS NULL THEN []::VARCHAR[] ELSE [doi] END))))) AS alt_dois,
                       bool_or(withdrawn) AS withdrawn, {pick('relations')},
                       list_sort(list_distinct(flatten(list(sources)))) AS sources,
                       min(precedence)::INTEGER AS precedence, max(ingested_seq) AS ingested_seq
                FROM (SELECT * FROM old_works UNION ALL BY NAME SELECT * FROM new_works)
                GROUP BY work_id) ORDER BY work_id"""
            # ingested_seq of a merged work must not change when nothing new arrived, or a
            # re-build would change the file: keep the old value unless a new row brought news.
            con.execute(f"CREATE TABLE merged AS {merged_sql}")
            con.execute("""
                UPDATE merged SET ingested_seq = o.ingested_seq FROM old_works o
                WHERE merged.work_id = o.work_id
                  AND merged.doi IS NOT DISTINCT FROM o.doi AND merged.arxiv_id IS NOT DISTINCT FROM o.arxiv_id
                  AND merged.title IS NOT DISTINCT FROM o.title AND merged.authors IS NOT DISTINCT FROM o.authors
                  AND merged.year IS NOT DISTINCT FROM o.year AND merged.venue IS NOT DISTINCT FROM o.venue
                  AND merged.volume IS NOT DISTINCT FROM o.volume
                  AND merged.first_page IS NOT DISTINCT FROM o.first_page
                  AND merged.pmid IS NOT DISTINCT FROM o.pmid AND merged.type IS NOT DISTINCT FROM o.type
                  AND merged.alt_dois IS NOT DISTINCT FROM o.alt_dois AND merged.withdrawn = o.withdrawn
                  AND merged.relations IS NOT DISTINCT FROM o.relations
                  AND merged.sources IS NOT DISTINCT FROM o.sources""")
            works_path = gen_dir / "works.parquet"
            con.execute(f"COPY (SELECT * FROM merged ORDER BY work_id) TO {sql_literal(works_path)} "
                        "(FORMAT parquet, COMPRESSION zstd)")
            n_works = con.execute("SELECT count(*) FROM merged").fetchone()[0]
            # Identifiers: a work's own ids rank 0, cross-walked ids (a preprint's journal DOI) rank 1.
            con.execute(f"""
                COPY (
                  SELECT DISTINCT scheme, value, work_id, rank FROM (
                    SELECT 'doi' AS scheme, value, work_id,
                           CASE WHEN work_id = 'doi:' || value
                                  OR value = '10.48550/arxiv.' || lower(arxiv_id) THEN 0 ELSE 1 END AS rank
                    FROM (SELECT doi AS value, work_id, arxiv_id FROM merged WHERE doi IS NOT NULL
                          UNION ALL SELECT unnest(alt_dois), work_id, arxiv_id FROM merged)
                    UNION ALL
                    SELECT 'arxiv', arxiv_id, work_id, 0 FROM merged WHERE arxiv_id IS NOT NULL)
                  ORDER BY scheme, value, rank, work_id)
                TO {sql_literal(gen_dir / 'identifiers.parquet')} (FORMAT parquet, COMPRESSION zstd)""")
            n_events = _write_notice_events(con, previous, notice_events, gen_dir)
            con.close()
            _build_blocking_index(gen_dir)
            fingerprint = "sha256:" + hashlib.sha256(
                (file_sha256(works_path) + file_sha256(gen_dir / "notice_events.parquet")).encode()).hexdigest()
            manifest = {
                "generation": gen_name, "generation_no": gen_no,
                "built_at": built_at, "notice_sources": notice_sources,
                "fingerprint": fingerprint, "works": n_works, "notice_events": n_events,
                "ingested_seq": seq, "builds": prev_manifest.get("builds", []) + [file_reports],
            }
            (gen_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
            # Move the complete generation into place, then swap the pointer: the atomic step.
            os.replace(gen_dir, self.dir / gen_name)
            atomic_write_bytes(self.dir / "CURRENT", gen_name.encode())
            # keep the previous generation (a reader that read the old pointer a moment ago still
            # finds its files) and every generation an unfinished run is pinned to; older ones go
            keep = {gen_name, previous.name if previous else None, *pinned_generations(self.dir)}
            for old in self.dir.glob("gen-*"):
                if old.name not in keep:
                    shutil.rmtree(old, ignore_errors=True)
            return CatalogBuildReport(generation=gen_name, works=n_works, added=n_works - before,
                                      notice_events=n_events, fingerprint=fingerprint, files=file_reports,
                                      seconds=time.monotonic() - started)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


# --- generation pins: a run resolves every batch on the generation it was planned on --------

PINS_DIR = ".pins"


def _pin_path(catalog_dir: str | Path, ledger_dir: str | Path, run_id: str) -> Path:
    ledger_key = hashlib.sha256(str(Path(ledger_dir).resolve()).encode()).hexdigest()[:12]
    return Path(catalog_dir) / PINS_DIR / f"{ledger_key}-{check_run_id(run_id)}.json"


def pin_generation(catalog_dir: str | Path, ledger_dir: str | Path, run_id: str, generation: str) -> bool:
    """Keep ``generation`` through later builds until the run ends (``unpin_generation``): an
    interrupted run is completed on the catalog it started on. False when the catalog folder is
    read-only (nobody who could rebuild it runs as us then)."""
    pin = {"generation": generation, "ledger": str(Path(ledger_dir).resolve()), "run_id": run_id,
           "pid": os.getpid()}
    try:
        atomic_write_bytes(_pin_path(catalog_dir, ledger_dir, run_id), json.dumps(pin, sort_keys=True).encode())
    except (LedgerPathError, PermissionError):
        return False
    return True


def pinned_generation(catalog_dir: str | Path, ledger_dir: str | Path, run_id: str) -> str | None:
    """The generation an unfinished run of this ledger is pinned to, if any."""
    try:
        return json.loads(_pin_path(catalog_dir, ledger_dir, run_id).read_text())["generation"]
    except (OSError, ValueError, KeyError):
        return None


def unpin_generation(catalog_dir: str | Path, ledger_dir: str | Path, run_id: str) -> None:
    try:
        _pin_path(catalog_dir, ledger_dir, run_id).unlink(missing_ok=True)
    except OSError:
        pass  # a read-only catalog never held a pin


def _pin_is_stale(pin: dict[str, Any]) -> bool:
    """A pin outlives its purpose when its run finished or its ledger no longer knows the run,
    and no live process (the planner, between pinning and starting the run) holds it."""
    try:
        os.kill(int(pin["pid"]), 0)
        return False  # its planner (or a process reusing the pid: keeping it is the safe side)
    except (ProcessLookupError, ValueError, KeyError, TypeError):
        pass
    except PermissionError:
        return False
    ledger, run_id = Path(pin.get("ledger", "")), str(pin.get("run_id", ""))
    finished = (ledger / "runs" / run_id / "run.parquet").exists()
    return finished or not (ledger / "_runs" / run_id / "manifest.json").exists()


def pinned_generations(catalog_dir: str | Path) -> set[str]:
    """Generations pinned by unfinished runs; stale pins are removed on the way (called under
    the catalog's build lock)."""
    kept = set()
    for path in (Path(catalog_dir) / PINS_DIR).glob("*.json"):
        try:
            pin = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if _pin_is_stale(pin):
            path.unlink(missing_ok=True)
        else:
            kept.add(str(pin.get("generation")))
    return kept


def source_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files a build reads: each file as given, a folder's files recursively (in name order,
    hidden ones skipped); a missing path is an error before anything is read."""
    out: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file()
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not found:
                raise CatalogSourceError(f"{path}: a folder with no files to read")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise CatalogSourceError(f"{path}: no such file")
    return out


def _read_notice_source(path: Path, fmt: src.SourceFormat) -> tuple[list[dict[str, Any]], list[Any]]:
    from resolvers import notice_sources

    reader = notice_sources.read_retraction_watch_csv if fmt is src.SourceFormat.RETRACTION_WATCH_CSV \
        else notice_sources.read_doi_nature_csv
    events, rejects = reader(path)
    return [e.to_dict() for e in events], [r for r in rejects if not r.kept]


def _write_notice_events(con: duckdb.DuckDBPyConnection, previous: Path | None,
                         new_events: list[dict[str, Any]], gen_dir: Path) -> int:
    """Notice events from Retraction Watch files, deduplicated across builds."""
    schema = NOTICE_EVENT_SCHEMA
    con.register("new_events", pa.Table.from_pylist(new_events, schema=schema))
    old = previous / "notice_events.parquet" if previous else None
    if old is not None and old.exists():
        con.execute(f"CREATE VIEW old_events AS SELECT * FROM read_parquet({sql_literal(old)})")
    else:
        con.execute("CREATE VIEW old_events AS SELECT * FROM new_events WHERE false")
    cols = ", ".join(schema.names)
    out = gen_dir / "notice_events.parquet"
    con.execute(f"COPY (SELECT DISTINCT {cols} FROM (SELECT {cols} FROM old_events UNION ALL "
                f"SELECT {cols} FROM new_events) ORDER BY ALL) TO {sql_literal(out)} (FORMAT parquet)")
    return con.execute(f"SELECT count(*) FROM read_parquet({sql_literal(out)})").fetchone()[0]


def _build_blocking_index(gen_dir: Path) -> None:
    """The fuzzy matcher's candidate index lives beside the works it indexes."""
    from . import blocking

    blocking.build_index(gen_dir)


def _dict_rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def work_from_row(rec: dict[str, Any]) -> Work:
    return Work(
        work_id=rec["work_id"], doi=rec.get("doi"), arxiv_id=rec.get("arxiv_id"), title=rec.get("title"),
        authors=tuple(rec.get("authors") or ()), year=rec.get("year"), venue=rec.get("venue"),
        volume=rec.get("volume"), first_page=rec.get("first_page"), pmid=rec.get("pmid"),
        type=rec.get("type"), alt_dois=tuple(rec.get("alt_dois") or ()), withdrawn=bool(rec.get("withdrawn")),
    )


class ParquetCatalog:
    """``CatalogLookup`` over a built catalog folder: batched identifier joins in DuckDB.

    The identifier table is loaded into an in-memory DuckDB table once; each call takes its own
    cursor, so tasks in several threads can share one catalog.
    """

    def __init__(self, directory: str | Path, generation: str | Path | None = None):
        """The catalog's live generation, or the one named (a run resolves every batch against the
        generation it was planned on, whatever builds happen meanwhile)."""
        self.store = CatalogStore(directory)
        gen = self.store.current() if generation is None else self.store.dir / Path(generation).name
        if gen is None:
            raise ConfigError(f"no catalog in {directory}: run `citeledger catalog build --catalog {directory} FILE...`")
        if not (gen / "manifest.json").exists():
            raise ConfigError(f"catalog generation {gen} is gone (a later build replaced it); "
                              "re-run with a new run id")
        self.generation_dir = gen
        self.manifest = json.loads((gen / "manifest.json").read_text())
        self._con = duckdb.connect()
        self._lock = threading.Lock()
        self._con.execute(f"CREATE TABLE identifiers AS SELECT * FROM read_parquet({sql_literal(gen / 'identifiers.parquet')})")
        self._con.execute(f"CREATE VIEW works AS SELECT * FROM read_parquet({sql_literal(gen / 'works.parquet')})")

    @staticmethod
    def generation_of(directory: str | Path) -> Path | None:
        return CatalogStore(directory).current()

    @property
    def fingerprint(self) -> str:
        return self.manifest["fingerprint"]

    @property
    def works_path(self) -> Path:
        return self.generation_dir / "works.parquet"

    @contextmanager
    def _cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of its own for each call: one connection shared across threads fails."""
        with self._lock:
            cur = self._con.cursor()
        try:
            yield cur
        finally:
            cur.close()

    def _lookup(self, scheme: str, values: Sequence[str]) -> dict[str, Work]:
        values = sorted(set(v for v in values if v))
        if not values:
            return {}
        with self._cursor() as cur:
            cur.register("wanted", pa.table({"value": pa.array(values, pa.string())}))
            cur.execute("""
                SELECT value, w.* FROM (
                    SELECT i.value, i.work_id, row_number() OVER (PARTITION BY i.value ORDER BY i.rank, i.work_id) AS r
                    FROM identifiers i JOIN wanted USING (value) WHERE i.scheme = ?) hit
                JOIN works w USING (work_id) WHERE hit.r = 1""", [scheme])
            rows = _dict_rows(cur)
        return {rec["value"]: work_from_row(rec) for rec in rows}

    def works_by_doi(self, dois: Sequence[str]) -> dict[str, Work]:
        return self._lookup("doi", dois)

    def works_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, Work]:
        return self._lookup("arxiv", arxiv_ids)

    def works_by_id(self, work_ids: Sequence[str]) -> dict[str, Work]:
        return {work_id: work_from_row(rec) for work_id, rec in self.work_rows(work_ids).items()}

    def work_rows(self, work_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Catalog rows (every column, relations and sources included) by work id."""
        ids = sorted(set(work_ids))
        if not ids:
            return {}
        with self._cursor() as cur:
            cur.register("wanted", pa.table({"work_id": pa.array(ids, pa.string())}))
            cur.execute("SELECT w.* EXCLUDE (precedence, ingested_seq) FROM works w JOIN wanted USING (work_id)")
            return {rec["work_id"]: rec for rec in _dict_rows(cur)}

    @property
    def ingested_seq(self) -> int:
        """High-water mark of the works ingested so far: a work with a larger ``ingested_seq``
        arrived (or changed) after a run that recorded this value."""
        return int(self.manifest.get("ingested_seq", 0))

    def works_after(self, seq: int) -> list[dict[str, Any]]:
        """Identifiers and title of the works that arrived or changed after ``seq``."""
        with self._cursor() as cur:
            cur.execute("SELECT work_id, doi, arxiv_id, alt_dois, title FROM works WHERE ingested_seq > ? "
                        "ORDER BY work_id", [seq])
            return _dict_rows(cur)

    def notice_events(self) -> list[dict[str, Any]]:
        """Every notice event the catalog's notice sources hold (Retraction Watch files)."""
        with self._cursor() as cur:
            cur.execute(f"SELECT * FROM read_parquet({sql_literal(self.generation_dir / 'notice_events.parquet')})")
            return _dict_rows(cur)

    def close(self) -> None:
        self._con.close()


# --- ledger --------------------------------------------------------------------------------


@dataclass
class RunManifest:
    run_id: str
    started_at: str
    inputs: list[dict[str, Any]]
    catalog_fingerprint: str
    options: dict[str, Any]

    @property
    def observed_at(self) -> datetime:
        return datetime.fromisoformat(self.started_at)


LEDGER_MARKS = ("_runs", "observations", "runs", "ledger.duckdb")  # what a run leaves in its ledger


def ledger_problem(directory: str | Path) -> str | None:
    """Why ``directory`` is not a ledger (a mistyped ``--ledger`` must not read as an empty one), or None."""
    path = Path(directory)
    if path.is_dir() and any((path / mark).exists() for mark in LEDGER_MARKS):
        return None
    what = "is a file" if path.exists() and not path.is_dir() else \
        "does not exist" if not path.exists() else "holds no ledger (no observations/, runs/ or ledger.duckdb)"
    return f"ledger {path} {what}: give --ledger the folder `citeledger resolve` wrote"


def require_ledger(directory: str | Path) -> Path:
    problem = ledger_problem(directory)
    if problem:
        raise ConfigError(problem)
    return Path(directory)


class LedgerStore:
    """A ledger folder: observations, rejects, runs and notices as Parquet part files."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        self.staging = self.dir / ".staging"

    def _run_dir(self, kind: str, run_id: str) -> Path:
        return self.dir / kind / check_run_id(run_id)

    def begin_run(self, run_id: str, inputs: list[dict[str, Any]], catalog_fingerprint: str,
                  options: dict[str, Any]) -> tuple[RunManifest, bool]:
        """Start a run, or pick up an interrupted one with the same id. Returns (manifest, resumed).

        A resumed run keeps its first start time, so its rows equal an uninterrupted run's.
        """
        # half-written files of a killed writer; only called under the ledger lock (locking.py)
        shutil.rmtree(self.staging, ignore_errors=True)
        remove_leftovers(self.dir)  # a killed ledger.duckdb write
        remove_leftovers(self.dir / "records")  # a killed records writer
        path = self._run_dir("_runs", run_id) / "manifest.json"
        if path.exists():
            data = json.loads(path.read_text())
            manifest = RunManifest(**data)
            if [i["sha256"] for i in manifest.inputs] != [i["sha256"] for i in inputs]:
                raise ConfigError(f"run {run_id} was started with other input files; use a new run id")
            # a finished run may have grown the catalog itself (remotely fetched works)
            if manifest.catalog_fingerprint != catalog_fingerprint and not self.run_finished(run_id):
                raise ConfigError(f"run {run_id} was started against another catalog; use a new run id")
            return manifest, True
        manifest = RunManifest(run_id=run_id,
                               started_at=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
                               inputs=inputs, catalog_fingerprint=catalog_fingerprint, options=options)
        atomic_write_bytes(path, json.dumps(manifest.__dict__, indent=2, sort_keys=True).encode())
        return manifest, False

    def part_path(self, kind: str, run_id: str, part: str) -> Path:
        if not re.match(r"^[A-Za-z0-9._-]{1,200}$", part):
            raise ValueError(f"bad part name {part!r}")
        return self._run_dir(kind, run_id) / f"{part}.parquet"

    def batch_done(self, run_id: str, part: str) -> bool:
        return self.part_path("observations", run_id, part).exists()

    def write_rejects(self, run_id: str, part: str, rejects: list[dict[str, Any]]) -> None:
        if rejects:
            write_parquet(pa.Table.from_pylist(rejects, schema=REJECT_SCHEMA),
                          self.part_path("rejects", run_id, part), self.staging)

    def write_observations(self, run_id: str, part: str, rows: list[dict[str, Any]]) -> None:
        """Written last for a batch: its presence marks the batch complete."""
        write_parquet(pa.Table.from_pylist(rows, schema=OBSERVATION_SCHEMA),
                      self.part_path("observations", run_id, part), self.staging)

    def write_fetched_works(self, run_id: str, part: str, rows: list[dict[str, Any]]) -> None:
        """Works fetched by remote resolvers, as works JSONL, for the catalog to take in."""
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
        atomic_write_bytes(self._run_dir("fetched", run_id) / f"{part}.jsonl", text.encode())

    def fetched_work_files(self, run_id: str) -> list[Path]:
        return sorted(self._run_dir("fetched", run_id).glob("*.jsonl"))

    def write_notices(self, run_id: str, rows: list[dict[str, Any]], part: str = "notices") -> None:
        write_parquet(pa.Table.from_pylist(rows, schema=NOTICE_SCHEMA),
                      self.part_path("notices", run_id, part), self.staging)

    def unfinished_runs(self, prefix: str = "") -> list[RunManifest]:
        """Runs begun but never finished (no runs row), oldest first: candidates to resume."""
        out = []
        for path in sorted((self.dir / "_runs").glob(f"{prefix}*/manifest.json")):
            if not self.run_finished(path.parent.name):
                out.append(RunManifest(**json.loads(path.read_text())))
        return sorted(out, key=lambda m: m.started_at)

    def linked_work_ids(self, run_id: str) -> list[str]:
        """Every work a reference of this run links to (the works whose notices it checks)."""
        glob = self._run_dir("observations", run_id) / "*.parquet"
        if not any(glob.parent.glob("*.parquet")):
            return []
        con = duckdb.connect()
        try:
            return [r[0] for r in con.execute(f"SELECT DISTINCT work_id FROM read_parquet({sql_literal(glob)}) "
                                              "WHERE work_id IS NOT NULL ORDER BY 1").fetchall()]
        finally:
            con.close()

    def finish_run(self, row: dict[str, Any]) -> None:
        write_parquet(pa.Table.from_pylist([row], schema=RUN_SCHEMA),
                      self.part_path("runs", row["run_id"], "run"), self.staging)

    def run_finished(self, run_id: str) -> bool:
        return self.part_path("runs", run_id, "run").exists()

    def run_complete(self, run_id: str) -> bool:
        """Whether every finishing step after the run row (``pipeline._complete_run``) happened."""
        return (self._run_dir("_runs", run_id) / "complete").exists()

    def mark_complete(self, run_id: str) -> None:
        atomic_write_bytes(self._run_dir("_runs", run_id) / "complete", b"")

    def known_run(self, run_id: str) -> bool:
        """A run this ledger has begun (finished or not)."""
        return (self._run_dir("_runs", run_id) / "manifest.json").exists() or self.run_finished(run_id)

    def read_run_counts(self, run_id: str) -> dict[str, int]:
        glob = self._run_dir("observations", run_id) / "*.parquet"
        con = duckdb.connect()
        try:
            return dict(con.execute(f"SELECT status, count(*) FROM read_parquet({sql_literal(glob)}) GROUP BY 1").fetchall())
        finally:
            con.close()


# --- views and queries ---------------------------------------------------------------------

VIEW_NAMES = ("observations", "current", "transitions", "works", "notices", "notices_history", "rejects", "runs")

# A state change of one reference between two consecutive observations of it (same order as
# ``current``): a new status, or the same status now pointing at another work. ``changed_at`` is
# the later observation's time (``at`` is a reserved word in DuckDB 2).
TRANSITIONS_SQL = """
SELECT citing_paper, reference_index, from_status, to_status, from_work_id, to_work_id, from_run, to_run, changed_at
FROM (SELECT citing_paper, reference_index,
             lag(status) OVER w AS from_status, status AS to_status,
             lag(work_id) OVER w AS from_work_id, work_id AS to_work_id,
             lag(run_id) OVER w AS from_run, run_id AS to_run, observed_at AS changed_at
      FROM observations
      WINDOW w AS (PARTITION BY citing_paper, reference_index ORDER BY observed_at, run_id))
WHERE from_run IS NOT NULL
  AND (from_status IS DISTINCT FROM to_status OR from_work_id IS DISTINCT FROM to_work_id)"""


def _empty_select(schema: pa.Schema) -> str:
    duck = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE",
            pa.bool_(): "BOOLEAN", pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
            pa.list_(pa.string()): "VARCHAR[]"}
    cols = ", ".join(f"NULL::{duck[f.type]} AS {f.name}" for f in schema)
    return f"SELECT {cols} WHERE false"


def _source(glob: Path, schema: pa.Schema) -> str:
    """A parquet glob when files exist, else an empty relation of the right shape."""
    parent = Path(str(glob).split("*", 1)[0])
    if parent.exists() and any(parent.rglob("*.parquet")):
        return f"SELECT * FROM read_parquet({sql_literal(glob)}, union_by_name=true)"
    return _empty_select(schema)


# the views over part files: name -> (folder under the ledger, schema of its files)
LEDGER_PARTS = {"observations": ("observations", OBSERVATION_SCHEMA), "rejects": ("rejects", REJECT_SCHEMA),
                "runs": ("runs", RUN_SCHEMA), "notices_history": ("notices", NOTICE_SCHEMA)}
CURRENT_SQL = ("SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER (PARTITION BY citing_paper, "
               "reference_index ORDER BY observed_at DESC, run_id DESC) AS rn FROM observations) WHERE rn = 1")
NOTICES_SQL = ("SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER (PARTITION BY work_id "
               "ORDER BY checked_at DESC, run_id DESC) AS rn FROM notices_history) WHERE rn = 1")
# the views over other views, in an order in which each one's sources exist before it
DERIVED_VIEWS = {"current": CURRENT_SQL, "transitions": TRANSITIONS_SQL, "notices": NOTICES_SQL}
WORKS_VIEW_SCHEMA = pa.schema([f for f in WORKS_SCHEMA if f.name not in ("precedence", "ingested_seq")])


def view_definitions(ledger_dir: str | Path, catalog_dir: str | Path | None) -> dict[str, str]:
    """SQL for every view of the contract, over absolute paths."""
    ledger = Path(ledger_dir).resolve()
    views = {name: _source(ledger / folder / "**" / "*.parquet", schema)
             for name, (folder, schema) in LEDGER_PARTS.items()}
    gen = CatalogStore(catalog_dir).current() if catalog_dir else None
    if gen is not None:
        views["works"] = (f"SELECT * EXCLUDE (precedence, ingested_seq) FROM "
                          f"read_parquet({sql_literal((gen / 'works.parquet').resolve())})")
    else:
        views["works"] = _empty_select(WORKS_VIEW_SCHEMA)
    return views | DERIVED_VIEWS


def connect_views(ledger_dir: str | Path, catalog_dir: str | Path | None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for name, sql in view_definitions(ledger_dir, catalog_dir).items():
        con.execute(f"CREATE VIEW {name} AS {sql}")
    return con


LEDGER_DB = "ledger.duckdb"


def write_ledger_database(ledger_dir: str | Path, catalog_dir: str | Path | None) -> Path:
    """``<ledger>/ledger.duckdb``: the views of ``citeledger query`` stored in a DuckDB file, for
    the duckdb shell and notebooks. The views hold absolute paths (so the file works from any
    directory on this machine) and are fixed when written: a later catalog generation or a kind
    of part file that did not exist yet appears once the file is written again, which every run
    does. Written beside, then renamed over the old file, so a reader never sees half a file."""
    ledger = Path(ledger_dir)
    ledger.mkdir(parents=True, exist_ok=True)
    target = ledger / LEDGER_DB
    with disk_errors(target):
        _write_database_file(ledger, catalog_dir, target)
    return target


def _write_database_file(ledger: Path, catalog_dir: str | Path | None, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=ledger, prefix=f".{LEDGER_DB}.", suffix=".tmp")
    os.close(fd)
    os.unlink(tmp)  # duckdb creates the file itself
    try:
        # an older storage format, so the duckdb shell of the `duckdb-cli` package (1.5) opens it too
        con = duckdb.connect(tmp, config={"storage_compatibility_version": "v1.0.0"})
        try:
            for name, sql in view_definitions(ledger, catalog_dir).items():
                con.execute(f"CREATE VIEW {name} AS {sql}")
            con.execute("CHECKPOINT")
        finally:
            con.close()
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, tmp + ".wal"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def run_transitions(ledger_dir: str | Path, run_id: str) -> int:
    """How many transitions the observations of ``run_id`` recorded."""
    con = connect_views(ledger_dir, None)
    try:
        return con.execute("SELECT count(*) FROM transitions WHERE to_run = ?", [run_id]).fetchone()[0]
    finally:
        con.close()


def current_rows(ledger_dir: str | Path, statuses: Sequence[str]) -> list[dict[str, Any]]:
    """Current observations in ``statuses``, with the catalog_seq of the run that made them
    (null for runs written before runs carried it)."""
    con = connect_views(ledger_dir, None)
    try:
        con.register("wanted", pa.table({"status": pa.array(sorted(set(statuses)), pa.string())}))
        cols = {r[0] for r in con.execute("DESCRIBE runs").fetchall()}
        seq = "r.catalog_seq" if "catalog_seq" in cols else "NULL::BIGINT"
        con.execute(f"""SELECT c.citing_paper, c.reference_index, c.raw, c.source, c.status, c.work_id,
                              c.extracted_dois, c.extracted_arxiv_ids, c.observation_id, c.run_id,
                              {seq} AS catalog_seq
                       FROM current c LEFT JOIN runs r USING (run_id)
                       WHERE c.status IN (SELECT status FROM wanted)
                       ORDER BY c.citing_paper, c.reference_index""")
        return _dict_rows(con)
    finally:
        con.close()


def current_links_and_notices(ledger_dir: str | Path) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Every work a current observation links to, and the latest notice of each work."""
    con = connect_views(ledger_dir, None)
    try:
        works = [r[0] for r in con.execute("SELECT DISTINCT work_id FROM current WHERE work_id IS NOT NULL "
                                           "ORDER BY 1").fetchall()]
        con.execute("SELECT * FROM notices")
        return works, {r["work_id"]: r for r in _dict_rows(con)}
    finally:
        con.close()


def citing_papers_of_works(ledger_dir: str | Path, work_ids: Sequence[str]) -> list[str]:
    """Citing papers whose current observations link to any of ``work_ids``."""
    if not work_ids:
        return []
    con = connect_views(ledger_dir, None)
    try:
        con.register("wanted", pa.table({"work_id": pa.array(sorted(set(work_ids)), pa.string())}))
        return [r[0] for r in con.execute("SELECT DISTINCT citing_paper FROM current WHERE work_id IN "
                                          "(SELECT work_id FROM wanted) ORDER BY 1").fetchall()]
    finally:
        con.close()


def run_query(sql: str, ledger_dir: str | Path, catalog_dir: str | Path | None) -> duckdb.DuckDBPyRelation:
    """The user's SQL over the views, on a connection that cannot write (see ``query.py``)."""
    from .query import run_query as run

    return run(sql, ledger_dir, catalog_dir)


Observed = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]


def paper_observations(ledger_dir: str | Path, catalog_dir: str | Path, forms: Sequence[str], work_id: str | None
                       ) -> Observed:
    """One paper's current outbound rows, the current rows of other papers citing its work, and
    the notices of the works it cites."""
    return papers_observations(ledger_dir, catalog_dir, [(forms, work_id)])[0]


def papers_observations(ledger_dir: str | Path, catalog_dir: str | Path,
                        papers: Sequence[tuple[Sequence[str], str | None]]) -> list[Observed]:
    """``paper_observations`` for many papers (each: the forms of its id, its catalog work id) over
    one connection. The ledger's ``current`` view (the latest observation of every reference) is
    computed once, for the rows any of these papers needs, instead of once per paper: a night's
    records cost one pass over the ledger, not one per paper."""
    con = connect_views(ledger_dir, catalog_dir)
    try:
        every_form = sorted({f.lower() for forms, _ in papers for f in forms})
        con.register("every_form", pa.table({"form": pa.array(every_form, pa.string())}))
        con.register("every_work", pa.table({"work_id": pa.array(sorted({w for _, w in papers if w}), pa.string())}))
        con.execute("""CREATE TEMP TABLE cur AS SELECT * FROM current
                       WHERE lower(citing_paper) IN (SELECT form FROM every_form)
                          OR work_id IN (SELECT work_id FROM every_work)
                          OR doi IN (SELECT form FROM every_form) OR arxiv_id IN (SELECT form FROM every_form)""")
        con.execute("CREATE TEMP TABLE cur_notices AS SELECT * FROM notices WHERE work_id IN (SELECT work_id FROM cur)")
        out = []
        for forms, work_id in papers:
            con.register("forms", pa.table({"form": pa.array(sorted(set(f.lower() for f in forms)), pa.string())}))
            con.execute("SELECT * FROM cur WHERE lower(citing_paper) IN (SELECT form FROM forms) "
                        "ORDER BY reference_index, citing_paper")
            outbound = _dict_rows(con)
            con.execute("""SELECT * FROM cur WHERE lower(citing_paper) NOT IN (SELECT form FROM forms)
                           AND (work_id = ? OR doi IN (SELECT form FROM forms) OR arxiv_id IN (SELECT form FROM forms))
                           ORDER BY citing_paper, reference_index""", [work_id])
            inbound = _dict_rows(con)
            con.execute("""SELECT * FROM cur_notices WHERE work_id IN (SELECT work_id FROM cur
                           WHERE lower(citing_paper) IN (SELECT form FROM forms))""")
            notices = _dict_rows(con)
            con.unregister("forms")
            out.append((outbound, inbound, notices))
        return out
    finally:
        con.close()


def citing_papers(ledger_dir: str | Path, catalog_dir: str | Path, run_id: str | None) -> list[str]:
    """The citing papers of one run, or of the whole ledger."""
    con = connect_views(ledger_dir, catalog_dir)
    try:
        if run_id is None:
            con.execute("SELECT DISTINCT citing_paper FROM current ORDER BY 1")
        else:
            con.execute("SELECT DISTINCT citing_paper FROM observations WHERE run_id = ? ORDER BY 1", [run_id])
        return [r[0] for r in con.fetchall()]
    finally:
        con.close()


def latest_run_id(ledger_dir: str | Path) -> str | None:
    """The most recently finished run of a ledger."""
    con = connect_views(ledger_dir, None)
    try:
        row = con.execute("SELECT run_id FROM runs ORDER BY finished_at DESC, run_id DESC LIMIT 1").fetchone()
        return row[0] if row else None
    finally:
        con.close()
