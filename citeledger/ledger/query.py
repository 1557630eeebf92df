"""``citeledger query``: the user's SQL over the ledger's views, on a DuckDB connection that cannot write.

Why not DuckDB's own file sandbox: ``allowed_directories`` does not tell reading from writing, so
a folder a query may read is a folder ``EXPLAIN ANALYZE COPY ... TO`` may overwrite (EXPLAIN
ANALYZE executes its statement). Here DuckDB gets no file access at all: Python lists the part
files, each base view is a pyarrow dataset registered on the connection (pyarrow reads the
Parquet, DuckDB pushes projections and filters into the scan), and the connection has external
access off, no allowed directory, no temp directory (nothing spills to disk), no extension
loading, no Python replacement scans, and its configuration locked before the user's SQL runs.
``check_read_only`` (statement types) stays in front for a clear refusal; the connection is what
makes a write impossible.

A view over a ledger or catalog that is not there fails when read, naming the path: a mistyped
``--ledger`` must not look like an empty ledger, while a query of ``works`` alone needs no ledger.
"""
from __future__ import annotations

import contextlib
import io
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

from citeledger.catalog.store import CatalogStore
from citeledger.config import QueryLimits
from citeledger.display import visible_controls
from citeledger.ledger.store import DERIVED_VIEWS, LEDGER_PARTS, VIEW_NAMES, WORKS_VIEW_SCHEMA, ledger_problem
from citeledger.storage.places import CatalogDir, LedgerDir
from citeledger.storage.sql import sql_literal
from resolvers.errors import ConfigError, QueryFailed, QueryRefused

# --- the first line: statement types -------------------------------------------------------

_ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
_LEADING = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)  # blanks and comments
_EXPLAIN = re.compile(r"explain\s+(?:analy[sz]e\s+)?", re.I)


def check_read_only(sql: str) -> None:
    """Refuse anything but reading (delete, copy, attach, set...), also behind EXPLAIN ANALYZE."""
    statements = _statements(sql)
    if not statements:
        raise QueryRefused("empty query")
    for st in statements:
        _check_statement(st.type, st.query)


def _statements(sql: str) -> list:
    try:
        return duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"cannot parse query: {_one_line(exc)}") from None


def _check_statement(kind: duckdb.StatementType, text: str) -> None:
    leading = _LEADING.match(text)
    rest = text[leading.end():] if leading else text
    if kind == duckdb.StatementType.MULTI and re.match(r"(un)?pivot\b", rest, re.I):
        return  # a PIVOT without IN (...) is two statements inside DuckDB: an enum of the values, then the select
    if kind not in _ALLOWED:
        raise QueryRefused(f"only read-only queries are allowed; refused a {kind.name} statement")
    if kind == duckdb.StatementType.EXPLAIN:
        explained = _EXPLAIN.match(rest)
        inner = _statements(rest[explained.end():]) if explained else []
        if len(inner) != 1:
            raise QueryRefused("only EXPLAIN [ANALYZE] of one read-only query is allowed")
        _check_statement(inner[0].type, inner[0].query)


# --- the connection --------------------------------------------------------------------------

SANDBOX: dict[str, str | bool | int | float | list[str]] = {
           "enable_external_access": False, "autoload_known_extensions": False,
           "autoinstall_known_extensions": False, "allow_community_extensions": False,
           "temp_directory": "", "python_enable_replacements": False}


def catalog_problem(catalog_dir: CatalogDir | None) -> str | None:
    if catalog_dir is None:
        return "no catalog given: give --catalog the folder `citeledger catalog build` wrote"
    if CatalogStore(catalog_dir).current() is not None:
        return None
    return f"no catalog in {catalog_dir}: give --catalog the folder `citeledger catalog build` wrote"


def _add_view(con: duckdb.DuckDBPyConnection, name: str, schema: pa.Schema, files: list[Path] | None,
              problem: str | None) -> None:
    """``name`` over ``files`` read by pyarrow, or, when ``problem``, a view that fails with it when read."""
    if problem:
        con.register(f"{name}_missing", pa.Table.from_pylist([{}], schema=schema))
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}_missing WHERE error({sql_literal(problem)}) IS NULL")
        return
    con.register(f"{name}_parts", ds.dataset([str(f) for f in files or ()], schema=schema, format="parquet"))
    con.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}_parts")


def _part_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.parquet")) if folder.is_dir() else []


