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
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from citeledger.app_errors import CatalogSourceError
from citeledger.catalog.generation_pins import pinned_generations
from citeledger.catalog.merge_sql import (
    ALL_ROWS_SQL,
    IDENTIFIERS_SQL,
    KEEP_SEQ_SQL,
    MERGED_SQL,
    NEW_LATEST_SQL,
    SHARED_IDS_SQL,
)
from citeledger.index import blocking, venue_index
from citeledger.index import notice_files as notice_file
from citeledger.options import env_memory_size
from citeledger.storage.atomic import atomic_write_bytes, disk_errors, file_sha256, publish_dir
from citeledger.storage.locking import exclusive
from citeledger.storage.mapped_files import release_if_over
from citeledger.storage.places import CatalogDir, CatalogPlaces
from citeledger.storage.sql import scalar, sql_literal, strings_table
from citeledger.works.row_schema import WORKS_SCHEMA, work_from_row
from citeledger.works.work_rows import WorkReader
from resolvers.errors import ConfigError
from resolvers.model import Work

if TYPE_CHECKING:  # the build's reading of source files: loaded by a build only (``citeledger query`` reads)
    from citeledger.catalog.extract_parts import Extracted
    from citeledger.sources import source_rows

NOTICE_EVENT_SCHEMA = pa.schema([
    ("original_doi", pa.string()), ("type", pa.string()), ("date", pa.string()),
    ("notice_doi", pa.string()), ("source", pa.string()), ("sources", pa.list_(pa.string())),
    ("record_id", pa.string()), ("nature_raw", pa.string()), ("reasons", pa.list_(pa.string())),
])

# The merge's DuckDB: bounded memory, spilling to a folder in the build's staging folder.
MERGE_MEMORY_LIMIT = "3GB"  # unless CITELEDGER_BUILD_MEMORY_LIMIT says otherwise (checked when a build starts)
MERGE_THREADS = min(os.cpu_count() or 1, 4)
# The extracted parts of the works files the catalog's builds read, by digest: a later build
# naming an unchanged file again takes them instead of reading it (``catalog.extract.keep_cache``).


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

    def __init__(self, directory: CatalogDir):
        self.places = CatalogPlaces.of(directory)
        self.dir = self.places.root

    def current(self) -> Path | None:
        pointer = self.places.current
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

    def build(self, files: Sequence[str | Path], fmt: source_rows.SourceFormat | None = None,
              file_done: Callable[[Path], None] | None = None) -> CatalogBuildReport:
        """Add the works (and notices) of ``files`` to the catalog, merging with what is there
        (``file_done(path)`` after each file has been read: the CLI's progress).

        Idempotent: the same or overlapping files add nothing twice, because works are keyed by
        their stable ``work_id`` and fields are merged by source precedence.
        """
        files = source_files(files)
        with disk_errors(self.dir):
            self.dir.mkdir(parents=True, exist_ok=True)
        with exclusive(self.dir), disk_errors(self.dir, access=False):  # one builder at a time
            return self._build(files, fmt, file_done)  # (the lock dies with its holder; staging goes on error)

    def _build(self, files: Sequence[Path], fmt: source_rows.SourceFormat | None = None,
               file_done: Callable[[Path], None] | None = None) -> CatalogBuildReport:
        """Extract, merge, index, publish: each a step of its own (tested alone)."""
        from citeledger.catalog.extract_parts import extract, keep_cache

        started = time.monotonic()
        previous = start_build(self.dir)
        staging = Path(tempfile.mkdtemp(dir=self.dir, prefix=".building-"))
        try:
            built_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
            extracted = extract(files, fmt, previous.ingested_seq, file_done, staging=staging,
                                cache=self.places.extract_cache)
            gen_dir = staging / previous.next_name
            gen_dir.mkdir()
            merged = merge(previous.dir, extracted, gen_dir)
            index(gen_dir)
            published = publish(self.dir, gen_dir, previous, extracted, merged, built_at)
            keep_cache(self.places.extract_cache, extracted, published.manifest["builds"])
            return CatalogBuildReport(generation=published.generation, works=merged.works,
                                      added=merged.works - merged.works_before, notice_events=merged.notice_events,
                                      fingerprint=published.fingerprint, files=extracted.files,
                                      seconds=time.monotonic() - started)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


