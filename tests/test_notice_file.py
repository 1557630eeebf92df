"""The notice step's files (``citeledger.index.notice_files``): the same notice columns, and so the same
notice rows, as the join against works.parquet they replace; derived on first open of a
generation made without them; and the join again where they are missing or a hash is shared."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog
from citeledger.engine.process_cache import get_catalog
from citeledger.index import notice_files as notice_file
from citeledger.index.blocking import WORKS_ARROW
from citeledger.run import notice_check
from citeledger.run.planning import bring_up_to_date
from citeledger.storage import external_sort as hash_runs
from citeledger.storage.mapped_files import map_ipc

FIXTURES = Path(__file__).parent / "fixtures" / "catalog"


def _all_ids(catalog: ParquetCatalog) -> list[str]:
    return map_ipc(catalog.generation_dir / WORKS_ARROW).column("work_id").to_pylist()


def _scanned(catalog: ParquetCatalog, work_ids: list[str]) -> dict[str, dict]:
    """The join's columns, of the sources only those the notice step asks about."""
    rows = catalog.work_rows(work_ids, notice_file.NOTICE_COLUMNS)
    return {w: {**r, "sources": [s for s in notice_file.HELD if s in (r["sources"] or ())]} for w, r in rows.items()}


@pytest.fixture(scope="module")
def built_catalog(tmp_path_factory) -> Path:
    """The fixture works' catalog, built once for the module (never opened: no file derived)."""
    directory = tmp_path_factory.mktemp("notice-file") / "catalog"
    CatalogStore(directory).build(sorted(FIXTURES.glob("*.jsonl")))
    return directory


@pytest.fixture()
def own_catalog(built_catalog, tmp_path) -> Path:
    """Each test's own copy: the tests remove and change its files."""
    directory = tmp_path / "catalog"
    shutil.copytree(built_catalog, directory)
    return directory


def test_notice_columns_are_those_of_the_scan(fixture_catalog):
    catalog = ParquetCatalog(fixture_catalog)
    assert catalog._part("notices") is not None  # written by the build's index step
    ids = _all_ids(catalog)
    found = catalog.notice_rows([*ids, "doi:10.9/not-in-the-catalog"])
    assert found == _scanned(catalog, ids)
    assert any(r["relations"] for r in found.values()) and any(r["withdrawn"] for r in found.values())
    assert any(r["sources"] == ["crossref"] for r in found.values())


def test_notice_rows_are_those_of_the_scan(fixture_catalog, monkeypatch):
    ids = _all_ids(get_catalog(fixture_catalog))
    from_file = notice_check.work_notice_rows(fixture_catalog, ids, "r")
    monkeypatch.setitem(get_catalog(fixture_catalog)._opened, "notices", None)  # the DuckDB join
    assert from_file == notice_check.work_notice_rows(fixture_catalog, ids, "r")
    assert any(r["standing"] != "none" for r in from_file)


def test_opening_a_generation_without_them_writes_nothing_and_a_plan_derives_them(own_catalog):
    gen = CatalogStore(own_catalog).current()
    for name in notice_file.FILES:
        (gen / name).unlink()
    assert not notice_file.is_current(gen)
    assert ParquetCatalog(own_catalog)._part("notices") is None and not notice_file.is_current(gen)  # a reader reads
    assert _scanned(ParquetCatalog(own_catalog), _all_ids(ParquetCatalog(own_catalog)))
    bring_up_to_date(own_catalog, gen.name)
    catalog = ParquetCatalog(own_catalog)
    assert notice_file.is_current(gen) and catalog._part("notices") is not None
    ids = _all_ids(catalog)
    assert catalog.notice_rows(ids) == _scanned(catalog, ids)


def test_files_sorted_on_disk_equal_the_whole_sort(own_catalog, monkeypatch):
    """The id lookup written through hash parts, in chunks of 3 rows (6 chunks, 16 parts),
    holds what a sort of every work id's hash in memory gives: hashes ascending (signed), a
    hash's rows in row order; the flags of every row in order; no scratch folder left behind,
    and a killed build's one removed."""
    gen = CatalogStore(own_catalog).current()
    stale = gen / ".index-runs-notices-999999999"  # (no such process)
    stale.mkdir()
    ids = pa.array(_all_ids(ParquetCatalog(own_catalog)))
    for name in notice_file.FILES:
        (gen / name).unlink()
    monkeypatch.setattr(hash_runs, "PART_ROWS", 4)  # parts_for: its least, 16 parts
    notice_file.write(gen, chunk_rows=3)
    hashes = notice_file.term_hashes(ids)
    order = np.argsort(hashes, kind="stable")
    got_hashes, got_rows = np.load(gen / notice_file.ID_HASHES), np.load(gen / notice_file.ID_ROWS)
    assert got_hashes.dtype == np.int64 and np.array_equal(got_hashes, hashes[order])
    assert got_rows.dtype == np.int64 and np.array_equal(got_rows, order)
    sources = pq.read_table(gen / "works.parquet", columns=["sources"]).column("sources").combine_chunks()
    flags = np.load(gen / notice_file.FLAGS)
    assert flags.dtype == np.uint8 and np.array_equal(flags, notice_file._source_flags(sources, len(ids))) and flags.any()
    assert notice_file.is_current(gen) and not list(gen.glob(".index-runs-*"))
    catalog = ParquetCatalog(own_catalog)
    every = _all_ids(catalog)
    assert catalog.notice_rows(every) == _scanned(catalog, every)


def test_a_stale_stamp_is_derived_again(own_catalog):
    gen = CatalogStore(own_catalog).current()
    shutil.copy(gen / notice_file.ID_ROWS, gen / "kept.npy")
    notice_file.blocking.save_array(gen / notice_file.STAMP, notice_file._stamp_values(gen) + 1)
    assert not notice_file.is_current(gen)
    assert notice_file.ensure(gen) and notice_file.is_current(gen)


def test_a_folder_that_cannot_be_written_reads_works_parquet(own_catalog, monkeypatch):
    gen = CatalogStore(own_catalog).current()
    (gen / notice_file.STAMP).unlink()

    def refused(gen_dir, chunk_rows=0):
        raise PermissionError(13, "Permission denied", str(gen_dir))
    monkeypatch.setattr(notice_file, "write", refused)
    catalog = ParquetCatalog(own_catalog)
    assert catalog._part("notices") is None
    ids = _all_ids(catalog)
    assert catalog.notice_rows(ids) == catalog.work_rows(ids, notice_file.NOTICE_COLUMNS)


def test_an_id_whose_hash_names_another_work_is_read_from_works_parquet(own_catalog, monkeypatch):
    catalog = ParquetCatalog(own_catalog)
    ids = _all_ids(catalog)
    real_rows = catalog._part("notices").rows
    monkeypatch.setattr(catalog._part("notices"), "rows", lambda asked: {w: 0 for w in real_rows(asked)})  # all "row 0"
    assert catalog.notice_rows(ids) == _scanned(catalog, ids) | catalog.work_rows(ids[1:], notice_file.NOTICE_COLUMNS)


def test_source_flags_name_crossref_and_openalex_holdings():
    sources = pa.array([["crossref"], ["openalex", "works_jsonl"], [], ["works_jsonl"], ["openalex", "crossref"]])
    flags = notice_file._source_flags(sources, 5)
    assert flags.tolist() == [1, 2, 0, 0, 3]
