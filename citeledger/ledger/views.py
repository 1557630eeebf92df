"""The ledger's views as plain data: each kind of part file with its folder and its columns (DuckDB
types), the views over other views, and what makes a folder a ledger. ``ledger_store`` builds the Arrow
schemas it writes from these columns; ``query`` and ``ledger.duckdb`` build their views from them.
Nothing here imports pyarrow or DuckDB, so a read-only command starts without the writer's modules."""
from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any

from resolvers.errors import ConfigError

Columns = tuple[tuple[str, str], ...]  # (name, DuckDB type) in file order

OBSERVATION_COLUMNS: Columns = (
    ("observation_id", "VARCHAR"), ("observation_digest", "VARCHAR"), ("run_id", "VARCHAR"),
    ("observed_at", "TIMESTAMPTZ"), ("citing_paper", "VARCHAR"), ("reference_index", "BIGINT"),
    ("raw", "VARCHAR"), ("source", "VARCHAR"), ("status", "VARCHAR"), ("reason", "VARCHAR"),
    ("resolver_source", "VARCHAR"), ("work_id", "VARCHAR"), ("doi", "VARCHAR"), ("arxiv_id", "VARCHAR"),
    ("extracted_dois", "VARCHAR[]"), ("extracted_arxiv_ids", "VARCHAR[]"), ("score", "DOUBLE"),
    ("evidence", "VARCHAR"),
)

# Rows read from Pith's records (``citeledger import-pith``): the observation columns, Pith's own
# (``pith.pith_reader.PITH_COLUMNS``: times Pith states are kept as Pith wrote them, the observation whole
# as its RFC 8785 text), and which file they came from, when. Apart from ``observations``, so Pith's
# verdicts never take the place of citeledger's in ``current``.
PITH_OWN_COLUMNS: Columns = (
    ("direction", "VARCHAR"), ("pith_status", "VARCHAR"), ("state_mapping", "VARCHAR"),
    ("digest_verified", "BOOLEAN"), ("reference_source", "VARCHAR"), ("cited_title", "VARCHAR"),
    ("notice_state", "VARCHAR"), ("notice_reason", "VARCHAR"), ("record_digest", "VARCHAR"),
    ("source_observed_at", "VARCHAR"), ("citing_title", "VARCHAR"), ("citing_version", "BIGINT"),
    ("cited_paper", "VARCHAR"), ("notice_sources", "VARCHAR[]"), ("notice_observed_at", "VARCHAR"),
    ("stored_as", "VARCHAR"), ("observation_json", "VARCHAR"),
)
PITH_OBSERVATION_COLUMNS: Columns = OBSERVATION_COLUMNS + PITH_OWN_COLUMNS + (
    ("record_digest_verified", "BOOLEAN"), ("imported_from", "VARCHAR"), ("imported_at", "TIMESTAMPTZ"))

# One row per Pith record kept (``<ledger>/pith_records/<stored_as>.parquet``, written after its
# observations: its presence says the import of that record finished): what the record is, of
# which paper, as of when, and the record whole (``document``: its RFC 8785 text, which
# ``record ID --format pith`` gives back).
PITH_RECORD_COLUMNS: Columns = (
    ("stored_as", "VARCHAR"), ("kind", "VARCHAR"), ("record_digest", "VARCHAR"), ("arxiv_id", "VARCHAR"),
    ("pith_number", "VARCHAR"), ("short_pith_number", "VARCHAR"), ("title", "VARCHAR"), ("as_of", "VARCHAR"),
    ("as_of_at", "TIMESTAMPTZ"), ("outbound", "BIGINT"), ("inbound", "BIGINT"), ("signed", "BOOLEAN"),
    ("receipt_key_id", "VARCHAR"), ("receipt_verified", "BOOLEAN"), ("imported_from", "VARCHAR"),
    ("imported_at", "TIMESTAMPTZ"), ("document", "VARCHAR"),
)

