"""The catalog: works and notice events from source files, built into generations on disk, and
read back through the one lookup interface (``ParquetCatalog``).

A build writes a new generation folder and then swaps the ``CURRENT`` pointer (a rename), so a
killed build leaves the previous catalog intact; generations a run is still using are pinned.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import duckdb
import pyarrow as pa

from resolvers.errors import CatalogSourceError, ConfigError, LedgerPathError
from resolvers.model import Work

from . import sources as src
from .atomic import atomic_write_bytes, disk_errors, file_sha256, sql_literal
from .options import check_run_id

WORKS_SCHEMA = pa.schema([
    ("work_id", pa.string()), ("doi", pa.string()), ("arxiv_id", pa.string()), ("title", pa.string()),
    ("authors", pa.list_(pa.string())), ("year", pa.int32()), ("venue", pa.string()),
    ("volume", pa.string()), ("first_page", pa.string()), ("pmid", pa.string()), ("type", pa.string()),
    ("alt_dois", pa.list_(pa.string())), ("withdrawn", pa.bool_()), ("relations", pa.string()),
    ("sources", pa.list_(pa.string())), ("precedence", pa.int32()), ("ingested_seq", pa.int64()),
])

NOTICE_EVENT_SCHEMA = pa.schema([
    ("original_doi", pa.string()), ("type", pa.string()), ("date", pa.string()),
    ("notice_doi", pa.string()), ("source", pa.string()), ("sources", pa.list_(pa.string())),
    ("record_id", pa.string()), ("nature_raw", pa.string()), ("reasons", pa.list_(pa.string())),
])

ARROW_CHUNK_ROWS = 50_000  # works converted to Arrow at a time during a catalog build


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
