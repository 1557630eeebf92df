"""The venue + volume + first page index of a catalog generation (``venue_locators.parquet``).

One row per work that has all three: ``venue_key`` (``resolvers.journal_ref.venue_key``: every
spelling of a venue meets on one key), ``volume`` and ``first_page`` (``number_key``: lower case,
leading zeros dropped) and the ``work_id``. ``citeledger.blocking`` writes it beside the title
index (same staleness stamp); ``ParquetCatalog.works_by_locator`` reads it through ``lookup``.
A title-less reference (``G. Aad et al., Phys. Lett. B 716, 1 (2012)``) finds its work here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from resolvers.journal_ref import number_key, venue_key
from resolvers.catalog import LocatorKey
from resolvers.model import Work

from .atomic import sql_literal
from .work_row import work_from_row

LOCATORS_FILE = "venue_locators.parquet"
LOCATOR_SCHEMA = pa.schema([("venue_key", pa.string()), ("volume", pa.string()), ("first_page", pa.string()),
                            ("work_id", pa.string())])


def locator_rows(batch: pa.RecordBatch) -> pa.Table:
    """The index rows of a chunk of works.parquet (columns work_id, venue, volume, first_page).
    Keys are made once per distinct venue, volume and page (a catalog holds far fewer of each
    than works), then spread over the rows by Arrow."""
    def column(name: str) -> pa.Array:
        a = batch.column(batch.schema.names.index(name))
        return a if a.type == pa.string() else a.cast(pa.string())

    def keyed(name: str, key: Callable[[str | None], str]) -> pa.Array:
        encoded = pc.dictionary_encode(column(name))
        keys = pa.array([key(v) or None for v in encoded.dictionary.to_pylist()], pa.string())
        return keys.take(encoded.indices)

    cols = [keyed("venue", venue_key), keyed("volume", number_key), keyed("first_page", number_key),
            column("work_id")]
    keep = pc.fill_null(pc.and_(pc.and_(pc.is_valid(cols[0]), pc.is_valid(cols[1])), pc.is_valid(cols[2])), False)
    return pa.table([pc.filter(c, keep) for c in cols], schema=LOCATOR_SCHEMA)


def lookup(cur: Any, table: str, keys: Sequence[LocatorKey]) -> dict[LocatorKey, list[Work]]:
    """(venue key, volume, first page) -> the works there, by work id, through a DuckDB cursor
    on which ``table`` holds the index rows and ``works`` the catalog's works."""
    wanted = sorted({k for k in keys if all(k)})
    if not wanted:
        return {}
    cur.register("wanted_locators", pa.table({name: pa.array([k[i] for k in wanted], pa.string())
                                              for i, name in enumerate(LOCATOR_SCHEMA.names[:3])}))
    cur.execute(f"""SELECT l.venue_key AS l_key, l.volume AS l_volume, l.first_page AS l_page, w.*
                    FROM {table} l JOIN wanted_locators USING (venue_key, volume, first_page)
                    JOIN works w USING (work_id) ORDER BY l.venue_key, l.volume, l.first_page, w.work_id""")
    names = [d[0] for d in cur.description]
    out: dict[LocatorKey, list[Work]] = {}
    for row in cur.fetchall():
        rec = dict(zip(names, row))
        out.setdefault((rec["l_key"], rec["l_volume"], rec["l_page"]), []).append(work_from_row(rec))
    return out


def load_sql(gen_dir: Path, table: str) -> str:
    """The statement that loads a generation's index into an in-memory table."""
    return f"CREATE TABLE IF NOT EXISTS {table} AS SELECT * FROM read_parquet({sql_literal(gen_dir / LOCATORS_FILE)})"
