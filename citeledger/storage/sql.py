"""Small helpers of the SQL citeledger sends to DuckDB: a connection of the process's own database,
a path as a SQL literal, the one value a query answers, and a list of strings as a table to join."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

_DATABASE: dict[int, Any] = {}  # process id -> this process's in-memory DuckDB database
_DATABASE_LOCK = threading.Lock()


def process_connection() -> Any:
    """A new connection to this process's own in-memory DuckDB database (opened on first use): opening
    a database costs about 9 ms of CPU, a connection to an open one 0.1 ms, and a run's finishing steps
    open a dozen. Each connection has its own temporary tables and views, so its users make theirs
    TEMP and close it when done; none may change the database's settings through it (the query
    command's sandbox, the builds with their memory limits open databases of their own)."""
    import duckdb  # (loaded by the commands that read or write the ledger only)

    with _DATABASE_LOCK:
        database = _DATABASE.get(os.getpid())
        if database is None:
            _DATABASE.clear()  # (a database opened before a fork is not this process's)
            database = _DATABASE[os.getpid()] = duckdb.connect()
        return database.cursor()


def sql_literal(value: str | Path) -> str:
    """Quote a string for SQL. Only paths we build ever pass through here, never user input."""
    return "'" + str(value).replace("'", "''") + "'"


def scalar(con: Any, sql: str, params: Sequence[Any] | None = None) -> Any:
    """The first column of the first row a query answers (a count, a maximum): None when no row."""
    row = con.execute(sql, params).fetchone() if params is not None else con.execute(sql).fetchone()
    return row[0] if row is not None else None


def strings_table(con: Any, name: str, column: str, values: Iterable[str]) -> None:
    """A temporary table ``name`` on this connection with one text column ``column`` holding
    ``values`` (replacing one of that name), to join or to test ``IN`` against. Sent as one JSON
    array: DuckDB turns it into rows in C (50,000 strings: 0.1 s), without pyarrow, which
    registering an Arrow table makes DuckDB load with pyarrow.dataset (0.1 s of a short command's
    start), and without a list parameter, whose binding grows with the square of its length."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT unnest(CAST(? AS JSON)::VARCHAR[]) AS {column}",
                [json.dumps(list(values), ensure_ascii=False)])
