"""Catalog readers of the big snapshots on real recorded records (tests/fixtures/catalog/PROVENANCE.md):
OpenAlex works, the Crossref public data folder, arXiv snapshot details and OAI-PMH, DBLP XML;
formats recognised by content and never misread; the details surviving the merge."""
import copy
import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from citeledger.app_errors import CatalogSourceError
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.sources.openalex_snapshot import work_from_openalex
from citeledger.sources.source_files import iter_work_rows, sniff_format
from citeledger.sources.source_rows import SourceFormat, split_arxiv_authors

CAT = Path(__file__).parent / "fixtures" / "catalog"
OPENALEX = CAT / "openalex" / "works"
NEW_PART = OPENALEX / "updated_date=2025-06-11" / "part_000.gz"
OLD_PART = OPENALEX / "updated_date=2024-01-15" / "part_000.gz"
DBLP = CAT / "dblp" / "dblp.xml"
OAI = CAT / "arxiv_oai" / "oai_arxivraw_getrecord_1304.4214_legacy2013.xml"


def openalex_records(part: Path = NEW_PART) -> list[dict]:
    return [json.loads(line) for line in gzip.open(part, "rt")]


def works_of(catalog_dir: Path) -> dict[str, dict]:
    gen = CatalogStore(catalog_dir).current()
    rows = duckdb.sql(f"select * from read_parquet('{gen / 'works.parquet'}')").to_arrow_table().to_pylist()
    return {r["work_id"]: r for r in rows}


def write_jsonl_gz(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))
    return path


# --- OpenAlex ---------------------------------------------------------------------------------

def test_openalex_real_record_field_by_field():
    rec = openalex_records()[0]  # W2741809807, the recorded openalex-python fixture, verbatim
    row = work_from_openalex(rec)
    assert row.work_id == "doi:10.7717/peerj.4375" and row.doi == "10.7717/peerj.4375"
    assert row.title == rec["title"]
    assert list(row.authors) == [a["author"]["display_name"] for a in rec["authorships"]]
    assert row.year == rec["publication_year"] == 2018
    assert row.venue == rec["primary_location"]["source"]["display_name"] == "PeerJ"
    assert (row.volume, row.first_page, row.issue) == (rec["biblio"]["volume"], rec["biblio"]["first_page"], None)
    assert row.pmid == "29456894" and row.pmcid == "PMC5815332"
    assert row.type == rec["type"] == "article" and row.arxiv_id is None and row.alt_dois == ()
    assert row.relations is None  # is_retracted false: no notice
    assert row.source_ids == ("openalex:W2741809807",) and row.source_updated == rec["updated_date"]


def test_openalex_arxiv_id_from_datacite_doi_or_arxiv_location():
    rec = openalex_records()[0]
    preprint = dict(copy.deepcopy(rec), doi="https://doi.org/10.48550/arxiv.1706.03762", ids={})
    row = work_from_openalex(preprint)
    assert (row.work_id, row.arxiv_id, row.doi) == ("arxiv:1706.03762", "1706.03762", "10.48550/arxiv.1706.03762")
    located = copy.deepcopy(rec)
    located["locations"].append({"landing_page_url": "http://arxiv.org/abs/1706.03762v5", "source": None})
    row = work_from_openalex(located)
    assert (row.work_id, row.arxiv_id, row.doi) == ("arxiv:1706.03762", "1706.03762", "10.7717/peerj.4375")
    assert row.alt_dois == ("10.48550/arxiv.1706.03762",)


