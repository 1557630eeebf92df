"""The ledger: observations, rejects, notices and runs as Parquet part files, the run manifests,
the views over them (for ``citeledger query``, ``ledger.duckdb`` and the records), and the
queries the pipeline asks of them.

A batch is staged in ``<ledger>/.staging`` and renamed into place; its observations file is
written last and is the batch's completion mark, so a re-run of the same run id skips exactly the
batches that finished.
"""
from __future__ import annotations

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

from citeledger.catalog.store import CatalogStore
from citeledger.options import check_run_id
from citeledger.pith import reader as pith_reader
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
from citeledger.storage.sql import sql_literal
from citeledger.works.row_schema import VERSION_TYPE, WORKS_SCHEMA
from resolvers.errors import ConfigError, LedgerPathError

OBSERVATION_SCHEMA = pa.schema([
    ("observation_id", pa.string()), ("observation_digest", pa.string()), ("run_id", pa.string()),
    ("observed_at", pa.timestamp("us", tz="UTC")), ("citing_paper", pa.string()),
    ("reference_index", pa.int64()), ("raw", pa.string()), ("source", pa.string()),
    ("status", pa.string()), ("reason", pa.string()), ("resolver_source", pa.string()),
    ("work_id", pa.string()), ("doi", pa.string()), ("arxiv_id", pa.string()),
    ("extracted_dois", pa.list_(pa.string())), ("extracted_arxiv_ids", pa.list_(pa.string())),
    ("score", pa.float64()), ("evidence", pa.string()),
])

# Rows read from Pith's records (``citeledger import-pith``): the observation columns, Pith's own
# (``pith.reader``: times Pith states are kept as Pith wrote them, the observation whole as its
# RFC 8785 text), and which file they came from, when. Apart from ``observations``, so Pith's
# verdicts never take the place of citeledger's in ``current``.
PITH_TYPES: dict[str, pa.DataType] = {
    "direction": pa.string(), "pith_status": pa.string(), "state_mapping": pa.string(),
    "digest_verified": pa.bool_(), "reference_source": pa.string(), "cited_title": pa.string(),
    "notice_state": pa.string(), "notice_reason": pa.string(), "record_digest": pa.string(),
    "source_observed_at": pa.string(), "citing_title": pa.string(), "citing_version": pa.int64(),
    "cited_paper": pa.string(), "notice_sources": pa.list_(pa.string()), "notice_observed_at": pa.string(),
    "stored_as": pa.string(), "observation_json": pa.string(),
}
PITH_OBSERVATION_SCHEMA = pa.schema(
    [OBSERVATION_SCHEMA.field(name) for name in pith_reader.LEDGER_COLUMNS]
    + [(name, PITH_TYPES[name]) for name in pith_reader.PITH_COLUMNS]
    + [("record_digest_verified", pa.bool_()), ("imported_from", pa.string()),
       ("imported_at", pa.timestamp("us", tz="UTC"))])

# One row per Pith record kept (``<ledger>/pith_records/<stored_as>.parquet``, written after its
# observations: its presence says the import of that record finished): what the record is, of
# which paper, as of when, and the record whole (``document``: its RFC 8785 text, which
# ``record ID --format pith`` gives back).
PITH_RECORD_SCHEMA = pa.schema([
    ("stored_as", pa.string()), ("kind", pa.string()), ("record_digest", pa.string()), ("arxiv_id", pa.string()),
    ("pith_number", pa.string()), ("short_pith_number", pa.string()), ("title", pa.string()),
    ("as_of", pa.string()), ("as_of_at", pa.timestamp("us", tz="UTC")), ("outbound", pa.int64()),
    ("inbound", pa.int64()), ("signed", pa.bool_()), ("receipt_key_id", pa.string()),
    ("receipt_verified", pa.bool_()), ("imported_from", pa.string()), ("imported_at", pa.timestamp("us", tz="UTC")),
    ("document", pa.string()),
])

REJECT_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("file", pa.string()), ("line", pa.int64()), ("field", pa.string()),
    ("reason", pa.string()), ("excerpt", pa.string()),
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
    ("reason_counts", pa.string()),  # JSON: the rules' reasons -> count (older rows lack it)
    ("reference_changes", pa.int64()),  # known references this run read with another raw string
    ("flow_run_id", pa.string()),  # the Prefect flow run that ran it; null for a direct run (older rows lack it)
])


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
# what a run or an import leaves
LEDGER_MARKS = ("_runs", "observations", "runs", "ledger.duckdb", "pith", "pith_records")


