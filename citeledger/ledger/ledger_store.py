"""The ledger: observations, rejects, notices and runs as Parquet part files, the run manifests,
the views over them (for ``citeledger query``, ``ledger.duckdb`` and the records), and the
queries the pipeline asks of them.

A batch is staged in ``<ledger>/.staging`` and renamed into place; its observations file is
written last and is the batch's completion mark, so a re-run of the same run id skips exactly the
batches that finished.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from citeledger.app_errors import LedgerPathError
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.ledger.views import (
    DERIVED_VIEWS,
    NOTICE_COLUMNS,
    OBSERVATION_COLUMNS,
    PITH_OBSERVATION_COLUMNS,
    PITH_RECORD_COLUMNS,
    READ_BY,
    REJECT_COLUMNS,
    RUN_COLUMNS,
    TITLE_COLUMNS,
    WORKS_HIDDEN,
    arrow_schema,
)
from citeledger.ledger.views import LEDGER_PARTS as VIEW_PARTS
from citeledger.options import check_run_id
from citeledger.storage.atomic import (
    SyncedBatches,
    atomic_write_bytes,
    atomic_write_files,
    disk_errors,
    remove_leftovers,
    staged,
    write_arrow_parquet,
    write_parquet,
)
from citeledger.storage.places import CatalogDir, LedgerDir, LedgerPlaces
from citeledger.storage.sql import process_connection, sql_literal
from citeledger.works.row_schema import VERSION_TYPE, WORKS_SCHEMA
from resolvers.errors import ConfigError

OBSERVATION_SCHEMA = arrow_schema(OBSERVATION_COLUMNS)
PITH_OBSERVATION_SCHEMA = arrow_schema(PITH_OBSERVATION_COLUMNS)
REJECT_SCHEMA = arrow_schema(REJECT_COLUMNS)
NOTICE_SCHEMA = arrow_schema(NOTICE_COLUMNS)
RUN_SCHEMA = arrow_schema(RUN_COLUMNS)
PITH_RECORD_SCHEMA = arrow_schema(PITH_RECORD_COLUMNS)
TITLE_SCHEMA = arrow_schema(TITLE_COLUMNS)


def check_ledger_dir(ledger_dir: LedgerDir, write: bool = True) -> Path:
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


FAILED_PART = "failed"  # runs/<run_id>/failed.parquet: the row of a run whose last attempt failed


class LedgerStore:
    """A ledger folder: observations, rejects, runs and notices as Parquet part files.

    The one object a run carries its ledger as, from the flow or the command down to each batch
    (``LedgerStore.of`` takes it as it is, or a path once); a path-like of its folder, so a function
    that takes a ledger folder takes it too."""

    def __init__(self, directory: LedgerDir):
        self.places = LedgerPlaces.of(directory)
        self.dir = self.places.root
        self.staging = self.places.staging

    @classmethod
    def of(cls, ledger: LedgerStore | LedgerDir) -> LedgerStore:
        return ledger if isinstance(ledger, LedgerStore) else cls(ledger)

    def __fspath__(self) -> str:
        return str(self.dir)

    def __str__(self) -> str:
        return str(self.dir)

    def __repr__(self) -> str:
        return f"LedgerStore({str(self.dir)!r})"

    def _run_dir(self, kind: str, run_id: str) -> Path:
        return self.places.parts(kind, run_id)

    def begin_run(self, run_id: str, inputs: list[dict[str, Any]], catalog_fingerprint: str,
                  options: dict[str, Any]) -> tuple[RunManifest, bool]:
        """Start a run, or pick up an interrupted one with the same id. Returns (manifest, resumed).

        A resumed run keeps its first start time, so its rows equal an uninterrupted run's.
        """
        # half-written files of a killed writer; only called under the ledger lock (locking.py)
        shutil.rmtree(self.staging, ignore_errors=True)
        remove_leftovers(self.dir)  # a killed ledger.duckdb write
        self.remove_record_leftovers()  # a killed records writer
        path = self.places.manifest(run_id)
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

    def write_titles(self, run_id: str, rows: list[dict[str, Any]]) -> None:
        """The titles the run read from its papers' own sources (``titles/<run>/titles.parquet``; read by
        ``ledger.reads.paper_titles``): written when the run is planned, again when it is resumed."""
        if rows:
            write_parquet(pa.Table.from_pylist(rows, schema=TITLE_SCHEMA), self.part_path("titles", run_id, "titles"),
                          self.staging)

    def write_rejects(self, run_id: str, part: str, rejects: list[dict[str, Any]]) -> None:
        if rejects:
            write_parquet(pa.Table.from_pylist(rejects, schema=REJECT_SCHEMA),
                          self.part_path("rejects", run_id, part), self.staging)

    def write_observations(self, run_id: str, part: str, rows: list[dict[str, Any]]) -> None:
        """Written last for a batch: its presence marks the batch complete."""
        self._write_observation_table(run_id, part, pa.Table.from_pylist(rows, schema=OBSERVATION_SCHEMA))

    def write_observation_columns(self, run_id: str, part: str, columns: dict[str, list[Any]]) -> None:
        """``write_observations`` given the rows as columns (``observation.observation_columns``):
        the table is built column by column, not from a dict per row."""
        table = pa.table([pa.array(columns[f.name], f.type) for f in OBSERVATION_SCHEMA], schema=OBSERVATION_SCHEMA)
        self._write_observation_table(run_id, part, table)

    def _write_observation_table(self, run_id: str, part: str, table: pa.Table) -> None:
        """Every observation part by one writer (Arrow's), however its rows were given."""
        write_arrow_parquet(table, self.part_path("observations", run_id, part), self.staging)

    def write_pith_record(self, stored_as: str, record: pa.Table, rows: pa.Table | None) -> Path:
        """One Pith record kept: its observations under ``pith/`` then its row under ``pith_records/``,
        both named by ``stored_as`` (the hex SHA-256 of the record's RFC 8785 bytes, which the caller
        computed from the content: a name a file states is never used). The same record imported
        again is the same bytes under the same names; another record never replaces it."""
        if not re.fullmatch(r"[0-9a-f]{64}", stored_as):
            raise ValueError(f"bad Pith record name {stored_as!r}")
        rows_path = self.dir / "pith" / f"{stored_as}.parquet"
        if rows is not None and rows.num_rows:
            write_arrow_parquet(rows.cast(PITH_OBSERVATION_SCHEMA), rows_path, self.staging)
        path = self.dir / "pith_records" / f"{stored_as}.parquet"
        write_arrow_parquet(record.cast(PITH_RECORD_SCHEMA), path, self.staging)
        return path

    def write_fetched_works(self, run_id: str, part: str, rows: list[dict[str, Any]]) -> None:
        """Works fetched by remote resolvers, as works JSONL, for the catalog to take in."""
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
        atomic_write_bytes(self._run_dir("fetched", run_id) / f"{part}.jsonl", text.encode())

    def record_batches(self) -> SyncedBatches:
        """Record batches whose disk syncs run while the writer builds the next (``write_records_batch``)."""
        return SyncedBatches()

    def write_records_batch(self, pages: Sequence[tuple[str, dict[str, bytes]]],
                            batches: SyncedBatches | None = None) -> list[Path]:
        """Several papers' record files (each: stem, suffix -> bytes) written in one batch, with
        one disk sync for the batch (``atomic_write_files``), or handed to ``batches`` (published
        at its next batch or its close, the sync run meanwhile); returns the JSON files' paths."""
        out = self.places.records
        folder = os.fspath(out)  # names as text: a Path a file cost more than its system calls
        files = [(f"{folder}/{stem}.{suffix}", data) for stem, files in pages for suffix, data in files.items()]
        if batches is None:
            atomic_write_files(files)
        else:
            batches.add(files)
        return [out / f"{stem}.json" for stem, _ in pages]

    def write_pith_records(self, records: Sequence[tuple[str, bytes]]) -> list[Path]:
        """Pith-shaped records (each: file stem, bytes) under ``records/pith/``, in one batch."""
        folder = self.dir / "records" / "pith"
        files = [(folder / f"{stem}.json", data) for stem, data in records]
        atomic_write_files(files)
        return [path for path, _ in files]

    def write_signing_key(self, key_id: str, public_doc: bytes, private_pem: bytes, retire: str | None) -> None:
        """A new ed25519 key pair under ``keys/`` (the private key 0600 from its first byte: the
        staged temp is private too), then ``ACTIVE`` names it; the retired key's private half goes,
        its public half stays (records it signed must still verify)."""
        keys = self.places.keys
        stem = key_id.replace(":", "-")
        atomic_write_bytes(keys / f"{stem}.pub.json", public_doc)
        atomic_write_bytes(keys / f"{stem}.private.pem", private_pem, mode=0o600)
        atomic_write_bytes(self.places.active_key, (key_id + "\n").encode())
        if retire and retire != key_id:
            (keys / f"{retire.replace(':', '-')}.private.pem").unlink(missing_ok=True)

    def remove_record_leftovers(self) -> int:
        """Staged record files a killed writer left (only under the ledger's writer lock)."""
        return remove_leftovers(self.places.records)

    def write_rerun_input(self, run_id: str, rows: list[dict[str, Any]], suffix: str = "") -> Path:
        """A nightly run's re-resolved references as its JSONL input under ``_rerun/`` (``suffix``
        ``-retry``: those a remote service could not answer, which may be searched again)."""
        path = self.dir / "_rerun" / f"{check_run_id(run_id)}{suffix}.jsonl"
        atomic_write_bytes(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode())
        return path

    def fetched_work_files(self, run_id: str) -> list[Path]:
        return sorted(self._run_dir("fetched", run_id).glob("*.jsonl"))

    def write_notices(self, run_id: str, rows: list[dict[str, Any]], part: str = "notices") -> None:
        write_parquet(pa.Table.from_pylist(rows, schema=NOTICE_SCHEMA),
                      self.part_path("notices", run_id, part), self.staging)

    def unfinished_runs(self, prefix: str = "") -> list[RunManifest]:
        """Runs begun but never finished (no runs row), oldest first: candidates to resume."""
        out = []
        for path in sorted(self.places.manifests.glob(f"{prefix}*/manifest.json")):
            if not self.run_finished(path.parent.name):
                out.append(RunManifest(**json.loads(path.read_text())))
        return sorted(out, key=lambda m: m.started_at)

    def linked_work_ids(self, run_id: str) -> list[str]:
        """Every work a reference of this run links to (the works whose notices it checks)."""
        glob = self._run_dir("observations", run_id) / "*.parquet"
        if not any(glob.parent.glob("*.parquet")):
            return []
        con = process_connection()
        try:
            return [r[0] for r in con.execute(f"SELECT DISTINCT work_id FROM read_parquet({sql_literal(glob)}) "
                                              "WHERE work_id IS NOT NULL ORDER BY 1").fetchall()]
        finally:
            con.close()

    def unlinked_cited_dois(self, run_id: str) -> list[str]:
        """Every DOI a reference of this run cites that names no catalog work (the reference has
        no work): its notice is checked by DOI alone (``notice_check.cited_doi_notice_rows``)."""
        glob = self._run_dir("observations", run_id) / "*.parquet"
        if not any(glob.parent.glob("*.parquet")):
            return []
        con = process_connection()
        try:
            return [r[0] for r in con.execute(
                f"SELECT DISTINCT unnest(extracted_dois) AS doi FROM read_parquet({sql_literal(glob)}) "
                "WHERE work_id IS NULL ORDER BY 1").fetchall() if r[0]]
        finally:
            con.close()

    def finish_run(self, row: dict[str, Any]) -> None:
        # a failure of an earlier attempt goes first: a crash between the two leaves an unfinished run
        self.part_path("runs", row["run_id"], FAILED_PART).unlink(missing_ok=True)
        write_parquet(pa.Table.from_pylist([row], schema=RUN_SCHEMA),
                      self.part_path("runs", row["run_id"], "run"), self.staging)

    def record_failure(self, row: dict[str, Any]) -> None:
        """A failed attempt at a run, as its row in ``runs`` (``finished_at`` null, ``errors`` the
        failure): not a finished run, so the run is still resumed, and finishing it removes the row."""
        if self.run_finished(row["run_id"]):
            return
        write_parquet(pa.Table.from_pylist([row], schema=RUN_SCHEMA),
                      self.part_path("runs", row["run_id"], FAILED_PART), self.staging)

    def run_failure(self, run_id: str) -> dict[str, Any] | None:
        """The row ``record_failure`` wrote for a run that is still unfinished, if any."""
        path = self.part_path("runs", run_id, FAILED_PART)
        if not path.exists():
            return None
        return pq.read_table(path).to_pylist()[0]

    def run_finished(self, run_id: str) -> bool:
        """Whether the run's row is written: the last of its finishing steps (``run.finishing.close_run``)."""
        return self.part_path("runs", run_id, "run").exists()

    def known_run(self, run_id: str) -> bool:
        """A run this ledger has begun (finished or not)."""
        return self.places.manifest(run_id).exists() or self.run_finished(run_id)

    def read_run_counts(self, run_id: str, column: str = "status") -> dict[str, int]:
        """The run's observations counted by ``status`` or by ``reason``."""
        if column not in ("status", "reason"):
            raise ValueError(f"read_run_counts: no count by {column!r}")
        glob = self._run_dir("observations", run_id) / "*.parquet"
        con = process_connection()
        try:
            sql = f"SELECT {column}, count(*) FROM read_parquet({sql_literal(glob)}) GROUP BY 1"
            return dict(con.execute(sql).fetchall())
        finally:
            con.close()


# --- views and queries ---------------------------------------------------------------------

def _empty_select(schema: pa.Schema) -> str:
    duck = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE",
            pa.bool_(): "BOOLEAN", pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
            pa.list_(pa.string()): "VARCHAR[]", pa.list_(VERSION_TYPE): "STRUCT(version VARCHAR, created VARCHAR)[]"}
    cols = ", ".join(f"NULL::{duck[f.type]} AS {f.name}" for f in schema)
    return f"SELECT {cols} WHERE false"