def test_openalex_snapshot_folder_newest_updated_date_wins(tmp_path):
    # the works/ folder as OpenAlex ships it: manifest + updated_date partitions; the 2024 copy of
    # W2741809807 says volume 5, another title and is_retracted; the 2025 copy wins whole
    report = CatalogStore(tmp_path / "a").build([OPENALEX])
    formats = sorted((Path(f["file"]).relative_to(OPENALEX).as_posix(), f["format"]) for f in report.files)
    assert formats == [("manifest", "companion"), ("updated_date=2024-01-15/part_000.gz", "openalex"),
                       ("updated_date=2025-06-11/part_000.gz", "openalex")]
    work = works_of(tmp_path / "a")["doi:10.7717/peerj.4375"]
    assert (work["title"], work["volume"], work["relations"]) == (openalex_records()[0]["title"], "6", None)
    assert work["source_updated"] == "2025-06-11T00:03:37.532706" and work["sources"] == ["openalex"]
    # given newest first, or the old part in a later build, the old copy still loses
    CatalogStore(tmp_path / "b").build([NEW_PART, OLD_PART])
    store = CatalogStore(tmp_path / "c")
    store.build([NEW_PART])
    second = store.build([OLD_PART])
    for name in ("b", "c"):
        got = works_of(tmp_path / name)["doi:10.7717/peerj.4375"]
        assert (got["title"], got["volume"], got["relations"]) == (work["title"], "6", None)
    assert second.added == 0


def test_openalex_is_retracted_is_a_notice_source(tmp_path):
    from citeledger.run.notice_check import work_notice
    from resolvers.notices.standing import NoticeIndex

    rec = dict(openalex_records()[0], is_retracted=True)
    CatalogStore(tmp_path / "c").build([write_jsonl_gz(tmp_path / "part_000.gz", [rec])])
    work = works_of(tmp_path / "c")["doi:10.7717/peerj.4375"]
    assert json.loads(work["relations"]) == {"openalex": {"id": "W2741809807", "is_retracted": True}}
    notice = work_notice(work, NoticeIndex(), checked_at=None)
    assert notice.standing.value == "retracted"
    assert [e.source for e in notice.events] == ["openalex"] and "openalex" in notice.sources_checked


def test_relations_of_two_sources_are_both_kept_and_a_rebuild_changes_nothing(tmp_path):
    crossref = [json.loads(line) for line in (CAT / "crossref_messages.jsonl").read_text().splitlines()]
    corrected = next(m for m in crossref if m.get("updated-by"))
    oa = dict(openalex_records()[0], doi="https://doi.org/" + corrected["DOI"], is_retracted=True)
    files = [write_jsonl_gz(tmp_path / "oa.gz", [oa]), CAT / "crossref_messages.jsonl"]
    store = CatalogStore(tmp_path / "c")
    first = store.build(files)
    work = works_of(tmp_path / "c")["doi:" + corrected["DOI"].lower()]
    relations = json.loads(work["relations"])
    assert relations["openalex"]["is_retracted"] is True and relations["updated-by"] == corrected["updated-by"]
    assert store.build(files).fingerprint == first.fingerprint


# --- recognising formats ------------------------------------------------------------------------

def test_openalex_and_dblp_forced_as_works_jsonl_are_detected_not_misread(tmp_path):
    assert sniff_format(NEW_PART) is SourceFormat.OPENALEX  # (it was read as works JSONL before)
    assert sniff_format(DBLP) is SourceFormat.DBLP  # (it was refused before)
    for path, name in ((NEW_PART, "OpenAlex"), (DBLP, "DBLP")):
        with pytest.raises(CatalogSourceError, match=f"holds {name}.*not works JSONL"):
            CatalogStore(tmp_path / "c").build([path], fmt=SourceFormat.WORKS_JSONL)
    # an OpenAlex line inside a works JSONL file is a reject naming it, not a half-empty work
    mixed = tmp_path / "works.jsonl"
    mixed.write_text(json.dumps({"doi": "10.1000/a", "arxiv_id": None, "title": "A"}) + "\n"
                     + json.dumps(openalex_records()[0]) + "\n")
    report = CatalogStore(tmp_path / "m").build([mixed]).files[0]
    assert (report["rows"], report["rejects"]) == (1, 1)
    assert "row is OpenAlex works snapshot" in report["reject_examples"][0]


def test_unknown_shape_names_the_formats_it_can_read(tmp_path):
    odd = tmp_path / "x.jsonl"
    odd.write_text(json.dumps({"name": "n", "value": 1}) + "\n")
    xml = tmp_path / "x.xml"
    xml.write_text("<?xml version='1.0'?><catalog><book/></catalog>\n")
    for path in (odd, xml):
        with pytest.raises(CatalogSourceError) as err:
            sniff_format(path)
        assert "readable formats: works JSONL" in str(err.value) and "DBLP XML" in str(err.value)
        assert "OpenAlex works snapshot" in str(err.value) and str(path) in str(err.value)


