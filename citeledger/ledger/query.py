"""``citeledger query``: the user's SQL over the ledger's views, on a DuckDB connection that cannot write.

Why not DuckDB's own file sandbox: ``allowed_directories`` does not tell reading from writing, so
a folder a query may read is a folder ``EXPLAIN ANALYZE COPY ... TO`` may overwrite (EXPLAIN
ANALYZE executes its statement). Here the user's database gets no file access at all: Python lists
the part files, and each base view scans an Arrow stream (the Arrow C stream interface) that a
second, in-memory DuckDB database reads from those files with SQL of ours only, a new stream each
time the user's database asks (each bind, each scan). The user's connection has external access off,
no allowed directory, no temp directory (nothing spills to disk), no extension loading, no Python
replacement scans, and its configuration locked before the user's SQL runs. A small ledger's query
imports no pyarrow and starts in the time DuckDB takes to load; a big view the query names (past
``STREAM_BYTES``: the catalog's works, a large ledger's observations) is a pyarrow dataset instead,
so DuckDB reads only the columns and row groups it needs.
``check_read_only`` (statement types) stays in front for a clear refusal; the connection is what
makes a write impossible.

A view over a ledger or catalog that is not there fails when read, naming the path: a mistyped
``--ledger`` must not look like an empty ledger, while a query of ``works`` alone needs no ledger.
"""
from __future__ import annotations

import contextlib
import importlib.abc
import io
import os
import re
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb

from citeledger.app_errors import QueryFailed, QueryRefused
from citeledger.config import QueryLimits
from citeledger.display import visible_controls
from citeledger.ledger.views import (
    DERIVED_VIEWS,
    LEDGER_PARTS,
    READ_BY,
    VIEW_NAMES,
    WORKS_HIDDEN,
    Columns,
    columns_select,
    empty_select,
    ledger_problem,
)
from citeledger.storage.places import CatalogDir, CatalogPlaces, LedgerDir
from citeledger.storage.sql import sql_literal
from resolvers.errors import ConfigError

# --- the first line: statement types -------------------------------------------------------

_ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
_LEADING = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)  # blanks and comments
_EXPLAIN = re.compile(r"explain\s+(?:analy[sz]e\s+)?", re.I)
_PRAGMA_SELECT = re.compile(r"SELECT \* FROM pragma_\w+")  # the parser's own form of a PRAGMA statement


def check_read_only(sql: str) -> None:
    """Refuse anything but reading (delete, copy, attach, set, pragma...), also behind EXPLAIN ANALYZE."""
    statements = _statements(sql)
    if not statements:
        raise QueryRefused("empty query")
    leading = _LEADING.match(sql)
    pivot = re.match(r"(un)?pivot\b", sql[leading.end():] if leading else sql, re.I)
    for st in statements:
        if pivot and st.type == duckdb.StatementType.CREATE and not st.query:
            continue  # a PIVOT without IN (...): DuckDB's parser adds an enum of the values (no text of the user's)
        if _PRAGMA_SELECT.match(st.query) and st.query not in sql:
            raise QueryRefused("only read-only queries are allowed; refused a PRAGMA statement")
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


def duckdb_memory_limit(limit: str) -> str:
    """``query.memory_limit`` as DuckDB takes it: a share of RAM (``25%``) turned into MiB of this
    machine's physical memory (DuckDB 1.5 knows only sizes); a size as it is."""
    text = limit.strip()
    if not text.endswith("%"):
        return text
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return f"{max(1, int(ram * float(text[:-1]) / 100) >> 20)}MiB"


def live_generation(catalog_dir: CatalogDir) -> Path | None:
    """The catalog's live generation folder (its ``CURRENT`` names one with a manifest), or None."""
    places = CatalogPlaces.of(catalog_dir)
    try:
        gen = places.generation(places.current.read_text().strip())
    except (OSError, ValueError):
        return None
    return gen if (gen / "manifest.json").is_file() else None


def catalog_problem(catalog_dir: CatalogDir | None) -> str | None:
    if catalog_dir is None:
        return ("no catalog given: give --catalog (or the `catalog` setting, CITELEDGER_CATALOG) the folder "
                "`citeledger catalog build` wrote")
    if live_generation(catalog_dir) is not None:
        return None
    return (f"no catalog in {catalog_dir}: give --catalog (or the `catalog` setting, CITELEDGER_CATALOG) the "
            "folder `citeledger catalog build` wrote")