# In ``ledger.duckdb``, the folder holding the file as DuckDB knows it: a database file's temporary
# folder is ``<file>.tmp`` beside it unless set otherwise, so the views find their parts from any
# working directory and after the ledger folder is moved or copied; opened some other way (ATTACH'ed
# to another database, a temp_directory set by the user), the folder the file was written in.
_FILE_FOLDER = ("(CASE WHEN suffix(current_setting('temp_directory'), '.tmp') AND "
                "starts_with(parse_filename(current_setting('temp_directory')), current_database() || '.') "
                "THEN coalesce(nullif(parse_dirpath(current_setting('temp_directory')), ''), '.') ELSE {written} END)")


def _source(ledger: Path, folder: str, schema: pa.Schema, found: bool = False) -> str:
    """The part files of ``folder`` when there are any, else an empty relation of the right shape;
    ``found``: the ledger folder is where the database file is (``_FILE_FOLDER``)."""
    parts = ledger / folder
    if not (parts.exists() and any(parts.rglob("*.parquet"))):
        return _empty_select(schema)
    where = f"{_FILE_FOLDER.format(written=sql_literal(ledger))} || {sql_literal(f'/{folder}/**/*.parquet')}" \
        if found else sql_literal(parts / "**" / "*.parquet")
    return f"SELECT * FROM read_parquet({where}, union_by_name=true)"


