"""Small helpers of the SQL citeledger sends to DuckDB: a path as a SQL literal, and the one value a
query answers."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence


def sql_literal(value: str | Path) -> str:
    """Quote a string for SQL. Only paths we build ever pass through here, never user input."""
    return "'" + str(value).replace("'", "''") + "'"


def scalar(con: Any, sql: str, params: Sequence[Any] | None = None) -> Any:
    """The first column of the first row a query answers (a count, a maximum): None when no row."""
    row = con.execute(sql, params).fetchone() if params is not None else con.execute(sql).fetchone()
    return row[0] if row is not None else None
