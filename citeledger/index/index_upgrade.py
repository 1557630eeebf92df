"""Bringing a catalog's blocking index of an older format up to date without rebuilding it.

Format 5 differs from 6 only in the venue locators (then Parquet, loaded into each process; now
the mapped ``venue_locators.arrow``): it gets its locator files written from works.parquet's venue,
volume and first page and the stamp rewritten (seconds, where a rebuild takes minutes at 10M
works). Anything else is left to ``blocking.build_index``. The locators' page lookup, added to an
index that lacks it, is ``ensure_page_index``; the works' row files (``work_rows``), ``ensure_work_rows``.
``ensure_index`` does all of it where a run is planned.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from citeledger.app_errors import DiskFull, LedgerPathError
from citeledger.index import blocking, notice_files, venue_index
from citeledger.index.venue_index import LOCATORS_FILE, LocatorRuns, locator_rows
from citeledger.storage.parquet_batches import parquet_file
from citeledger.storage.places import CatalogDir
from citeledger.works import work_rows


def upgrade_locators(catalog_dir: Path) -> dict | None:
    """Upgrade an index of format 5 in place (see above); None when it is not one."""
    try:
        stamp = json.loads((catalog_dir / blocking.INDEX_FILE).read_text())
    except (OSError, ValueError):
        return None
    current = blocking.index_stamp(catalog_dir)
    others = [p for p in blocking.index_files(catalog_dir) if p.name != LOCATORS_FILE]
    if stamp != {**current, "format": 5} or not all(p.exists() for p in others):
        return None
    t0 = time.perf_counter()
    _write_locators_from_works(catalog_dir)
    blocking.write_stamp(catalog_dir, current)
    return {"works": current["n_works"], "upgraded_from_format": 5, "seconds": round(time.perf_counter() - t0, 2)}


def _write_locators_from_works(catalog_dir: Path) -> None:
    """Format 5: the locator files from works.parquet; its Parquet copy, read by nothing now, goes."""
    pf = parquet_file(catalog_dir / blocking.WORKS_FILE)
    columns = ["venue", "volume", "first_page"]
    runs_dir = blocking.scratch_dir(catalog_dir)
    try:
        locators = LocatorRuns(runs_dir, pf.metadata.num_rows)
        row0 = 0
        if set(columns) <= set(pf.schema_arrow.names):
            for batch in pf.iter_batches(batch_size=200_000, columns=columns):
                locators.add(locator_rows(batch, row0))
                row0 += batch.num_rows
        blocking.write_locators(catalog_dir, locators)
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    blocking.drop_file(catalog_dir / "venue_locators.parquet")


def pages_current(catalog_dir: Path) -> bool:
    """Was the locators' (volume, first page) lookup written for this index?"""
    return venue_index.pages_current(catalog_dir, blocking.index_stamp(catalog_dir))


def ensure_page_index(catalog_dir: Path) -> bool:
    """Write the page lookup of an index that lacks it (made before it existed: seconds at 10M
    works, where a rebuild takes minutes). A folder this user cannot write keeps working: each
    process then makes the lookup in memory (``venue_index.load``). True when it is on disk."""
    if pages_current(catalog_dir):
        return True
    try:
        blocking.write_page_index(catalog_dir, blocking.map_ipc(catalog_dir / LOCATORS_FILE))
    except (OSError, LedgerPathError, DiskFull):
        return False
    return True


def ensure_work_rows(catalog_dir: Path) -> bool:
    """Write the row files of an index that lacks them (made before they existed: minutes at 10M
    works, once). A folder this user cannot write keeps working: its processes then read the rows
    from the mapped Arrow files (``work_rows.WorkReader``). True when they are on disk."""
    if work_rows.rows_current(catalog_dir, blocking.index_stamp(catalog_dir)):
        return True
    try:
        blocking.write_work_rows(catalog_dir)
    except (OSError, LedgerPathError, DiskFull):
        return False
    return True


def ensure_index(catalog_dir: CatalogDir) -> dict | None:
    """Bring a catalog generation's lookup files up to date: the fuzzy index (upgraded in place from
    format 5, else rebuilt when it is missing or of another format), the locators' page lookup, the
    works' row files and the notice files. Returns the index build's stats, or None when the index
    was current. Called where a run is planned, under the catalog's lock, so a catalog of an older
    format is brought up to date once, before the worker processes start; opening a catalog only
    checks (``blocking.require_current``)."""
    catalog_dir = Path(catalog_dir)
    stats = None if blocking.is_current(catalog_dir) else (upgrade_locators(catalog_dir)
                                                           or blocking.build_index(catalog_dir))
    ensure_page_index(catalog_dir)
    ensure_work_rows(catalog_dir)
    notice_files.ensure(catalog_dir)
    return stats


def up_to_date(catalog_dir: Path) -> bool:
    """Are all of a generation's lookup files current (what ``ensure_index`` would leave)? Reads only."""
    if not blocking.is_current(catalog_dir):
        return False
    stamp = blocking.index_stamp(catalog_dir)
    return (venue_index.pages_current(catalog_dir, stamp) and work_rows.rows_current(catalog_dir, stamp)
            and notice_files.is_current(catalog_dir))