# the views over part files: name -> (folder under the ledger, schema of its files)
LEDGER_PARTS = {name: (folder, arrow_schema(columns)) for name, (folder, columns) in VIEW_PARTS.items()}
WORKS_VIEW_SCHEMA = pa.schema([f for f in WORKS_SCHEMA if f.name not in WORKS_HIDDEN])


def view_definitions(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None,
                     found: bool = False) -> dict[str, str]:
    """SQL for every view of the contract over absolute paths, or (``found``, ``ledger.duckdb``) over
    the folder the database file is in, the catalog's works table by its path relative to that folder."""
    ledger = Path(ledger_dir).resolve()
    views = {name: _source(ledger, folder, schema, found) for name, (folder, schema) in LEDGER_PARTS.items()}
    works = works_file(catalog_dir)
    hidden = ", ".join(WORKS_HIDDEN)
    views["works"] = (f"SELECT * EXCLUDE ({hidden}) FROM read_parquet({_works_path(ledger, works, found)})"
                      if works is not None else _empty_select(WORKS_VIEW_SCHEMA))
    return views | DERIVED_VIEWS


def _works_path(ledger: Path, works: Path, found: bool) -> str:
    """The works table as SQL: its absolute path, or (``found``) its path from the folder the database
    file is in, so a ledger moved or copied together with its catalog still reads it."""
    if not found:
        return sql_literal(works)
    return f"{_FILE_FOLDER.format(written=sql_literal(ledger))} || {sql_literal('/' + os.path.relpath(works, ledger))}"