REJECT_COLUMNS: Columns = (
    ("run_id", "VARCHAR"), ("file", "VARCHAR"), ("line", "BIGINT"), ("field", "VARCHAR"), ("reason", "VARCHAR"),
    ("excerpt", "VARCHAR"),
)

# a citing paper's own title, as a run read it from the paper's source (``papers.titles``)
TITLE_COLUMNS: Columns = (
    ("run_id", "VARCHAR"), ("citing_paper", "VARCHAR"), ("title", "VARCHAR"), ("title_source", "VARCHAR"),
    ("file", "VARCHAR"), ("observed_at", "TIMESTAMPTZ"),
)

NOTICE_COLUMNS: Columns = (
    ("run_id", "VARCHAR"), ("work_id", "VARCHAR"), ("doi", "VARCHAR"), ("state", "VARCHAR"), ("reason", "VARCHAR"),
    ("standing", "VARCHAR"), ("events", "VARCHAR"), ("sources_checked", "VARCHAR[]"),
    ("checked_at", "TIMESTAMPTZ"),
)

RUN_COLUMNS: Columns = (
    ("run_id", "VARCHAR"), ("started_at", "TIMESTAMPTZ"), ("finished_at", "TIMESTAMPTZ"), ("inputs", "VARCHAR[]"),
    ("catalog_fingerprint", "VARCHAR"), ("references", "BIGINT"), ("rejects", "BIGINT"),
    ("state_counts", "VARCHAR"), ("seconds", "DOUBLE"), ("errors", "VARCHAR"),
    # later columns (older run files lack them; the views read them with union_by_name)
    ("trigger", "VARCHAR"),  # resolve | nightly
    ("catalog_seq", "BIGINT"),  # the catalog's ingested_seq when the run resolved: works above it are newer
    ("transitions", "BIGINT"),  # state or work changes this run recorded (see the transitions view)
    ("notices_changed", "BIGINT"),  # notices re-checked by this run that differ from the previous ones
    ("timings", "VARCHAR"),  # JSON: seconds per step
    ("reason_counts", "VARCHAR"),  # JSON: the rules' reasons -> count (older rows lack it)
    ("reference_changes", "BIGINT"),  # known references this run read with another raw string
    ("flow_run_id", "VARCHAR"),  # the Prefect flow run that ran it; null for a direct run (older rows lack it)
    ("remote", "VARCHAR"),  # JSON: the circuits that opened, requests refused, the run's remote time (or null)
)

# the views over part files: name -> (folder under the ledger, columns of its files)
LEDGER_PARTS: dict[str, tuple[str, Columns]] = {
    "observations": ("observations", OBSERVATION_COLUMNS), "rejects": ("rejects", REJECT_COLUMNS),
    "runs": ("runs", RUN_COLUMNS), "notices_history": ("notices", NOTICE_COLUMNS),
    "pith_observations": ("pith", PITH_OBSERVATION_COLUMNS), "pith_records": ("pith_records", PITH_RECORD_COLUMNS),
    "paper_titles": ("titles", TITLE_COLUMNS)}

VIEW_NAMES = ("observations", "current", "transitions", "reference_changes", "works", "notices", "notices_history",
              "rejects", "runs", "pith_observations", "pith_records", "paper_titles")

# A state change of one reference between two consecutive observations of it (same order as
# ``current``): a new status, or the same status now pointing at another work. ``changed_at`` is
# the later observation's time (``at`` is a reserved word in DuckDB 2). ``{source}``: the observations,
# or (a run's own counts, ``ledger.reads.run_changes``) the observations of the references it read.
TRANSITIONS_OVER = """
SELECT citing_paper, reference_index, from_status, to_status, from_work_id, to_work_id, from_run, to_run, changed_at
FROM (SELECT citing_paper, reference_index,
             lag(status) OVER w AS from_status, status AS to_status,
             lag(work_id) OVER w AS from_work_id, work_id AS to_work_id,
             lag(run_id) OVER w AS from_run, run_id AS to_run, observed_at AS changed_at
      FROM {source}
      WINDOW w AS (PARTITION BY citing_paper, reference_index ORDER BY observed_at, run_id))
WHERE from_run IS NOT NULL
  AND (from_status IS DISTINCT FROM to_status OR from_work_id IS DISTINCT FROM to_work_id)"""