# --- the build's four steps: extract, merge, index, publish -----------------------------------

@dataclass(frozen=True)
class Generation:
    """The live generation a build starts from (``dir`` None: an empty catalog)."""

    dir: Path | None
    manifest: dict[str, Any]

    @property
    def ingested_seq(self) -> int:
        return int(self.manifest.get("ingested_seq", 0))

    @property
    def next_name(self) -> str:
        return f"gen-{int(self.manifest.get('generation_no', 0)) + 1:06d}"


@dataclass(frozen=True)
class Merged:
    """Counts of a merged generation (its files are in the staging generation folder)."""

    works: int
    works_before: int
    notice_events: int


@dataclass(frozen=True)
class Published:
    generation: str
    fingerprint: str
    manifest: dict[str, Any]


def start_build(catalog_dir: Path) -> Generation:
    """Remove what a killed build left behind (safe under the build lock) and return the live
    generation: staging folders, staged pointers, and generations moved into place by a build
    killed before its pointer swap."""
    for leftover in [*catalog_dir.glob(".building-*"), *catalog_dir.glob(".CURRENT.*.tmp")]:
        shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    previous = CatalogStore(catalog_dir).current()
    for orphan in catalog_dir.glob("gen-*"):
        if previous is None or orphan.name > previous.name:
            shutil.rmtree(orphan, ignore_errors=True)
    manifest = json.loads((previous / "manifest.json").read_text()) if previous else {}
    return Generation(previous, manifest)


def merge(previous: Path | None, new: Extracted, gen_dir: Path) -> Merged:
    """The previous generation's works and notice events merged with the new ones, written into
    ``gen_dir`` (works, identifiers, notice events). Idempotent: merging the same rows again
    changes no byte, because works are keyed by ``work_id`` and fields merged by precedence.
    DuckDB works within ``MERGE_MEMORY_LIMIT``, spilling to a folder beside ``gen_dir``."""
    memory = env_memory_size("CITELEDGER_BUILD_MEMORY_LIMIT", MERGE_MEMORY_LIMIT)
    spill = Path(tempfile.mkdtemp(dir=gen_dir.parent, prefix=".merge-spill-"))
    con = duckdb.connect(config={"memory_limit": memory, "threads": MERGE_THREADS,
                                 "temp_directory": str(spill), "preserve_insertion_order": True})
    try:
        con.execute(f"CREATE VIEW new_works AS {_new_works_sql(con, new)}")
        old_sql = "SELECT * FROM new_works WHERE false"  # (columns a catalog built before had not: null)
        if previous and (previous / "works.parquet").exists():
            old_sql += f" UNION ALL BY NAME SELECT * FROM read_parquet({sql_literal(previous / 'works.parquet')})"
        con.execute(f"CREATE VIEW old_works AS {old_sql}")
        con.execute(NEW_LATEST_SQL)
        con.execute(ALL_ROWS_SQL)
        con.execute(SHARED_IDS_SQL)
        before = scalar(con, "SELECT count(*) FROM old_works")
        con.execute(f"CREATE TABLE merged AS {MERGED_SQL}")
        con.execute(KEEP_SEQ_SQL)
        con.execute(f"COPY (SELECT * FROM merged ORDER BY work_id) TO {sql_literal(gen_dir / 'works.parquet')} "
                    "(FORMAT parquet, COMPRESSION zstd)")
        n_works = scalar(con, "SELECT count(*) FROM merged")
        con.execute(f"COPY ({IDENTIFIERS_SQL}) TO {sql_literal(gen_dir / 'identifiers.parquet')} "
                    "(FORMAT parquet, COMPRESSION zstd)")
        n_events = _write_notice_events(con, previous, new.notice_events, gen_dir)
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    return Merged(works=n_works, works_before=before, notice_events=n_events)


