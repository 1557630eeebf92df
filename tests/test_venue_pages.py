"""The (volume, first page) lookup of the venue locators (venue_pages_*.npy): what a string whose
venue OCR misread asks for, answered by binary search instead of a scan of the catalog."""
import json
import random

import pyarrow as pa

from citeledger.app_errors import LedgerPathError
from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog
from citeledger.index import blocking, index_upgrade
from citeledger.index.venue_index import PAGES_AT, PAGES_HASHES, PAGES_STAMP, LocatorIndex, LocatorRuns, locator_rows
from citeledger.storage import external_sort as hash_runs


def _scan(table, pairs):
    """What the lookup answered before it existed: every entry at a wanted (volume, page), in table order."""
    wanted = {p for p in pairs if all(p)}
    out = {}
    for entry in table.to_pylist():
        if (entry["volume"], entry["first_page"]) in wanted:
            out.setdefault((entry["volume"], entry["first_page"]), []).append((entry["venue_key"], entry["row"]))
    return out


def test_the_volume_page_lookup_answers_what_a_scan_of_the_locators_finds(tmp_path):
    rng = random.Random(7)
    venues = ["Phys. Rev. D", "Phys. Rev. C", "Nature", "Physica A", "J. Chem. Phys."]
    rows = [{"venue": rng.choice(venues), "volume": str(rng.randint(1, 30)), "first_page": str(rng.randint(1, 40))}
            for _ in range(3000)]
    locators = LocatorRuns(tmp_path, len(rows))
    locators.add(locator_rows(pa.RecordBatch.from_pylist(rows), 0))
    table = pa.concat_tables(locators.tables())
    index = LocatorIndex(table)
    pairs = [(str(rng.randint(0, 32)), str(rng.randint(0, 42))) for _ in range(300)] + [("", "5"), ("5", "")]
    found = index.rows_at_volume_page(pairs)
    assert found == _scan(table, pairs)
    assert sum(len(v) for v in found.values()) > 300  # many pairs hold several works


def _one_work_catalog(tmp_path):
    src = tmp_path / "works.jsonl"
    src.write_text(json.dumps({"doi": "10.1/a", "title": "A work", "venue": "Phys. Rev. D", "volume": "76",
                               "first_page": "013009"}) + "\n")
    CatalogStore(tmp_path / "c").build([src])
    return CatalogStore(tmp_path / "c").current()


def _answers(tmp_path):
    at = ParquetCatalog(tmp_path / "c").works_at_volume_page([("76", "13009"), ("76", "1")])
    return {pair: [(key, w.doi) for key, w in found] for pair, found in at.items()}


def test_an_index_without_its_page_lookup_gets_it_written_not_rebuilt(tmp_path):
    """An index made before the page lookup existed (or whose lookup was made for another index)
    stays current: only the two arrays and their stamp are written, nothing is rebuilt, and the
    index's own stamp (its format) is untouched, so older code reading it does not rebuild it."""
    gen = _one_work_catalog(tmp_path)
    stamp = json.loads((gen / "index.json").read_text())
    assert stamp["format"] == blocking.INDEX_FORMAT == 6
    for name in (PAGES_HASHES, PAGES_AT):
        (gen / name).unlink()
    (gen / PAGES_STAMP).write_text(json.dumps({**stamp, "n_works": 2}))  # made for another index
    kept = {name: (gen / name).stat().st_mtime_ns for name in ("index.json", "index_postings.npy",
                                                               "venue_locators.arrow")}
    assert index_upgrade.ensure_index(gen) is None  # the index itself is current
    assert {name: (gen / name).stat().st_mtime_ns for name in kept} == kept  # not rebuilt
    assert json.loads((gen / PAGES_STAMP).read_text()) == stamp and index_upgrade.pages_current(gen)
    assert _answers(tmp_path) == {("76", "13009"): [("physrevd", "10.1/a")]}


def test_a_generation_that_cannot_be_written_is_read_with_the_lookup_made_in_memory(tmp_path, monkeypatch):
    """A catalog in a folder this user may not write (a shared read-only mount) and without the
    page lookup still resolves, with the same answers; before, every run failed writing it."""
    gen = _one_work_catalog(tmp_path)
    for name in (PAGES_HASHES, PAGES_AT, PAGES_STAMP):
        (gen / name).unlink()

    def refused(path, *args):
        raise LedgerPathError(f"cannot write {path}: Permission denied")
    monkeypatch.setattr(hash_runs, "atomic_stream", refused)  # (every streamed .npy of the build goes through it)
    assert index_upgrade.ensure_index(gen) is None
    assert not (gen / PAGES_HASHES).exists() and not index_upgrade.pages_current(gen)
    assert _answers(tmp_path) == {("76", "13009"): [("physrevd", "10.1/a")]}
