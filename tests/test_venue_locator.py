"""Title-less references resolved by venue + volume + first page (issue 12).

The rule links only one work whose venue key, volume and first page the string prints and that
nothing in the string contradicts; two works on one locator are too close to call."""
import json

import pytest

from citeledger.catalog import CatalogStore, ParquetCatalog
from citeledger.sources import work_from_arxiv_snapshot
from resolvers.candidates import InMemoryRetriever
from resolvers.catalog import InMemoryCatalog
from resolvers.fuzzy import FuzzyResolver
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
    from resolvers.locator_match import match_locators
    from resolvers.parsing import parse_reference
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
    from citeledger.pipeline import resolve_batch_references
    v = resolve_batch_references([Reference("p", 1, "C. Balazs et al., Physical Review D 76, 013009 (2007)")],
                                 catalog)[0].verdict
    assert (v.status, v.work.work_id if v.work else None) == (Status.VERIFIED_FUZZY, "arxiv:0704.0001")


@pytest.mark.parametrize("raw", [
    "Dumas RK, Li C-P, Roshchin IV, Schuller IK, Aad G. Phys Lett B 2012;716:1.",
    "G. Aad, Physics Letters B (Elsevier, Amsterdam) 716, 1 (2012).",
])
def test_names_or_venue_taken_for_a_title_do_not_contradict(raw):
    """The parser may isolate author names or the venue as a 'title' of a title-less string."""
    v = resolve(raw, [HIGGS, OTHER])
    assert (v.status, v.work) == (Status.VERIFIED_FUZZY, HIGGS)


def test_locator_rows_keep_the_works_with_venue_volume_and_page_keyed_one_by_one():
    """The Arrow form of the locator rows equals keying each work alone (empty keys dropped)."""
    import pyarrow as pa

    from citeledger.venue_index import locator_rows
    from resolvers.journal_ref import number_key, venue_key

    rows = [("w1", "Phys. Rev. Lett.", "007", "0012"), ("w2", "", "1", "2"), ("w3", "Nature", None, "5"),
            ("w4", "Nature", "0", "00"), ("w5", None, "3", "4"), ("w6", "Phys Rev Lett", "7", "12"),
            ("w7", "Nature", " ", "1")]
    batch = pa.RecordBatch.from_pylist([dict(zip(("work_id", "venue", "volume", "first_page"), r)) for r in rows])
    want = [(venue_key(v), number_key(vol), number_key(p), w) for w, v, vol, p in rows
            if venue_key(v) and number_key(vol) and number_key(p)]
    got = locator_rows(batch).to_pylist()
    assert [(r["venue_key"], r["volume"], r["first_page"], r["work_id"]) for r in got] == want
    assert [w for *_, w in want] == ["w1", "w4", "w6"]