def _new_works_sql(con: duckdb.DuckDBPyConnection, new: Extracted) -> str:
    """The extracted parts as one relation, each part's ``ingested_seq`` moved on by its offset."""
    con.register("no_works", WORKS_SCHEMA.empty_table())
    parts = [f"SELECT * REPLACE (ingested_seq + {int(offset)} AS ingested_seq) FROM read_parquet({sql_literal(p)})"
             for p, offset in new.parts]
    return " UNION ALL ".join(["SELECT * FROM no_works", *parts])


def index(gen_dir: Path) -> dict[str, Any]:
    """The fuzzy matcher's candidate index, built beside the works it indexes, and the notice
    step's files (``notice_files``)."""
    stats = blocking.build_index(gen_dir)
    notice_file.write(gen_dir)
    return stats


def publish(catalog_dir: Path, gen_dir: Path, previous: Generation, extracted: Extracted,
            merged: Merged, built_at: str) -> Published:
    """Write the manifest, move the complete generation into place, then swap ``CURRENT`` (the
    atomic step: a build killed before it leaves the previous generation live). Then drop old
    generations, keeping the previous one (a reader that read the old pointer a moment ago still
    finds its files) and every one an unfinished run is pinned to."""
    fingerprint = "sha256:" + hashlib.sha256(
        (file_sha256(gen_dir / "works.parquet") + file_sha256(gen_dir / "notice_events.parquet")).encode()).hexdigest()
    notice_sources: dict[str, str] = dict(previous.manifest.get("notice_sources", {}))
    notice_sources.update({e["source"]: built_at for e in extracted.notice_events})
    manifest = {
        "generation": gen_dir.name, "generation_no": int(previous.manifest.get("generation_no", 0)) + 1,
        "built_at": built_at, "notice_sources": notice_sources,
        "fingerprint": fingerprint, "works": merged.works, "notice_events": merged.notice_events,
        "ingested_seq": extracted.ingested_seq, "builds": previous.manifest.get("builds", []) + [extracted.files],
    }
    atomic_write_bytes(gen_dir / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True).encode())
    publish_dir(gen_dir, catalog_dir / gen_dir.name)
    _swap_current(catalog_dir, gen_dir.name)
    keep = {gen_dir.name, previous.dir.name if previous.dir else None, *pinned_generations(catalog_dir)}
    for old in catalog_dir.glob("gen-*"):
        if old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)
    return Published(gen_dir.name, fingerprint, manifest)


def _swap_current(catalog_dir: Path, generation: str) -> None:
    """Point ``CURRENT`` at ``generation``: the one write that makes a build live."""
    atomic_write_bytes(CatalogPlaces.of(catalog_dir).current, generation.encode())


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
    return scalar(con, f"SELECT count(*) FROM read_parquet({sql_literal(out)})")


def duckdb_name(column: str) -> str:
    """A column name as a quoted SQL identifier."""
    return '"' + column.replace('"', '""') + '"'


def dict_rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


