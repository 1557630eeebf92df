"""The venue + volume + first page index of a catalog generation (``venue_locators.parquet``).

One row per work that has all three: ``venue_key`` (``resolvers.journal_ref.venue_key``: every
spelling of a venue meets on one key), ``volume`` and ``first_page`` (``number_key``: lower case,
leading zeros dropped) and the ``work_id``. ``citeledger.blocking`` writes it beside the title
index (same staleness stamp); ``ParquetCatalog.works_by_locator`` reads it through ``lookup``.
A title-less reference (``G. Aad et al., Phys. Lett. B 716, 1 (2012)``) finds its work here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

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
    Venue keys are made once per distinct venue (a catalog holds far fewer venues than works)."""
    cols = {name: batch.column(batch.schema.names.index(name)).to_pylist()
            for name in ("work_id", "venue", "volume", "first_page")}
    rows: dict[str, list[Any]] = {name: [] for name in LOCATOR_SCHEMA.names}
    for work_id, venue, volume, page in zip(cols["work_id"], cols["venue"], cols["volume"], cols["first_page"]):
        key, vol, fp = venue_key(venue), number_key(volume), number_key(page)
        if key and vol and fp:
            for name, value in zip(LOCATOR_SCHEMA.names, (key, vol, fp, work_id)):
                rows[name].append(value)
    return pa.table(rows, schema=LOCATOR_SCHEMA)


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


def lookup_volume_page(cur: Any, table: str, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, Work]]]:
    """(volume, first page) -> (venue key, work) of every work printed there, whatever its venue:
    a string whose venue OCR misread compares the venue keys itself (``locator_match``)."""
    wanted = sorted({p for p in pairs if all(p)})
    if not wanted:
        return {}
    cur.register("wanted_pages", pa.table({"volume": pa.array([p[0] for p in wanted], pa.string()),
                                           "first_page": pa.array([p[1] for p in wanted], pa.string())}))
    cur.execute(f"""SELECT l.venue_key AS l_key, l.volume AS l_volume, l.first_page AS l_page, w.*
                    FROM {table} l JOIN wanted_pages USING (volume, first_page)
                    JOIN works w USING (work_id) ORDER BY l.volume, l.first_page, l.venue_key, w.work_id""")
    names = [d[0] for d in cur.description]
    out: dict[tuple[str, str], list[tuple[str, Work]]] = {}
    for row in cur.fetchall():
        rec = dict(zip(names, row))
        out.setdefault((rec["l_volume"], rec["l_page"]), []).append((rec["l_key"], work_from_row(rec)))
    return out


def load_sql(gen_dir: Path, table: str) -> str:
    """The statement that loads a generation's index into an in-memory table."""
    return f"CREATE TABLE IF NOT EXISTS {table} AS SELECT * FROM read_parquet({sql_literal(gen_dir / LOCATORS_FILE)})"