# --- Crossref public data file ----------------------------------------------------------------

def test_crossref_public_data_folder_of_items_files(tmp_path):
    messages = [json.loads(line) for line in (CAT / "crossref_messages.jsonl").read_text().splitlines()]
    folder = tmp_path / "April 2025 Public Data File from Crossref"
    folder.mkdir()
    for i, chunk in enumerate((messages[:2], messages[2:])):  # one compact {"items": [...]} per file
        (folder / f"{i}.json.gz").write_bytes(gzip.compress(json.dumps({"items": chunk}).encode()))
    report = CatalogStore(tmp_path / "a").build([folder])
    assert [f["format"] for f in report.files] == ["crossref", "crossref"]
    assert sum(f["rows"] for f in report.files) == len(messages)
    CatalogStore(tmp_path / "b").build([CAT / "crossref_messages.jsonl"])
    assert works_of(tmp_path / "a") == works_of(tmp_path / "b")  # same works, relations kept
    assert any(w["relations"] and "updated-by" in w["relations"] for w in works_of(tmp_path / "a").values())


# --- arXiv ----------------------------------------------------------------------------------------

def test_arxiv_details_are_kept_and_survive_the_merge(tmp_path):
    snapshot = [json.loads(line) for line in (CAT / "arxiv_snapshot.jsonl").read_text().splitlines()]
    oa = dict(openalex_records()[0], doi="https://doi.org/10.48550/arxiv.0704.0001")
    CatalogStore(tmp_path / "c").build([CAT / "arxiv_snapshot.jsonl", CAT / "crossref_messages.jsonl",
                                        write_jsonl_gz(tmp_path / "oa.gz", [oa])])
    works = works_of(tmp_path / "c")
    first = works["arxiv:0704.0001"]
    assert sorted(first["sources"]) == ["arxiv_snapshot", "openalex"]
    assert first["categories"] == ["hep-ph"]
    assert first["versions"] == [{"version": "v1", "created": "2007-04-02T19:18:42Z"},
                                 {"version": "v2", "created": "2007-07-24T20:10:27Z"}]
    assert (first["journal_ref"], first["comments"]) == ("Phys.Rev.D76:013009,2007", snapshot[0]["comments"])
    assert works["arxiv:0704.0002"]["categories"] == ["math.CO", "cs.CG"]
    crossref_only = works["doi:10.1002/ajmg.b.31237"]
    assert (crossref_only["categories"], crossref_only["versions"]) == ([], [])
    assert (crossref_only["journal_ref"], crossref_only["comments"]) == (None, None)


def test_arxiv_oai_arxivraw_record():
    rows = list(iter_work_rows(OAI))
    assert sniff_format(OAI) is SourceFormat.ARXIV_OAI and len(rows) == 1
    row = rows[0]
    assert (row.work_id, row.arxiv_id, row.year, row.type) == ("arxiv:1304.4214", "1304.4214", 2013, "preprint")
    assert row.title == "Neutron Scattering and Its Application to Strongly Correlated Systems"
    assert row.authors == ("Igor A. Zaliznyak", "John M. Tranquada")
    assert row.categories == ("cond-mat.str-el",)
    assert row.versions == ({"version": "v1", "created": "2013-04-15T19:33:21Z"},)
    assert row.comments.startswith('31 pages, chapter for "Strongly Correlated Systems: Experimental Techniques"')


# --- DBLP -----------------------------------------------------------------------------------------