def works_file(catalog_dir: CatalogDir | None) -> Path | None:
    """The works table of the catalog's live generation (absolute), or None without a catalog."""
    gen = CatalogStore(catalog_dir).current() if catalog_dir else None
    return (gen / "works.parquet").resolve() if gen is not None else None


def connect_views(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None,
                  views: Sequence[str] | None = None) -> duckdb.DuckDBPyConnection:
    """A connection with the ledger's views, or (``views``) only those and the views they read:
    creating a view over part files reads the footer of each of them (``union_by_name``), and the
    observations are read by four views, so a reader that names its views spares the rest."""
    wanted = None if views is None else {*views, *(base for base, readers in READ_BY.items()
                                                     if any(v in readers for v in views))}
    con = process_connection()
    for name, sql in view_definitions(ledger_dir, catalog_dir).items():
        if wanted is None or name in wanted:
            con.execute(f"CREATE TEMP VIEW {name} AS {sql}")
    return con


def observations_holding(con: duckdb.DuckDBPyConnection, ledger_dir: LedgerDir, keys: str, name: str) -> None:
    """The temporary view ``name`` on ``con``: the ``observations`` view's rows, with its columns and
    types, of the part files holding an observation of a reference ``keys`` names (SQL giving
    ``citing_paper, reference_index``; it may read ``observation_files``, every observation part file
    with each row's ``filename``). The files are found over the key columns alone: reading every column
    of every part file costs about 1.4 ms a file, and a ledger gains files with every run, so a reader
    of some references' whole history reads only the files that hold it."""
    folder = LedgerPlaces.of(ledger_dir).root / "observations"
    if not any(folder.rglob("*.parquet")):
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS "
                    f"{_source(folder.parent, 'observations', LEDGER_PARTS['observations'][1])}")
        return
    con.execute("CREATE OR REPLACE TEMP VIEW observation_files AS SELECT * FROM read_parquet("
                f"{sql_literal(folder / '**' / '*.parquet')}, filename=true, union_by_name=true)")
    files = [r[0] for r in con.execute(f"SELECT DISTINCT o.filename FROM observation_files o SEMI JOIN ({keys}) "
                                       "USING (citing_paper, reference_index) ORDER BY 1").fetchall()]
    if not files:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * EXCLUDE (filename) FROM observation_files "
                    "WHERE false")
        return
    source = f"read_parquet([{', '.join(sql_literal(f) for f in files)}], union_by_name=true)"
    present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    described = con.execute("DESCRIBE SELECT * EXCLUDE (filename) FROM observation_files").fetchall()
    columns = ", ".join(f'CAST("{column}" AS {kind}) AS "{column}"' if column in present else
                        f'NULL::{kind} AS "{column}"' for column, kind, *_ in described)
    con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {columns} FROM {source}")