def ledger_problem(directory: LedgerDir) -> str | None:
    """Why ``directory`` is not a ledger (a mistyped ``--ledger`` must not read as an empty one), or None."""
    path = Path(directory)
    if path.is_dir() and any((path / mark).exists() for mark in LEDGER_MARKS):
        return None
    what = "is a file" if path.exists() and not path.is_dir() else \
        "does not exist" if not path.exists() else "holds no ledger (no observations/, runs/ or ledger.duckdb)"
    return f"ledger {path} {what}: give --ledger the folder `citeledger resolve` wrote"


def require_ledger(directory: LedgerDir) -> Path:
    problem = ledger_problem(directory)
    if problem:
        raise ConfigError(problem)
    return Path(directory)


class LedgerStore:
    """A ledger folder: observations, rejects, runs and notices as Parquet part files."""

    def __init__(self, directory: LedgerDir):
        self.places = LedgerPlaces.of(directory)
        self.dir = self.places.root
        self.staging = self.places.staging

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
        con = duckdb.connect()
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
        con = duckdb.connect()
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
        """Whether the run's row is written: the last of its finishing steps (``pipeline.finish_run``)."""
        return self.part_path("runs", run_id, "run").exists()

    def known_run(self, run_id: str) -> bool:
        """A run this ledger has begun (finished or not)."""
        return self.places.manifest(run_id).exists() or self.run_finished(run_id)

    def read_run_counts(self, run_id: str, column: str = "status") -> dict[str, int]:
        """The run's observations counted by ``status`` or by ``reason``."""
        if column not in ("status", "reason"):
            raise ValueError(f"read_run_counts: no count by {column!r}")
        glob = self._run_dir("observations", run_id) / "*.parquet"
        con = duckdb.connect()
        try:
            sql = f"SELECT {column}, count(*) FROM read_parquet({sql_literal(glob)}) GROUP BY 1"
            return dict(con.execute(sql).fetchall())
        finally:
            con.close()


# --- views and queries ---------------------------------------------------------------------

VIEW_NAMES = ("observations", "current", "transitions", "reference_changes", "works", "notices", "notices_history",
              "rejects", "runs", "pith_observations", "pith_records")

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
            pa.list_(pa.string()): "VARCHAR[]", pa.list_(VERSION_TYPE): "STRUCT(version VARCHAR, created VARCHAR)[]"}
    cols = ", ".join(f"NULL::{duck[f.type]} AS {f.name}" for f in schema)
    return f"SELECT {cols} WHERE false"


def _source(glob: Path, schema: pa.Schema, base: Path | None = None) -> str:
    """A parquet glob when files exist, else an empty relation of the right shape; the glob is
    written relative to ``base`` when given (``ledger.duckdb``)."""
    parent = Path(str(glob).split("*", 1)[0])
    if parent.exists() and any(parent.rglob("*.parquet")):
        shown = Path(os.path.relpath(glob, base)) if base is not None else glob
        return f"SELECT * FROM read_parquet({sql_literal(shown)}, union_by_name=true)"
    return _empty_select(schema)


# the views over part files: name -> (folder under the ledger, schema of its files)
LEDGER_PARTS = {"observations": ("observations", OBSERVATION_SCHEMA), "rejects": ("rejects", REJECT_SCHEMA),
                "runs": ("runs", RUN_SCHEMA), "notices_history": ("notices", NOTICE_SCHEMA),
                "pith_observations": ("pith", PITH_OBSERVATION_SCHEMA),
                "pith_records": ("pith_records", PITH_RECORD_SCHEMA)}
CURRENT_SQL = ("SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER (PARTITION BY citing_paper, "
               "reference_index ORDER BY observed_at DESC, run_id DESC) AS rn FROM observations) WHERE rn = 1")
NOTICES_SQL = ("SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER (PARTITION BY work_id "
               "ORDER BY checked_at DESC, run_id DESC) AS rn FROM notices_history) WHERE rn = 1")