def sandbox(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None,
            limits: QueryLimits | None = None) -> tuple[duckdb.DuckDBPyConnection, list[str]]:
    """A connection holding the views and no way to touch a file; also the problems its views report."""
    limits = limits or QueryLimits()
    ledger = Path(ledger_dir)
    if ledger.exists() and not ledger.is_dir():
        raise ConfigError(ledger_problem(ledger))
    problems = [p for p in (ledger_problem(ledger), catalog_problem(catalog_dir)) if p]
    con = duckdb.connect(config=SANDBOX | {"memory_limit": limits.memory_limit})
    try:
        for name, (folder, schema) in LEDGER_PARTS.items():
            _add_view(con, name, schema, _part_files(ledger / folder), ledger_problem(ledger))
        gen = CatalogStore(catalog_dir).current() if catalog_dir is not None else None
        works = [gen / "works.parquet"] if gen else None
        _add_view(con, "works", WORKS_VIEW_SCHEMA, works, catalog_problem(catalog_dir))
        for name, sql in DERIVED_VIEWS.items():
            con.execute(f"CREATE VIEW {name} AS {sql}")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con, problems


def run_query(sql: str, ledger_dir: LedgerDir, catalog_dir: CatalogDir | None,
              limits: QueryLimits | None = None) -> duckdb.DuckDBPyRelation:
    """The user's SQL as a relation on its sandbox (no time limit: ``user_query`` has one)."""
    check_read_only(sql)
    con, _ = sandbox(ledger_dir, catalog_dir, limits)
    return con.sql(sql)


# --- running with limits ---------------------------------------------------------------------


# What ``citeledger query --format json|csv`` holds and prints. A value of the ledger may be large
# (a raw reference string of a MB), and Python's copy of fetched rows is outside DuckDB's memory
# limit: so rows are fetched about FETCH_BYTES at a time (at most FETCH_ROWS), and the output stops
# after OUTPUT_BYTES of values (``--max-bytes``), saying so.
FETCH_BYTES = 16 << 20
FETCH_ROWS = 10_000
OUTPUT_BYTES = 256 << 20


def row_bytes(value: object) -> int:
    """About how many bytes a fetched value takes to print (text and blobs by length, lists and
    structs by their members, anything else a number's worth)."""
    if isinstance(value, (str, bytes, bytearray)):
        return len(value) + 2
    if isinstance(value, (list, tuple)):
        return sum(row_bytes(v) for v in value) + 2
    if isinstance(value, dict):
        return sum(row_bytes(k) + row_bytes(v) for k, v in value.items()) + 2
    return 8


@dataclass(frozen=True)
class OutputCut:
    """Where a query's output stopped: rows given, their bytes of values, the bound."""

    rows: int
    nbytes: int
    max_bytes: int

    def message(self) -> str:
        return (f"output cut after {self.rows:,} rows ({self.nbytes:,} bytes of values): the next row would pass "
                f"--max-bytes {self.max_bytes:,}; narrow the query (columns, where, limit) or raise --max-bytes")