def test_dblp_real_excerpt_field_by_field_with_its_dtd_or_without(tmp_path):
    rows = {r.source_ids[0]: r for r in iter_work_rows(DBLP)}
    assert len(rows) == 10
    s = rows["dblp:journals/acta/Schonhage77"]  # &ouml; &uuml; from dblp.dtd
    assert s.title == "Schnelle Multiplikation von Polynomen über Körpern der Charakteristik 2"
    assert (s.authors, s.year, s.venue, s.volume, s.first_page) == (("Arnold Schönhage",), 1977, "Acta Inf.", "7", "395")
    assert (s.work_id, s.doi, s.type) == ("doi:10.1007/bf00289470", "10.1007/bf00289470", "article")
    b = rows["dblp:journals/acta/BozapalidisFR12"]  # "Zolt&aacute;n F&uuml;l&ouml;p 0001": homonym number dropped
    assert b.authors == ("Symeon Bozapalidis", "Zoltán Fülöp", "George Rahonis") and b.issue == "1"
    alone = tmp_path / "dblp.xml.gz"  # no dblp.dtd beside it: the bundled entity set
    alone.write_bytes(gzip.compress(DBLP.read_bytes()))
    assert {r.source_ids[0]: r for r in iter_work_rows(alone)} == rows


DBLP_SHAPES = """<?xml version="1.0" encoding="ISO-8859-1"?>
<!DOCTYPE dblp SYSTEM "dblp.dtd">
<dblp>
<article mdate="2025-09-10" key="journals/corr/abs-2508-04024" publtype="informal">
<author>Nihar B. Shah</author><author>Andrew McCallum</author>
<title>Identity Theft in AI Conference Peer Review.</title><year>2025</year>
<volume>abs/2508.04024</volume><journal>CoRR</journal>
<ee type="oa">https://doi.org/10.48550/arXiv.2508.04024</ee></article>
<article mdate="2018-08-13" key="journals/corr/VaswaniSPUJGKP17">
<author>Ashish Vaswani</author><title>Attention Is All You Need.</title><year>2017</year>
<volume>abs/1706.03762</volume><journal>CoRR</journal></article>
<inproceedings mdate="2023-05-02" key="conf/inlg/DusekK20">
<author>Ondrej Du&scaron;ek</author><title>Evaluating <i>Semantic</i> Accuracy.</title>
<pages>131-137</pages><year>2020</year><booktitle>INLG</booktitle>
<ee>https://aclanthology.org/2020.inlg-1.19/</ee><ee>https://doi.org/10.18653/v1/2020.inlg-1.19</ee>
</inproceedings>
<www mdate="2020-01-01" key="homepages/s/NiharBShah"><author>Nihar B. Shah</author><title>Home Page</title></www>
<article mdate="2020-01-01" key="journals/x/Empty"><author>Nobody</author><year>2020</year></article>
</dblp>
"""


def test_dblp_corr_inproceedings_person_pages_and_rejects(tmp_path):
    # a DBLP-shaped file (not a recorded one: see PROVENANCE.md) with the record kinds the excerpt lacks
    path = tmp_path / "dblp.xml"
    path.write_bytes(DBLP_SHAPES.encode("latin-1"))
    report = CatalogStore(tmp_path / "c").build([path]).files[0]
    assert (report["format"], report["rows"], report["rejects"]) == ("dblp", 3, 1)
    assert report["skipped"] == {"person page (www), not a work": 1}
    assert "journals/x/Empty has no title and no DOI" in report["reject_examples"][0]
    works = works_of(tmp_path / "c")
    corr = works["arxiv:2508.04024"]
    assert (corr["doi"], corr["venue"], corr["volume"], corr["type"]) == (
        "10.48550/arxiv.2508.04024", "CoRR", "abs/2508.04024", "preprint")
    assert works["arxiv:1706.03762"]["title"] == "Attention Is All You Need"
    inproc = works["doi:10.18653/v1/2020.inlg-1.19"]
    assert (inproc["title"], inproc["authors"], inproc["venue"], inproc["first_page"]) == (
        "Evaluating Semantic Accuracy", ["Ondrej Dušek"], "INLG", "131")


def test_dblp_bad_xml_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "dblp.xml"
    path.write_text('<?xml version="1.0"?>\n<dblp>\n<article key="a"><title>T</article>\n</dblp>\n')
    with pytest.raises(CatalogSourceError, match=r"dblp.xml:3: bad XML"):
        CatalogStore(tmp_path / "c").build([path])