class PartStream:
    """A base view's rows for the user's database: each time it asks (``__arrow_c_stream__``, the
    Arrow PyCapsule interface), a new stream of ``sql`` on a cursor of the reading database, which
    alone opens files and never runs the user's SQL. While the views are made (``rows`` false) DuckDB
    asks only for the columns: the stream of no row, which reads no data."""

    def __init__(self, reader: duckdb.DuckDBPyConnection, sql: str):
        self.reader = reader
        self.sql = sql
        self.rows = False

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        sql = self.sql if self.rows else f"SELECT * FROM ({self.sql}) LIMIT 0"
        return self.reader.cursor().sql(sql).__arrow_c_stream__(requested_schema)


def _parts_sql(reader: duckdb.DuckDBPyConnection, files: list[Path], columns: Columns) -> str:
    """The reading SQL of a view over part files: every column in file order, null where no file has it."""
    if not files:
        return empty_select(columns)
    scan = f"read_parquet([{', '.join(sql_literal(f) for f in files)}], union_by_name=true)"
    present = set(reader.sql(f"SELECT * FROM {scan}").columns)
    return f"SELECT {columns_select(present, columns)} FROM {scan}"


def _add_view(con: duckdb.DuckDBPyConnection, name: str, source: PartStream | None,
              columns: Columns = (("missing", "INTEGER"),)) -> None:
    """``name`` over ``source``, or, without one, a view that fails naming its problem when bound:
    ``sandbox`` drops ``{name}_missing`` once every view is made (``_plain_errors`` maps its name to the
    problem), so the error comes when a query binds the view, whatever the query does with its rows."""
    if source is None:
        con.execute(f"CREATE TABLE {name}_missing AS {empty_select(columns)}")  # for the views over it to bind
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}_missing")
        return
    con.register(f"{name}_parts", source)
    con.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}_parts")


def _part_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.parquet")) if folder.is_dir() else []


# A base view whose files pass this many bytes, and that the query names, is read through a pyarrow
# dataset: DuckDB then reads only the columns and row groups the query needs (an Arrow C stream
# gives every column of every row), worth pyarrow's fifth of a second to load. Smaller ones, and
# those a query does not name, are streams.
STREAM_BYTES = 1 << 20


def named(sql: str | None, view: str) -> bool:
    """Whether ``sql`` may read ``view`` (its name, or a view over it, as a word; None: any view)."""
    names = READ_BY.get(view, (view,))
    return sql is None or re.search(r"\b(" + "|".join(names) + r")\b", sql, re.I) is not None


def wants_arrow(sql: str | None, ledger_dir: LedgerDir, catalog_dir: CatalogDir | None) -> bool:
    """Whether the query's sandbox reads some view through a pyarrow dataset (``STREAM_BYTES``)."""
    return any(_big(files) and named(sql, name) for name, files in _view_files(Path(ledger_dir), catalog_dir).items())


def _big(files: list[Path]) -> bool:
    return sum(f.stat().st_size for f in files) > STREAM_BYTES


def _view_files(ledger: Path, catalog_dir: CatalogDir | None) -> dict[str, list[Path]]:
    """The files each base view reads (none for a ledger or catalog that is not there)."""
    found = {} if ledger_problem(ledger) else {name: _part_files(ledger / folder)
                                               for name, (folder, _) in LEDGER_PARTS.items()}
    gen = live_generation(catalog_dir) if catalog_dir is not None else None
    if gen is not None:
        found["works"] = [gen / "works.parquet"]
    return found


def _dataset(con: duckdb.DuckDBPyConnection, name: str, files: list[Path], columns: Columns | None) -> None:
    """``name`` over a pyarrow dataset of ``files`` (pyarrow reads them; DuckDB pushes projections and
    filters into the scan): the way of a big view."""
    import pyarrow.dataset as ds

    from citeledger.ledger.views import arrow_schema

    schema = arrow_schema(columns) if columns is not None else None
    con.register(f"{name}_parts", ds.dataset([str(f) for f in files], schema=schema, format="parquet"))
    hidden = f" EXCLUDE ({', '.join(WORKS_HIDDEN)})" if name == "works" else ""
    con.execute(f"CREATE VIEW {name} AS SELECT *{hidden} FROM {name}_parts")