class ParquetCatalog:
    """``CatalogLookup`` over a built catalog folder: identifier lookups on memory-mapped files
    (``blocking.IdentifierIndex``); other reads (work rows by id, new works, notice events) in
    DuckDB, each call on its own cursor, so tasks in several threads can share one catalog.

    Each lookup file is opened when first asked for (the identifier index, the works' row files,
    the venue locators, the notice files): a reader of records or of a site opens no locator or
    notice file it never reads.
    """

    def __init__(self, directory: CatalogDir, generation: str | Path | None = None):
        """The catalog's live generation, or the one named (a run resolves every batch against the
        generation it was planned on, whatever builds happen meanwhile)."""
        self.store = CatalogStore(directory)
        gen = self.store.current() if generation is None else self.store.dir / Path(generation).name
        if gen is None:
            raise ConfigError(f"no catalog in {directory}: run "
                              f"`citeledger catalog build --catalog {directory} FILE...`")
        if not (gen / "manifest.json").exists():
            raise ConfigError(f"catalog generation {gen} is gone (a later build replaced it); "
                              "re-run with a new run id")
        self.generation_dir = gen
        self.manifest = json.loads((gen / "manifest.json").read_text())
        self._con = duckdb.connect()
        self._lock = threading.Lock()
        self._con.execute(f"CREATE VIEW works AS SELECT * FROM read_parquet({sql_literal(gen / 'works.parquet')})")
        blocking.require_current(gen)  # reads only: a run's plan brings an older index up to date
        self._stamp = blocking.index_stamp(gen)  # the files below were made for this works.parquet
        self._opened: dict[str, Any] = {}

    def _part(self, name: str) -> Any:
        """A lookup file of the generation, opened on first use (once: the threads of a run share it)."""
        if name not in self._opened:
            with self._lock:
                if name not in self._opened:
                    self._opened[name] = self._open(name)
        return self._opened[name]

    def _open(self, name: str) -> Any:
        gen = self.generation_dir
        if name == "identifiers":
            return blocking.IdentifierIndex(gen)
        if name == "works":
            return WorkReader(gen, self._stamp)  # positional reads of the row files
        if name == "locators":
            return venue_index.load(gen, blocking.map_ipc, venue_index.pages_current(gen, self._stamp))
        return notice_file.open_current(gen, self._stamp)  # None for a generation made without them

    @staticmethod
    def generation_of(directory: CatalogDir) -> Path | None:
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
        """Works by identifier through the memory-mapped lookup (``blocking.IdentifierIndex``):
        a binary search per value, no query engine, no per-identifier heap."""
        rows = self._part("identifiers").lookup(scheme, values)
        works = self._part("works").works(sorted(set(rows.values())))
        release_if_over()
        return {value: works[row] for value, row in rows.items()}

    def works_by_doi(self, dois: Sequence[str]) -> dict[str, Work]:
        return self._lookup("doi", dois)

    def works_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, Work]:
        return self._lookup("arxiv", arxiv_ids)

    def works_by_locator(self, keys: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], list[Work]]:
        """Works by (venue key, volume, first page) through the memory-mapped locator file."""
        found = venue_index.lookup(self._part("locators"), self._part("works").works, keys)
        release_if_over()
        return found

    def works_at_volume_page(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, Work]]]:
        found = venue_index.lookup_volume_page(self._part("locators"), self._part("works").works, pairs)
        release_if_over()
        return found

    def works_by_id(self, work_ids: Sequence[str]) -> dict[str, Work]:
        return {work_id: work_from_row(rec) for work_id, rec in self.work_rows(work_ids).items()}

    def work_rows(self, work_ids: Sequence[str], columns: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Catalog rows (every column, relations and sources included; or only ``columns``, and
        the work id) by work id. A run's notice step asks for the few columns it reads: turning
        every column of thousands of rows into dicts was most of its time."""
        ids = sorted(set(work_ids))
        if not ids:
            return {}
        if columns is None:
            wanted = "w.* EXCLUDE (precedence, ingested_seq)"
        else:  # (a column an older catalog lacks is left out, as ``SELECT *`` would)
            have = set(pq.read_schema(self.works_path).names)
            wanted = ", ".join(f"w.{duckdb_name(c)}" for c in ("work_id", *columns) if c in have)
        with self._cursor() as cur:
            strings_table(cur, "wanted", "work_id", ids)
            cur.execute(f"SELECT {wanted} FROM works w JOIN wanted USING (work_id)")
            return {rec["work_id"]: rec for rec in dict_rows(cur)}

    def notice_rows(self, work_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The notice step's columns (``notice_files.NOTICE_COLUMNS``) of works by id: by row from
        the notice files, or (a generation they could not be written for) from works.parquet."""
        notices = self._part("notices")
        if notices is None:
            return self.work_rows(work_ids, notice_file.NOTICE_COLUMNS)
        found = notice_file.notice_rows(notices, work_ids,
                                        lambda ids: self.work_rows(ids, notice_file.NOTICE_COLUMNS))
        release_if_over()
        return found

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
            return dict_rows(cur)

    def notice_events(self) -> list[dict[str, Any]]:
        """Every notice event the catalog's notice sources hold (Retraction Watch files)."""
        with self._cursor() as cur:
            cur.execute(f"SELECT * FROM read_parquet({sql_literal(self.generation_dir / 'notice_events.parquet')})")
            return dict_rows(cur)

    def close(self) -> None:
        self._con.close()
