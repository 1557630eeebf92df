"""Bringing a catalog's blocking index of an older format up to date without rebuilding it.

The formats since 5 differ only in the venue locators: format 5 kept them in Parquet (loaded into
each process), format 6 as the mapped ``venue_locators.arrow``, format 7 adds their (volume, first
page) lookup (``venue_index.page_index``). So a format 5 index gets its locator files written
from works.parquet's venue, volume and first page, a format 6 one only the page lookup from its
own locator file (seconds, where a rebuild takes minutes at 10M works); then the stamp is
rewritten. Anything else is left to ``blocking.build_index``.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq

from . import blocking
from .venue_index import LOCATORS_FILE, PAGES_AT, PAGES_HASHES, locator_rows

UPGRADABLE = (5, 6)


def upgrade_locators(catalog_dir: Path) -> dict | None:
    """Upgrade an index of format 5 or 6 in place (see above); None when it is not one."""
    try:
        stamp = json.loads((catalog_dir / blocking.INDEX_FILE).read_text())
    except (OSError, ValueError):
        return None
    current = blocking._stamp(catalog_dir)
    old = stamp.get("format") if isinstance(stamp, dict) else None
    kept = {LOCATORS_FILE, PAGES_HASHES, PAGES_AT} if old == 5 else {PAGES_HASHES, PAGES_AT}
    others = [p for p in blocking.index_files(catalog_dir) if p.name not in kept]
    if old not in UPGRADABLE or stamp != {**current, "format": old} or not all(p.exists() for p in others):
        return None
    t0 = time.perf_counter()
    if old == 5:
        _write_locators_from_works(catalog_dir)
    else:
        blocking.write_page_index(catalog_dir, blocking.map_ipc(catalog_dir / LOCATORS_FILE))
    blocking.write_stamp(catalog_dir, current)
    return {"works": current["n_works"], "upgraded_from_format": old, "seconds": round(time.perf_counter() - t0, 2)}


def _write_locators_from_works(catalog_dir: Path) -> None:
    """Format 5: the locator files from works.parquet; its Parquet copy, read by nothing now, goes."""
    pf = pq.ParquetFile(catalog_dir / blocking.WORKS_FILE)
    columns = ["venue", "volume", "first_page"]
    chunks, row0 = [], 0
    if set(columns) <= set(pf.schema_arrow.names):
        for batch in pf.iter_batches(batch_size=200_000, columns=columns):
            chunks.append(locator_rows(batch, row0))
            row0 += batch.num_rows
    blocking._write_locators(catalog_dir, chunks)
    blocking.drop_file(catalog_dir / "venue_locators.parquet")