def sandbox(ledger_dir: LedgerDir, catalog_dir: CatalogDir | None, limits: QueryLimits | None = None,
            sql: str | None = None) -> tuple[duckdb.DuckDBPyConnection, dict[str, str]]:
    """A connection holding the views and no way to touch a file; also the problems its views report,
    by the name of the table a failing view misses. ``sql``: the query the views are for (a big view
    it names is a pyarrow dataset; None: every big view is)."""
    limits = limits or QueryLimits()
    ledger = Path(ledger_dir)
    if ledger.exists() and not ledger.is_dir():
        raise ConfigError(ledger_problem(ledger))
    memory = duckdb_memory_limit(limits.memory_limit)
    reader = duckdb.connect(config={"memory_limit": memory, "temp_directory": ""})
    con = duckdb.connect(config=SANDBOX | {"memory_limit": memory})
    problems: dict[str, str] = {}
    streams: list[PartStream] = []
    files = _view_files(ledger, catalog_dir)
    try:
        no_ledger = ledger_problem(ledger)
        for name, (_, columns) in LEDGER_PARTS.items():
            if no_ledger:
                _add_view(con, name, None, columns)
                problems[f"{name}_missing"] = no_ledger
            elif not files[name]:  # none of these parts yet: a view of no row needs no file
                con.execute(f"CREATE VIEW {name} AS {empty_select(columns)}")
            elif _big(files[name]) and named(sql, name):
                _dataset(con, name, files[name], columns)
            else:
                streams.append(PartStream(reader, _parts_sql(reader, files[name], columns)))
                _add_view(con, name, streams[-1])
        if "works" not in files:
            _add_view(con, "works", None)
            problems["works_missing"] = catalog_problem(catalog_dir) or ""
        elif _big(files["works"]) and named(sql, "works"):
            _dataset(con, "works", files["works"], None)
        else:
            streams.append(PartStream(reader, f"SELECT * EXCLUDE ({', '.join(WORKS_HIDDEN)}) "
                                              f"FROM read_parquet({sql_literal(files['works'][0])})"))
            _add_view(con, "works", streams[-1])
        for name, derived in DERIVED_VIEWS.items():
            con.execute(f"CREATE VIEW {name} AS {derived}")
        for missing in problems:
            con.execute(f"DROP TABLE {missing}")
        con.execute("SET lock_configuration = true")
        for stream in streams:
            stream.rows = True
    except BaseException:
        con.close()
        reader.close()
        raise
    return con, problems


def run_query(sql: str, ledger_dir: LedgerDir, catalog_dir: CatalogDir | None,
              limits: QueryLimits | None = None) -> duckdb.DuckDBPyRelation:
    """The user's SQL as a relation on its sandbox (no time limit: ``user_query`` has one)."""
    check_read_only(sql)
    con, _ = sandbox(ledger_dir, catalog_dir, limits, sql)
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
    if wants_arrow(sql, ledger_dir, catalog_dir):
        import pyarrow.dataset  # noqa: F401 (a big view's dataset: loaded before the views are made)
    with arrow_left_unloaded():
        con, problems = sandbox(ledger_dir, catalog_dir, limits, sql)
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


class _NotHere(importlib.abc.MetaPathFinder):
    """Answers that pyarrow cannot be found (see ``arrow_left_unloaded``)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ModuleNotFoundError(f"{name} is left unloaded while a query runs", name=name)


@contextmanager
def arrow_left_unloaded() -> Iterator[None]:
    """While a query's views are made and scanned, DuckDB would import pyarrow (a fifth of a second)
    only to ask whether a registered object is one of pyarrow's types; ours speak the Arrow C stream
    interface, which DuckDB reads itself. So, when pyarrow is not loaded yet (a fresh ``citeledger
    query``), its import is answered "not found" meanwhile; a process that already has it is untouched."""
    if "pyarrow" in sys.modules:
        yield
        return
    finder = _NotHere()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def _one_line(exc: BaseException) -> str:
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip().strip("^"))


@contextmanager
def _plain_errors(limits: QueryLimits, problems: dict[str, str], expired: threading.Event) -> Iterator[None]:
    """DuckDB's errors as one-line citeledger errors: a missing ledger or catalog, the limits, the rest."""
    try:
        yield
    except duckdb.Error as exc:
        for missing, problem in problems.items():
            if f"Table with name {missing} does not exist" in str(exc):
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
    from citeledger.ledger.ledger_store import WORKS_VIEW_SCHEMA  # the works row's Arrow schema (pyarrow): help only

    con = duckdb.connect()
    try:
        for name, (_, columns) in LEDGER_PARTS.items():
            con.execute(f"CREATE VIEW {name} AS {empty_select(columns)}")
        con.register("works_parts", WORKS_VIEW_SCHEMA.empty_table())
        con.execute("CREATE VIEW works AS SELECT * FROM works_parts")
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
    "paper_titles": "a citing paper's own title, as a run read it from the paper itself",
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