TRANSITIONS_SQL = TRANSITIONS_OVER.format(source="observations")
CURRENT_SQL = ("SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER (PARTITION BY citing_paper, "
               "reference_index ORDER BY observed_at DESC, run_id DESC) AS rn FROM observations) WHERE rn = 1")
NOTICES_SQL = ("SELECT * EXCLUDE (rn) FROM (SELECT *, row_number() OVER (PARTITION BY work_id "
               "ORDER BY checked_at DESC, run_id DESC) AS rn FROM notices_history) WHERE rn = 1")
# a known reference (citing_paper, reference_index) that a later run read with another raw string
REFERENCE_CHANGES_OVER = """
SELECT citing_paper, reference_index, old_raw, new_raw, from_run, to_run, changed_at
FROM (SELECT citing_paper, reference_index, lag(raw) OVER w AS old_raw, raw AS new_raw,
             lag(run_id) OVER w AS from_run, run_id AS to_run, observed_at AS changed_at
      FROM {source}
      WINDOW w AS (PARTITION BY citing_paper, reference_index ORDER BY observed_at, run_id))
WHERE from_run IS NOT NULL AND old_raw IS DISTINCT FROM new_raw"""
REFERENCE_CHANGES_SQL = REFERENCE_CHANGES_OVER.format(source="observations")
# the views over other views, in an order in which each one's sources exist before it
DERIVED_VIEWS = {"current": CURRENT_SQL, "transitions": TRANSITIONS_SQL, "notices": NOTICES_SQL,
                 "reference_changes": REFERENCE_CHANGES_SQL}
WORKS_HIDDEN = ("precedence", "ingested_seq")  # columns of works.parquet the works view leaves out

# what a run or an import leaves
LEDGER_MARKS = ("_runs", "observations", "runs", "ledger.duckdb", "pith", "pith_records")


# the views that read each base view's parts (a query naming one of them reads those parts)
READ_BY = {"observations": ("observations", "current", "transitions", "reference_changes"),
           "notices_history": ("notices_history", "notices")}


def arrow_schema(columns: Columns) -> Any:
    """The Arrow schema of these columns (pyarrow is loaded here, by the writer or a big query only)."""
    import pyarrow as pa

    types = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(),
             "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"), "VARCHAR[]": pa.list_(pa.string())}
    return pa.schema([(name, types[kind]) for name, kind in columns])


def empty_select(columns: Columns) -> str:
    """A relation of these columns and no row (a kind of part file the ledger has none of yet)."""
    return "SELECT " + ", ".join(f'NULL::{kind} AS "{name}"' for name, kind in columns) + " WHERE false"


def columns_select(present: set[str], columns: Columns) -> str:
    """The select list giving every column in file order: a column no file has yet (an older ledger) is null."""
    return ", ".join(f'"{name}"' if name in present else f'NULL::{kind} AS "{name}"' for name, kind in columns)


def ledger_problem(directory: str | PathLike[str]) -> str | None:
    """Why ``directory`` is not a ledger (a mistyped ``--ledger`` must not read as an empty one), or None."""
    path = Path(directory)
    if path.is_dir() and any((path / mark).exists() for mark in LEDGER_MARKS):
        return None
    what = "is a file" if path.exists() and not path.is_dir() else \
        "does not exist" if not path.exists() else "holds no ledger (no observations/, runs/ or ledger.duckdb)"
    return (f"ledger {path} {what}: give --ledger (or the `ledger` setting, CITELEDGER_LEDGER) the folder "
            "`citeledger resolve` wrote")


def require_ledger(directory: str | PathLike[str]) -> Path:
    """The folder, or a ConfigError saying why it is not a ledger."""
    problem = ledger_problem(directory)
    if problem:
        raise ConfigError(problem)
    return Path(directory)