# a known reference (citing_paper, reference_index) that a later run read with another raw string
REFERENCE_CHANGES_SQL = """
SELECT citing_paper, reference_index, old_raw, new_raw, from_run, to_run, changed_at
FROM (SELECT citing_paper, reference_index, lag(raw) OVER w AS old_raw, raw AS new_raw,
             lag(run_id) OVER w AS from_run, run_id AS to_run, observed_at AS changed_at
      FROM observations
      WINDOW w AS (PARTITION BY citing_paper, reference_index ORDER BY observed_at, run_id))
WHERE from_run IS NOT NULL AND old_raw IS DISTINCT FROM new_raw"""
# the views over other views, in an order in which each one's sources exist before it
DERIVED_VIEWS = {"current": CURRENT_SQL, "transitions": TRANSITIONS_SQL, "notices": NOTICES_SQL,
                 "reference_changes": REFERENCE_CHANGES_SQL}
WORKS_VIEW_SCHEMA = pa.schema([f for f in WORKS_SCHEMA if f.name not in ("precedence", "ingested_seq")])


def view_definitions(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None,
                     relative: bool = False) -> dict[str, str]:
    """SQL for every view of the contract, over absolute paths, or (``relative``) over paths
    relative to the ledger folder, which DuckDB resolves against its working directory or its
    ``file_search_path`` (``ledger.duckdb``: the folder can be copied or moved)."""
    ledger = Path(ledger_dir).resolve()
    base = ledger if relative else None
    views = {name: _source(ledger / folder / "**" / "*.parquet", schema, base)
             for name, (folder, schema) in LEDGER_PARTS.items()}
    gen = CatalogStore(catalog_dir).current() if catalog_dir else None
    if gen is not None:
        works = (gen / "works.parquet").resolve()
        shown = Path(os.path.relpath(works, base)) if base is not None else works
        views["works"] = f"SELECT * EXCLUDE (precedence, ingested_seq) FROM read_parquet({sql_literal(shown)})"
    else:
        views["works"] = _empty_select(WORKS_VIEW_SCHEMA)
    return views | DERIVED_VIEWS


def connect_views(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for name, sql in view_definitions(ledger_dir, catalog_dir).items():
        con.execute(f"CREATE VIEW {name} AS {sql}")
    return con


def write_ledger_database(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None) -> Path:
    """``<ledger>/ledger.duckdb``: the views of ``citeledger query`` stored in a DuckDB file, for
    the duckdb shell and notebooks. The views hold paths relative to the ledger folder, so a
    copied or moved ledger keeps working: DuckDB resolves them against the working directory
    (``cd LEDGER && duckdb ledger.duckdb``) or its ``file_search_path`` (``duckdb -cmd "SET
    file_search_path='LEDGER'" LEDGER/ledger.duckdb`` from elsewhere); the works view points at
    the catalog relative to the ledger. The views are fixed when written: a later catalog
    generation or a kind of part file that did not exist yet appears once the file is written
    again, which every run does. Written beside, then renamed over the old file, so a reader
    never sees half a file."""
    ledger = Path(ledger_dir)
    ledger.mkdir(parents=True, exist_ok=True)
    target = LedgerPlaces.of(ledger).views
    with disk_errors(target):
        _write_database_file(ledger, catalog_dir, target)
    return target


def _write_database_file(ledger: Path, catalog_dir: CatalogDir | None, target: Path) -> None:
    with staged(target) as tmp:
        tmp.unlink()  # duckdb creates the file itself
        try:
            # an older storage format, so the duckdb shell of the `duckdb-cli` package (1.5) opens it too
            con = duckdb.connect(str(tmp), config={"storage_compatibility_version": "v1.0.0"})
            try:
                folder = ledger.resolve()
                relative = "," not in str(folder)  # file_search_path is a comma-separated list
                if relative:  # the views are bound when created: find the relative paths from here
                    con.execute(f"SET file_search_path = {sql_literal(folder)}")
                for name, sql in view_definitions(ledger, catalog_dir, relative).items():
                    con.execute(f"CREATE VIEW {name} AS {sql}")
                con.execute("CHECKPOINT")
            finally:
                con.close()
        finally:
            Path(f"{tmp}.wal").unlink(missing_ok=True)