@dataclass
class QueryResult:
    """The rows of one query, fetched within its time limit."""

    con: duckdb.DuckDBPyConnection
    sql: str
    expired: threading.Event
    cut: OutputCut | None = None

    def _check(self) -> None:
        if self.expired.is_set():
            raise duckdb.InterruptException("interrupted")

    def rows(self, max_bytes: int = OUTPUT_BYTES) -> tuple[list[str], Iterator[tuple]]:
        """Column names and the rows, fetched a few at a time so that one fetch holds about
        ``FETCH_BYTES`` of values in Python (DuckDB's own share is its ``memory_limit``), and no more
        rows than fit ``max_bytes`` of values in all; ``cut`` then says how many were given."""
        self.con.execute(self.sql)
        columns = [d[0] for d in self.con.description or []]
        self.cut = None

        def fetch() -> Iterator[tuple]:
            size, given, total = 1, 0, 0  # the first fetch is one row, then as many as fit FETCH_BYTES
            while batch := self.con.fetchmany(size):
                self._check()
                sizes = [row_bytes(row) for row in batch]
                for row, nbytes in zip(batch, sizes):
                    if total + nbytes > max_bytes:
                        self.cut = OutputCut(given, total, max_bytes)
                        return
                    given, total = given + 1, total + nbytes
                    yield row
                size = max(1, min(FETCH_ROWS, FETCH_BYTES * len(batch) // max(1, sum(sizes))))
            self._check()
        return columns, fetch()

    def table(self, max_rows: int) -> str:
        """DuckDB's box rendering, with every control character made visible."""
        out = io.StringIO()
        relation = self.con.sql(self.sql)
        if relation is not None:
            with contextlib.redirect_stdout(out):
                relation.show(max_rows=max_rows, max_width=10_000)
        self._check()
        return visible_controls(out.getvalue())


@contextmanager
def user_query(sql: str, ledger_dir: LedgerDir, catalog_dir: CatalogDir | None,
               limits: QueryLimits | None = None) -> Iterator[QueryResult]:
    """The user's query on its sandbox, interrupted after ``limits.timeout_seconds``."""
    limits = limits or QueryLimits()
    check_read_only(sql)
    con, problems = sandbox(ledger_dir, catalog_dir, limits)
    expired = threading.Event()

    def stop() -> None:
        expired.set()
        con.interrupt()
    timer = threading.Timer(limits.timeout_seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        with _plain_errors(limits, problems, expired):
            yield QueryResult(con, sql, expired)
    finally:
        timer.cancel()
        con.close()


def _one_line(exc: BaseException) -> str:
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip().strip("^"))


@contextmanager
def _plain_errors(limits: QueryLimits, problems: list[str], expired: threading.Event) -> Iterator[None]:
    """DuckDB's errors as one-line citeledger errors: a missing ledger or catalog, the limits, the rest."""
    try:
        yield
    except duckdb.Error as exc:
        for problem in problems:
            if problem in str(exc):
                raise ConfigError(problem) from None
        if expired.is_set() or isinstance(exc, duckdb.InterruptException):
            raise QueryFailed(f"query stopped after {limits.timeout_seconds:g} s, its time limit "
                              "(query.timeout_seconds, CITELEDGER_QUERY_TIMEOUT_SECONDS)") from None
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise QueryFailed(f"query stopped: it needs more memory than its limit {limits.memory_limit} "
                              "(query.memory_limit, CITELEDGER_QUERY_MEMORY_LIMIT)") from None
        raise QueryFailed(f"query failed: {_one_line(exc)}") from None


# --- help ------------------------------------------------------------------------------------


def view_columns() -> dict[str, list[tuple[str, str]]]:
    """Each view's columns and types, as DuckDB binds the real view definitions over empty data."""
    con = duckdb.connect()
    try:
        for name, (_, schema) in [*LEDGER_PARTS.items(), ("works", (None, WORKS_VIEW_SCHEMA))]:
            con.register(f"{name}_parts", schema.empty_table())
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}_parts")
        for name, sql in DERIVED_VIEWS.items():
            con.execute(f"CREATE VIEW {name} AS {sql}")
        return {name: [(r[0], r[1]) for r in con.execute(f"DESCRIBE {name}").fetchall()] for name in VIEW_NAMES}
    finally:
        con.close()


VIEW_MEANINGS = {
    "observations": "one row per reference per run", "current": "the latest observation of each reference",
    "transitions": "a reference's status or work changed between two runs", "works": "the catalog",
    "reference_changes": "a known reference read again with another raw string (old_raw, new_raw)",
    "notices": "the latest standing notice of each cited work", "notices_history": "every notice check",
    "rejects": "input rows that could not be read, with file, line and reason",
    "runs": "one row per finished run, and per failed run (finished_at null, errors the failure)",
    "pith_observations": "observations read from Pith's records (citeledger import-pith); never in current",
    "pith_records": "one row per Pith record imported (its digest, paper, pith number, as_of, the record whole)",
}


def views_help(width: int = 100) -> str:
    """The views of ``citeledger query`` and their columns, for ``query --help``."""
    lines = ["views (columns as DuckDB types):"]
    shown: dict[tuple, str] = {}
    for name, cols in view_columns().items():
        lines.append(f"  {name}: {VIEW_MEANINGS[name]}")
        if tuple(cols) in shown:
            lines.append(f"      the columns of {shown[tuple(cols)]}")
            continue
        shown[tuple(cols)] = name
        items = [f"{col} {kind.replace('TIMESTAMP WITH TIME ZONE', 'TIMESTAMPTZ')}" for col, kind in cols]
        line = "     "
        for item in items:  # never break inside "column TYPE"
            if len(line) + len(item) + 2 > width:
                lines.append(line.rstrip())
                line = "     "
            line += f" {item},"
        lines.append(line.rstrip(","))
    return "\n".join(lines)
