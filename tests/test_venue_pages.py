"""The (volume, first page) lookup of the venue locators (index format 7): what a string whose
venue OCR misread asks for, answered by binary search instead of a scan of the catalog."""
import json
import random

import pyarrow as pa

from citeledger import blocking
from citeledger.catalog import CatalogStore, ParquetCatalog
from citeledger.venue_index import PAGES_AT, PAGES_HASHES, LocatorIndex, locator_rows, locator_table


def _scan(table, pairs):
    """What the lookup answered before format 7: every entry at a wanted (volume, page), in table order."""
    wanted = {p for p in pairs if all(p)}
    out = {}
    for entry in table.to_pylist():
        if (entry["volume"], entry["first_page"]) in wanted:
            out.setdefault((entry["volume"], entry["first_page"]), []).append((entry["venue_key"], entry["row"]))
    return out


def test_the_volume_page_lookup_answers_what_a_scan_of_the_locators_finds():
    rng = random.Random(7)
    venues = ["Phys. Rev. D", "Phys. Rev. C", "Nature", "Physica A", "J. Chem. Phys."]
    rows = [{"venue": rng.choice(venues), "volume": str(rng.randint(1, 30)), "first_page": str(rng.randint(1, 40))}
            for _ in range(3000)]
    table = locator_table([locator_rows(pa.RecordBatch.from_pylist(rows), 0)])
    index = LocatorIndex(table)
    pairs = [(str(rng.randint(0, 32)), str(rng.randint(0, 42))) for _ in range(300)] + [("", "5"), ("5", "")]
    found = index.rows_at_volume_page(pairs)
    assert found == _scan(table, pairs)
    assert sum(len(v) for v in found.values()) > 300  # many pairs hold several works


def test_an_index_of_format_6_gets_only_its_page_lookup(tmp_path):
    """A catalog indexed in format 6 (everything but the page lookup) is brought up to date by
    writing the two page arrays from its own locator file, not by a rebuild."""
    src = tmp_path / "works.jsonl"
    src.write_text(json.dumps({"doi": "10.1/a", "title": "A work", "venue": "Phys. Rev. D", "volume": "76",
                               "first_page": "013009"}) + "\n")
    CatalogStore(tmp_path / "c").build([src])
    gen = CatalogStore(tmp_path / "c").current()
    stamp = json.loads((gen / "index.json").read_text())
    assert stamp["format"] == blocking.INDEX_FORMAT == 7
    (gen / "index.json").write_text(json.dumps({**stamp, "format": 6}))
    for name in (PAGES_HASHES, PAGES_AT):
        (gen / name).unlink()
    kept = {name: (gen / name).stat().st_mtime_ns for name in ("index_postings.npy", "venue_locators.arrow")}
    done = blocking.ensure_index(gen)
    assert done is not None and done["upgraded_from_format"] == 6
    assert {name: (gen / name).stat().st_mtime_ns for name in kept} == kept  # not rebuilt
    assert json.loads((gen / "index.json").read_text()) == stamp and blocking.ensure_index(gen) is None
    at = ParquetCatalog(tmp_path / "c").works_at_volume_page([("76", "13009"), ("76", "1")])
    assert [(key, w.doi) for key, w in at[("76", "13009")]] == [("physrevd", "10.1/a")]
    assert ("76", "1") not in at
