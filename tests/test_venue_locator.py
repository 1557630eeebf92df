"""Title-less references resolved by venue + volume + first page.

The rule links only one work whose venue key, volume and first page the string prints and that
nothing in the string contradicts; two works on one locator are too close to call."""
import json

import pytest

from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog
from citeledger.index import index_upgrade
from citeledger.sources.source_rows import work_from_arxiv_snapshot
from resolvers.candidates.fuzzy import FuzzyResolver
from resolvers.candidates.retrieval import InMemoryRetriever
from resolvers.catalog import InMemoryCatalog
from resolvers.model import Reason, Reference, Status, Work
from resolvers.resolution import apply_rule_chain

HIGGS = Work("doi:10.1016/j.physletb.2012.08.020", doi="10.1016/j.physletb.2012.08.020",
             title="Observation of a new particle in the search for the Standard Model Higgs boson with the ATLAS "
                   "detector at the LHC", authors=("G. Aad",), year=2012, venue="Physics Letters B", volume="716",
             first_page="1", type="journal-article")
OTHER = Work("doi:10.1/other", doi="10.1/other", title="Another thing entirely about cats", authors=("Smith",),
             year=2012, venue="Phys. Rev. D", volume="716", first_page="1", type="journal-article")


def resolve(raw, works):
    catalog = InMemoryCatalog(works)
    return apply_rule_chain([Reference("p", 1, raw)], catalog, FuzzyResolver(InMemoryRetriever(works)))[0].verdict


@pytest.mark.parametrize("raw", [
    "G. Aad et al., Phys. Lett. B 716, 1 (2012)",
    "G. Aad et al., Phys.Lett.B716:1-29,2012",
    "Aad G, et al. Phys Lett B. 2012;716(1):1-29.",
])
def test_a_title_less_string_links_by_venue_volume_and_page(raw):
    v = resolve(raw, [HIGGS, OTHER])
    assert (v.status, v.reason, v.work) == (Status.VERIFIED_FUZZY, Reason.VENUE_VOLUME_PAGE, HIGGS)
    assert v.evidence["locator"] == {"venue_key": "physlettb", "volume": "716", "first_page": "1"}


@pytest.mark.parametrize("raw, against", [
    ("G. Aad et al., Phys. Lett. B 716, 1 (2009)", "year"),
    ("J. Smith et al., Phys. Lett. B 716, 1 (2012)", "first_author"),
    ('G. Aad et al., "Magnetic monopoles in the early universe revisited," Phys. Lett. B 716, 1 (2012)', "title"),
])
def test_a_contradiction_declines(raw, against):
    v = resolve(raw, [HIGGS, OTHER])
    assert v.status is Status.UNRESOLVED
    assert v.evidence["venue_locator"]["contradicts"] == against


def test_two_works_on_one_locator_are_too_close_to_call():
    erratum = Work("doi:10.1016/dup", doi="10.1016/dup", title="Observation of a new particle (duplicate record)",
                   authors=("G. Aad",), year=2012, venue="Phys. Lett. B", volume="716", first_page="1")
    v = resolve("G. Aad et al., Phys. Lett. B 716, 1 (2012)", [HIGGS, erratum])
    assert v.status is Status.UNRESOLVED
    assert v.evidence["venue_locator"]["same_locator"]


def test_a_preprint_and_its_journal_version_are_one_work():
    preprint = Work("arxiv:1207.7214", doi="10.1016/j.physletb.2012.08.020", arxiv_id="1207.7214", title=HIGGS.title,
                    authors=("G. Aad",), year=2012, venue="Phys.Lett.B", volume="716", first_page="1", type="preprint",
                    alt_dois=("10.48550/arxiv.1207.7214",))
    v = resolve("G. Aad et al., Phys. Lett. B 716, 1 (2012)", [HIGGS, preprint])
    assert v.status is Status.VERIFIED_FUZZY and v.work in (HIGGS, preprint)
    from resolvers.candidates.locator_match import match_locators
    from resolvers.parsing.fields import parse_reference
    key = ("physlettb", "716", "1")
    outcome = match_locators(parse_reference("G. Aad et al., Phys. Lett. B 716, 1 (2012)"), [key], {key: [preprint, HIGGS]})
    assert outcome.work == HIGGS  # the journal version before its preprint