def test_a_catalog_built_before_the_detail_columns_still_merges(tmp_path):
    store = CatalogStore(tmp_path / "c")
    store.build([CAT / "works.jsonl"])
    works = store.current() / "works.parquet"
    old = duckdb.sql(f"select * exclude (categories, versions, journal_ref, comments, issue, pmcid, source_ids, "
                     f"source_updated) from read_parquet('{works}')").to_arrow_table()
    import pyarrow.parquet as pq

    pq.write_table(old, works)
    store.build([CAT / "arxiv_snapshot.jsonl"])
    assert works_of(tmp_path / "c")["arxiv:0704.0001"]["categories"] == ["hep-ph"]
    shutil.rmtree(tmp_path / "c")


OAI_ARXIV_FORMAT = """<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">
<ListRecords>
<record><header><identifier>oai:arXiv.org:0704.0001</identifier><datestamp>2008-11-13</datestamp></header>
<metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/">
<id>0704.0001</id><created>2007-04-02</created><updated>2007-07-24</updated>
<authors><author><keyname>Bal\u00e1zs</keyname><forenames>C.</forenames></author>
<author><keyname>Berger</keyname><forenames>E. L.</forenames></author></authors>
<title>Calculation of prompt diphoton production cross sections at Tevatron and
  LHC energies</title><categories>hep-ph</categories>
<journal-ref>Phys.Rev.D76:013009,2007</journal-ref><doi>10.1103/PhysRevD.76.013009</doi>
</arXiv></metadata></record>
<record><header status="deleted"><identifier>oai:arXiv.org:0704.0002</identifier></header></record>
</ListRecords>
</OAI-PMH>
"""


def test_arxiv_oai_arxiv_format_and_deleted_records(tmp_path):
    # a ListRecords page in the OAI ``arXiv`` metadata format (shape written after arXiv's OAI
    # schema, values from the 0704.0001 snapshot record), with a deleted record
    path = tmp_path / "ListRecords.xml"
    path.write_text(OAI_ARXIV_FORMAT, encoding="utf-8")
    report = CatalogStore(tmp_path / "c").build([path]).files[0]
    assert (report["format"], report["rows"], report["rejects"], report["skipped"]) == (
        "arxiv_oai", 1, 0, {"deleted OAI record": 1})
    work = works_of(tmp_path / "c")["arxiv:0704.0001"]
    assert work["authors"] == ["C. Balázs", "E. L. Berger"] and work["year"] == 2007
    assert work["doi"] == "10.1103/physrevd.76.013009" and work["journal_ref"] == "Phys.Rev.D76:013009,2007"
    assert work["versions"] == [{"version": "v1", "created": "2007-04-02T00:00:00Z"}]
    assert work["title"] == "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"


def test_cli_forcing_works_jsonl_on_an_openalex_part_is_one_line_exit_2(tmp_path, capsys):
    from citeledger import cli

    code = cli.main(["catalog", "build", "--catalog", str(tmp_path / "c"), "--format", "works_jsonl", str(NEW_PART)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(NEW_PART) in err[0] and "OpenAlex" in err[0]
    assert cli.main(["catalog", "build", "--catalog", str(tmp_path / "c"), str(OPENALEX)]) == 0
    out = capsys.readouterr().out
    assert "manifest: companion, 0 rows" in out and "part_000.gz: openalex, 2 rows, 0 rejected" in out


ARXIV_AUTHORS = [json.loads(line) for line in (Path(__file__).parent / "golden" / "arxiv_authors.jsonl").open()]


@pytest.mark.parametrize("case", ARXIV_AUTHORS, ids=[c["why"][:50] for c in ARXIV_AUTHORS])
def test_arxiv_author_fields_give_the_names(case):
    """arXiv author fields (real rows of shared/data/catalog/arxiv_metadata_sample): the names alone,
    whatever affiliations, numbering and LaTeX they carry (nested affiliations and ', and' once gave
    "Germany)" and "and M. Bayer" as authors)."""
    assert split_arxiv_authors(case["authors"]) == case["names"]