def write_ledger_database(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None, force: bool = False) -> Path:
    """``<ledger>/ledger.duckdb``: the views of ``citeledger query`` stored in a DuckDB file, for
    the duckdb shell and notebooks, opened by its path from any working directory
    (``duckdb data/ledger/ledger.duckdb``). The views read the part files of the folder the file is
    in, so a moved or copied ledger keeps working; the works view reads the catalog by its path from
    there (a ledger moved with its catalog, as ``data/`` copied whole, keeps it) and ``ledger_catalog``
    names it (``citeledger ledger relink`` points a ledger moved alone at its catalog again). The
    views are fixed when written: a later catalog generation or a kind of part file that did not
    exist yet appears once the file is written again, which every run asks for (a run writes it only
    when its views differ from those it holds, by their digest beside the run manifests; ``force``:
    always). Written beside, then renamed over the old file, so a reader never sees half a file."""
    ledger = Path(ledger_dir)
    ledger.mkdir(parents=True, exist_ok=True)
    places = LedgerPlaces.of(ledger)
    target, written = places.views, places.manifests / "ledger.duckdb.sha256"
    views = view_definitions(ledger, catalog_dir, found=True) | {"ledger_catalog": _catalog_row(ledger, catalog_dir)}
    digest = hashlib.sha256(json.dumps(views, sort_keys=True).encode()).hexdigest()
    if not force and target.is_file() and written.is_file() and written.read_text().strip() == digest:
        return target  # the same views as the file holds: nothing to write
    with disk_errors(target):
        _write_database_file(views, target)
        atomic_write_bytes(written, (digest + "\n").encode())
    return target


def _catalog_row(ledger: Path, catalog_dir: CatalogDir | None) -> str:
    """One row naming the catalog the works view reads: the folder it was written for, its generation,
    and the works file as the view finds it now (beside a moved ledger as the catalog was beside it)."""
    works = works_file(catalog_dir)
    if works is None:
        return (f"SELECT {sql_literal(str(catalog_dir or ''))} AS catalog, NULL::VARCHAR AS generation, "
                "NULL::VARCHAR AS works_file")
    return (f"SELECT {sql_literal(Path(str(catalog_dir)).resolve())} AS catalog, {sql_literal(works.parent.name)} "
            f"AS generation, {_works_path(ledger.resolve(), works, True)} AS works_file")


def _write_database_file(views: dict[str, str], target: Path) -> None:
    with staged(target) as tmp:
        tmp.unlink()  # duckdb creates the file itself
        try:
            # an older storage format, so older duckdb shells open it too
            con = duckdb.connect(str(tmp), config={"storage_compatibility_version": "v1.0.0"})
            try:
                for name, sql in views.items():  # (bound when created: the staged file is in the ledger)
                    con.execute(f"CREATE VIEW {name} AS {sql}")
                con.execute("CHECKPOINT")
            finally:
                con.close()
        finally:
            Path(f"{tmp}.wal").unlink(missing_ok=True)