def test_a_string_naming_another_identifier_is_not_linked_by_its_locator():
    v = resolve("G. Aad et al., Phys. Lett. B 716, 1 (2012), doi:10.9999/else", [HIGGS, OTHER])
    assert not v.status.is_link


def test_arxiv_snapshot_work_takes_venue_volume_and_page_from_its_journal_ref():
    row = work_from_arxiv_snapshot({"id": "0704.0001", "title": "Diphoton", "authors": "C. Balazs",
                                    "journal-ref": "Phys.Rev.D76:013009,2007", "versions": []})
    assert (row.venue, row.volume, row.first_page) == ("Phys.Rev.D", "76", "013009")
    unparsed = work_from_arxiv_snapshot({"id": "0704.0002", "title": "T", "journal-ref": "To appear", "versions": []})
    assert (unparsed.venue, unparsed.volume, unparsed.first_page) == ("To appear", None, None)


def test_the_parquet_catalog_finds_an_arxiv_work_by_its_journal_ref(tmp_path):
    src = tmp_path / "arxiv.jsonl"
    src.write_text(json.dumps({"id": "0704.0001", "title": "Calculation of prompt diphoton production cross sections",
                               "authors": "C. Balazs, E. L. Berger", "journal-ref": "Phys.Rev.D76:013009,2007",
                               "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}]}) + "\n")
    CatalogStore(tmp_path / "c").build([src])
    catalog = ParquetCatalog(tmp_path / "c")
    found = catalog.works_by_locator([("physrevd", "76", "13009"), ("physrevd", "76", "1")])
    assert [w.work_id for w in found[("physrevd", "76", "13009")]] == ["arxiv:0704.0001"]
    assert ("physrevd", "76", "1") not in found
    from citeledger.run.batches import resolve_batch_references
    v = resolve_batch_references([Reference("p", 1, "C. Balazs et al., Physical Review D 76, 013009 (2007)")],
                                 catalog)[0].verdict
    assert (v.status, v.work.work_id if v.work else None) == (Status.VERIFIED_FUZZY, "arxiv:0704.0001")
    # a venue OCR misread ("Pbysical Rcview D"): found among the works at its volume and page
    at = catalog.works_at_volume_page([("76", "13009"), ("76", "1")])
    assert [(key, w.work_id) for key, w in at[("76", "13009")]] == [("physrevd", "arxiv:0704.0001")]
    assert ("76", "1") not in at
    v = resolve_batch_references([Reference("p", 1, "C. Balazs et al., Pbysical Rcview D 76, 013009 (2007)")],
                                 catalog)[0].verdict
    assert (v.status, v.work.work_id if v.work else None) == (Status.VERIFIED_FUZZY, "arxiv:0704.0001")
    assert v.evidence["locator"]["venue_ocr_skeleton"] is True


@pytest.mark.parametrize("raw", [
    "Dumas RK, Li C-P, Roshchin IV, Schuller IK, Aad G. Phys Lett B 2012;716:1.",
    "G. Aad, Physics Letters B (Elsevier, Amsterdam) 716, 1 (2012).",
])
def test_names_or_venue_taken_for_a_title_do_not_contradict(raw):
    """The parser may isolate author names or the venue as a 'title' of a title-less string."""
    v = resolve(raw, [HIGGS, OTHER])
    assert (v.status, v.work) == (Status.VERIFIED_FUZZY, HIGGS)


def test_locator_lookup_reads_the_mapped_files_only_and_agrees_with_the_in_memory_catalog(tmp_path):
    """``works_by_locator`` answers from the memory-mapped ``venue_locators.arrow`` and ``works.arrow``
    (no join of works.parquet, no copy of the index per process): with works.parquet gone it still
    gives every work of each key, ordered by work id, as ``InMemoryCatalog`` does."""
    rows = [{"doi": f"10.1/w{i}", "title": f"Work number {i}", "authors": ["Aad"], "year": 2012,
             "venue": venue, "volume": volume, "first_page": page}
            for i, (venue, volume, page) in enumerate([
                ("Physics Letters B", "716", "1"), ("Phys. Lett. B", "716", "001"), ("Physics Letters B", "716", "30"),
                ("Phys. Rev. D", "76", "013009"), ("Nature", "409", "860"), ("Nature", None, "860"), (None, "1", "2")])]
    src = tmp_path / "works.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    CatalogStore(tmp_path / "c").build([src])
    catalog = ParquetCatalog(tmp_path / "c")
    gen = catalog.generation_dir
    assert (gen / "venue_locators.arrow").exists() and not (gen / "venue_locators.parquet").exists()
    (gen / "works.parquet").rename(tmp_path / "away.parquet")
    keys = [("physlettb", "716", "1"), ("physlettb", "716", "30"), ("physrevd", "76", "13009"), ("nat", "409", "860"),
            ("nat", "1", "860"), ("physlettb", "716", "2"), ("", "1", "2")]
    found = catalog.works_by_locator(keys)
    expected = InMemoryCatalog([work_of(r, i) for i, r in enumerate(rows)]).works_by_locator(keys)
    assert {k: [w.work_id for w in v] for k, v in found.items()} == \
        {k: [w.work_id for w in v] for k, v in expected.items()}
    assert [w.work_id for w in found[("physlettb", "716", "1")]] == ["doi:10.1/w0", "doi:10.1/w1"]
    assert len(found) == 4


def work_of(row, i):
    return Work(f"doi:{row['doi']}", doi=row["doi"], title=row["title"], authors=tuple(row["authors"]), year=row["year"],
                venue=row["venue"], volume=row["volume"], first_page=row["first_page"])


def test_an_index_of_format_5_gets_only_its_locator_file(tmp_path):
    """A catalog indexed before the locators were a mapped file (format 5: everything else the
    same) is brought up to date by writing venue_locators.arrow alone, not by a whole rebuild."""
    src = tmp_path / "works.jsonl"
    src.write_text(json.dumps({"doi": "10.1/a", "title": "A work", "venue": "Phys. Rev. D", "volume": "76",
                               "first_page": "013009"}) + "\n")
    CatalogStore(tmp_path / "c").build([src])
    gen = CatalogStore(tmp_path / "c").current()
    stamp = json.loads((gen / "index.json").read_text())
    (gen / "index.json").write_text(json.dumps({**stamp, "format": 5}))
    (gen / "venue_locators.arrow").unlink()
    (gen / "venue_locators.parquet").write_bytes(b"format 5's file")
    postings = (gen / "index_postings.npy").stat()
    done = index_upgrade.ensure_index(gen)
    assert done is not None and done["upgraded_from_format"] == 5
    assert (gen / "index_postings.npy").stat().st_mtime_ns == postings.st_mtime_ns  # not rebuilt
    assert not (gen / "venue_locators.parquet").exists()
    assert json.loads((gen / "index.json").read_text()) == stamp and index_upgrade.ensure_index(gen) is None
    assert [w.doi for w in ParquetCatalog(tmp_path / "c").works_by_locator([("physrevd", "76", "13009")])[
        ("physrevd", "76", "13009")]] == ["10.1/a"]


def test_locator_rows_keep_the_works_with_venue_volume_and_page_keyed_one_by_one():
    """The Arrow form of the locator rows equals keying each work alone (empty keys dropped)."""
    import pyarrow as pa

    from citeledger.index.venue_index import locator_rows
    from resolvers.identifiers.journal_ref import number_key, venue_key

    rows = [("w1", "Phys. Rev. Lett.", "007", "0012"), ("w2", "", "1", "2"), ("w3", "Nature", None, "5"),
            ("w4", "Nature", "0", "00"), ("w5", None, "3", "4"), ("w6", "Phys Rev Lett", "7", "12"),
            ("w7", "Nature", " ", "1")]
    batch = pa.RecordBatch.from_pylist([dict(zip(("work_id", "venue", "volume", "first_page"), r)) for r in rows])
    want = [(venue_key(v), number_key(vol), number_key(p), 10 + i) for i, (w, v, vol, p) in enumerate(rows)
            if venue_key(v) and number_key(vol) and number_key(p)]
    got = locator_rows(batch, 10).to_pylist()
    assert [(r["venue_key"], r["volume"], r["first_page"], r["row"]) for r in got] == want
    assert [row for *_, row in want] == [10, 13, 15]  # w1, w4, w6
