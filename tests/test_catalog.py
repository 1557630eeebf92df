"""Catalog build: formats recognised by content, idempotent merges, stable work ids, cross-walks."""
import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeledger.app_errors import CatalogSourceError
from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog
from citeledger.index import index_upgrade
from citeledger.sources.source_files import sniff_format
from citeledger.sources.source_rows import SourceFormat

FIXTURES = Path(__file__).parent / "fixtures"

CAT = FIXTURES / "catalog"


def works_of(catalog_dir: Path) -> list[dict]:
    gen = CatalogStore(catalog_dir).current()
    return duckdb.sql(f"select * from read_parquet('{gen / 'works.parquet'}') order by work_id").to_arrow_table().to_pylist()


@pytest.mark.parametrize("name, fmt", [
    ("works.jsonl", SourceFormat.WORKS_JSONL),
    ("arxiv_snapshot.jsonl", SourceFormat.ARXIV_SNAPSHOT),
    ("crossref_messages.jsonl", SourceFormat.CROSSREF),
])
def test_formats_are_recognised_by_content_not_name(tmp_path, name, fmt):
    renamed = tmp_path / "source.data"
    shutil.copy(CAT / name, renamed)
    assert sniff_format(renamed) is fmt
    gz = tmp_path / "source.gz"
    gz.write_bytes(gzip.compress((CAT / name).read_bytes()))
    assert sniff_format(gz) is fmt


def test_crossref_items_file_and_envelope(tmp_path):
    messages = [json.loads(line) for line in (CAT / "crossref_messages.jsonl").read_text().splitlines()]
    items = tmp_path / "crossref-public-data.json"
    items.write_text(json.dumps({"items": messages}, indent=2))
    envelope = tmp_path / "envelopes.jsonl"
    envelope.write_text("\n".join(json.dumps({"status": "ok", "message-type": "work", "message": m})
                                  for m in messages) + "\n")
    assert sniff_format(items) is SourceFormat.CROSSREF
    a, b = tmp_path / "a", tmp_path / "b"
    CatalogStore(a).build([items])
    CatalogStore(b).build([envelope])
    assert [w["work_id"] for w in works_of(a)] == [w["work_id"] for w in works_of(b)]
    assert len(works_of(a)) == len(messages)


def test_unknown_format_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    with pytest.raises(CatalogSourceError, match="notes.txt:1"):
        CatalogStore(tmp_path / "c").build([bad])


def test_build_twice_and_overlapping_adds_nothing_twice(tmp_path):
    files = sorted(CAT.glob("*.jsonl"))
    store = CatalogStore(tmp_path / "c")
    first = store.build(files)
    second = store.build(files)
    third = store.build(files[:1])
    assert first.works == second.works == third.works
    assert second.added == 0 and third.added == 0
    assert first.fingerprint == second.fingerprint == third.fingerprint
    once = CatalogStore(tmp_path / "once").build(files)
    assert once.fingerprint == first.fingerprint
    # the live generation and the previous one (kept for readers mid-query) are left behind
    assert sorted(p.name for p in (tmp_path / "c").iterdir() if p.name.startswith("gen-"))[-1:] == [third.generation]
    assert len([p for p in (tmp_path / "c").iterdir() if p.name.startswith("gen-")]) <= 2


def test_work_ids_are_stable_and_readable(fixture_catalog):
    ids = {w["work_id"] for w in works_of(fixture_catalog)}
    assert "arxiv:0704.0001" in ids
    assert "arxiv:hep-th/9901001" in ids
    assert "doi:10.1002/ajmg.b.31237" in ids
    assert "doi:10.1055/s-0028-1107790" in ids


def test_crosswalks_journal_doi_and_arxiv_doi(fixture_catalog):
    cat = ParquetCatalog(fixture_catalog)
    by_doi = cat.works_by_doi(["10.1103/physrevd.76.013009", "10.48550/arxiv.0704.0002", "10.48550/arxiv.0704.0001"])
    assert by_doi["10.1103/physrevd.76.013009"].work_id == "arxiv:0704.0001"
    assert by_doi["10.48550/arxiv.0704.0001"].work_id == "arxiv:0704.0001"
    assert by_doi["10.48550/arxiv.0704.0002"].work_id == "arxiv:0704.0002"
    assert cat.works_by_arxiv_id(["hep-th/9901001"])["hep-th/9901001"].title


def test_identifier_lookups_are_memory_mapped_and_check_the_key(fixture_catalog):
    """The identifier lookup keeps no per-identifier heap and never trusts a hash alone:
    a stored key that differs from the asked one (a hash collision) is a miss, not that work."""
    import numpy as np
    import pyarrow as pa

    cat = ParquetCatalog(fixture_catalog)
    ids = cat._part("identifiers")
    assert isinstance(ids.keys_by_hash.hashes, np.memmap) and isinstance(ids.rows, np.memmap)
    assert cat.works_by_doi(["10.1002/ajmg.b.31237", "10.9999/absent"]).keys() == {"10.1002/ajmg.b.31237"}
    ids.keys = pa.chunked_array([pa.array(["doi\tsomething-else"] * len(ids.keys), pa.large_string())])
    assert cat.works_by_doi(["10.1002/ajmg.b.31237"]) == {}


def test_a_journal_doi_that_is_a_work_of_its_own_wins_over_the_preprint(tmp_path):
    journal = tmp_path / "journal.jsonl"
    journal.write_text(json.dumps({"doi": "10.1103/PhysRevD.76.013009", "arxiv_id": None,
                                   "title": "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies",
                                   "authors": ["Balazs"], "year": 2007, "venue": "Phys Rev D", "volume": "76",
                                   "first_page": "013009"}) + "\n")
    store = CatalogStore(tmp_path / "c")
    store.build([CAT / "arxiv_snapshot.jsonl", journal])
    cat = ParquetCatalog(tmp_path / "c")
    assert cat.works_by_doi(["10.1103/physrevd.76.013009"])["10.1103/physrevd.76.013009"].work_id == \
        "doi:10.1103/physrevd.76.013009"
    assert cat.works_by_arxiv_id(["0704.0001"])["0704.0001"].work_id == "arxiv:0704.0001"


def test_fields_merge_by_source_precedence(tmp_path):
    thin = tmp_path / "thin.jsonl"
    thin.write_text(json.dumps({"doi": "10.1002/AJMG.B.31237", "arxiv_id": None, "title": "sleep apnea (short)",
                                "authors": [], "year": None, "venue": None, "volume": None, "first_page": None,
                                "pmid": "21932264"}) + "\n")
    store = CatalogStore(tmp_path / "c")
    store.build([thin, CAT / "crossref_messages.jsonl"])
    work = ParquetCatalog(tmp_path / "c").works_by_doi(["10.1002/ajmg.b.31237"])["10.1002/ajmg.b.31237"]
    assert work.title.startswith("Sleep apnea in fragile X")  # Crossref wins the title
    assert work.pmid == "21932264"  # the thin source fills what Crossref lacks
    assert work.year == 2011 and work.first_page == "923"


def test_withdrawn_arxiv_records_are_marked(fixture_catalog):
    withdrawn = [w for w in works_of(fixture_catalog) if w["withdrawn"]]
    assert [w["work_id"] for w in withdrawn] == ["arxiv:0704.0156"]


def test_bad_rows_are_reported_not_fatal(tmp_path):
    src = tmp_path / "works.jsonl"
    src.write_text(json.dumps({"doi": "10.1000/a", "arxiv_id": None, "title": "A"}) + "\n{broken\n"
                   + json.dumps({"doi": None, "arxiv_id": None, "title": None}) + "\n")
    report = CatalogStore(tmp_path / "c").build([src])
    assert report.works == 1
    assert report.files[0]["rejects"] == 2
    assert any(":2: bad JSON" in m for m in report.files[0]["reject_examples"])


def test_killed_build_leaves_the_previous_catalog(tmp_path, monkeypatch):
    store = CatalogStore(tmp_path / "c")
    first = store.build([CAT / "works.jsonl"])
    import citeledger.catalog.catalog_store as catalog_module

    def boom(*args, **kwargs):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(catalog_module, "index", boom)
    with pytest.raises(KeyboardInterrupt):
        store.build([CAT / "arxiv_snapshot.jsonl"])
    assert store.manifest()["fingerprint"] == first.fingerprint
    assert not [p for p in (tmp_path / "c").iterdir() if p.name.startswith(".building")]


def test_every_doi_a_source_gives_a_work_is_kept(tmp_path):
    """The same arXiv work from two sources that disagree on its DOI: the journal DOI stays the
    work's DOI, arXiv's own DOI a cross-walk, and both find the work."""
    snapshot = json.loads((CAT / "arxiv_snapshot.jsonl").read_text().splitlines()[0])  # 0704.0001, journal DOI
    crossref_copy = tmp_path / "crossref.jsonl"
    crossref_copy.write_text(json.dumps({"DOI": "10.48550/arXiv.0704.0001", "title": [snapshot["title"]],
                                         "type": "posted-content"}) + "\n")
    works_row = tmp_path / "works.jsonl"
    works_row.write_text(json.dumps({"doi": "10.9999/other-journal-copy", "arxiv_id": "0704.0001",
                                     "title": snapshot["title"]}) + "\n")
    CatalogStore(tmp_path / "c").build([CAT / "arxiv_snapshot.jsonl", crossref_copy, works_row])
    cat = ParquetCatalog(tmp_path / "c")
    work = cat.works_by_arxiv_id(["0704.0001"])["0704.0001"]
    assert work.doi == "10.1103/physrevd.76.013009"
    assert set(work.alt_dois) == {"10.48550/arxiv.0704.0001", "10.9999/other-journal-copy"}
    found = cat.works_by_doi(["10.1103/physrevd.76.013009", "10.48550/arxiv.0704.0001", "10.9999/other-journal-copy"])
    assert {w.work_id for w in found.values()} == {"arxiv:0704.0001"} and len(found) == 3


def test_sici_dois_without_a_start_page_stay_apart(tmp_path):
    """Early-view SICI DOIs of one journal (``9999:9999<::AID-...>``) differ only after their "<":
    cut there, they were one DOI and the build merged their works into one, so a reference to either
    linked to a work carrying the other's title (the first row is shared/data/catalog/glutton_works',
    the second a DOI of the same shape)."""
    works = tmp_path / "works.jsonl"
    works.write_text("".join(json.dumps(row) + "\n" for row in [
        {"doi": "10.1002/1097-4571(2000)9999:9999<::AID-ASI1588>3.0.CO;2-7",
         "title": "Corpus-based statistical screening for content-bearing terms", "authors": ["Kim"]},
        {"doi": "10.1002/1097-4571(2000)9999:9999<::AID-ASI1092>3.0.CO;2-W",
         "title": "A second early-view article of the same journal", "authors": ["Other"]}]))
    CatalogStore(tmp_path / "c").build([works])
    dois = ["10.1002/1097-4571(2000)9999:9999<::aid-asi1588>3.0.co;2-7",
            "10.1002/1097-4571(2000)9999:9999<::aid-asi1092>3.0.co;2-w"]
    found = ParquetCatalog(tmp_path / "c").works_by_doi(dois)
    assert [found[d].title for d in dois] == ["Corpus-based statistical screening for content-bearing terms",
                                              "A second early-view article of the same journal"]
    assert [found[d].work_id for d in dois] == [f"doi:{d}" for d in dois]


def test_in_memory_catalog_answers_as_the_parquet_one(tmp_path):
    """Tests may use the in-memory catalog where a store is not the point: it must answer every
    identifier lookup exactly as the Parquet catalog does, cross-walk ranks included."""
    from resolvers.catalog import InMemoryCatalog

    journal = tmp_path / "journal.jsonl"
    journal.write_text(json.dumps({"doi": "10.1103/PhysRevD.76.013009", "arxiv_id": None, "title": "Diphoton"}) + "\n")
    CatalogStore(tmp_path / "c").build([*sorted(CAT.glob("*.jsonl")), journal])
    parquet = ParquetCatalog(tmp_path / "c")
    gen = CatalogStore(tmp_path / "c").current()
    rows = duckdb.sql(f"select * from read_parquet('{gen / 'works.parquet'}')").to_arrow_table().to_pylist()
    from citeledger.works.row_schema import work_from_row

    memory = InMemoryCatalog([work_from_row(r) for r in rows])
    ids = duckdb.sql(f"select scheme, value from read_parquet('{gen / 'identifiers.parquet'}')").fetchall()
    dois = [v for s, v in ids if s == "doi"] + ["10.9/absent"]
    arxiv_ids = [v for s, v in ids if s == "arxiv"] + ["0000.00000"]
    assert {k: w.work_id for k, w in memory.works_by_doi(dois).items()} == \
        {k: w.work_id for k, w in parquet.works_by_doi(dois).items()}
    assert {k: w.work_id for k, w in memory.works_by_arxiv_id(arxiv_ids).items()} == \
        {k: w.work_id for k, w in parquet.works_by_arxiv_id(arxiv_ids).items()}
    assert memory.works_by_doi(["10.1103/physrevd.76.013009"])["10.1103/physrevd.76.013009"].work_id == \
        "doi:10.1103/physrevd.76.013009"


# --- the build's steps, each alone ---------------------------------------------------------

def test_extract_of_one_file_gives_its_rows_and_rejects(tmp_path):
    from citeledger.catalog.extract_parts import extract

    src = tmp_path / "works.jsonl"
    src.write_text(json.dumps({"doi": "10.1000/A", "title": "A"}) + "\n{broken\n"
                   + json.dumps({"doi": None, "arxiv_id": None, "title": None}) + "\n"
                   + json.dumps({"arxiv_id": "0704.0002", "title": "B"}) + "\n")
    seen = []
    out = extract([src], None, seq=10, file_done=seen.append)
    rows = out.works.to_pylist()
    assert [(r["work_id"], r["doi"], r["ingested_seq"], r["sources"]) for r in rows] == [
        ("doi:10.1000/a", "10.1000/a", 11, ["works_jsonl"]),
        ("arxiv:0704.0002", None, 12, ["works_jsonl"])]
    assert out.ingested_seq == 12 and out.notice_events == [] and seen == [src]
    report = out.files[0]
    assert (report["rows"], report["rejects"], report["format"]) == (2, 2, "works_jsonl")
    assert [m.split(": ", 1)[0] for m in report["reject_examples"]] == [f"{src}:2", f"{src}:3"]


def test_extract_of_a_notice_file_gives_events_not_works():
    from citeledger.catalog.extract_parts import extract

    out = extract([FIXTURES / "notices" / "retraction_watch_doi_nature_excerpt.csv"], None, seq=0)
    assert out.works.num_rows == 0 and out.ingested_seq == 0
    assert len(out.notice_events) == out.files[0]["rows"] == 24 and out.files[0]["rejects"] == 2
    assert {e["source"] for e in out.notice_events} == {"retraction_watch_doi_nature"}


def test_merge_of_the_same_rows_twice_adds_nothing(tmp_path):
    from citeledger.catalog.catalog_store import merge
    from citeledger.catalog.extract_parts import extract

    new = extract([CAT / "works.jsonl", CAT / "arxiv_snapshot.jsonl"], None, seq=0)
    first, second = tmp_path / "g1", tmp_path / "g2"
    first.mkdir()
    second.mkdir()
    one = merge(None, new, first)
    assert one.works_before == 0 and one.works == len({r["work_id"] for r in new.works.to_pylist()})
    again = extract([CAT / "works.jsonl", CAT / "arxiv_snapshot.jsonl"], None, seq=new.ingested_seq)
    two = merge(first, again, second)
    assert (two.works, two.works_before, two.notice_events) == (one.works, one.works, one.notice_events)
    for name in ("works.parquet", "identifiers.parquet", "notice_events.parquet"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_index_alone_builds_the_fuzzy_index_of_a_generation(tmp_path):
    from citeledger.catalog.catalog_store import index, merge
    from citeledger.catalog.extract_parts import extract
    from citeledger.index import blocking

    gen = tmp_path / "g"
    gen.mkdir()
    merged = merge(None, extract([CAT / "works.jsonl"], None, seq=0), gen)
    stats = index(gen)
    assert stats["works"] == merged.works
    assert (gen / blocking.INDEX_FILE).exists() and (gen / blocking.FORMS_FILE).exists()
    assert index_upgrade.ensure_index(gen) is None  # current: nothing to rebuild


def test_publish_that_dies_before_the_pointer_swap_leaves_the_previous_generation(tmp_path, monkeypatch):
    import citeledger.catalog.catalog_store as catalog_module
    from citeledger.catalog.catalog_store import index, merge, publish, start_build
    from citeledger.catalog.extract_parts import extract

    store = CatalogStore(tmp_path / "c")
    first = store.build([CAT / "works.jsonl"])
    previous = start_build(store.dir)
    gen = tmp_path / "staging" / previous.next_name
    gen.mkdir(parents=True)
    new = extract([CAT / "arxiv_snapshot.jsonl"], None, previous.ingested_seq)
    merged = merge(previous.dir, new, gen)
    index(gen)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(catalog_module, "_swap_current", killed)
    with pytest.raises(KeyboardInterrupt):
        publish(store.dir, gen, previous, new, merged, "2026-01-01T00:00:00+00:00")
    assert (store.dir / previous.next_name).exists()  # moved into place, not live
    assert store.current().name == first.generation
    assert store.manifest()["fingerprint"] == first.fingerprint
    monkeypatch.undo()
    assert start_build(store.dir).dir.name == first.generation  # the next build clears the orphan
    assert not (store.dir / previous.next_name).exists()


# --- one definition of the work row -----------------------------------------------------------

def test_works_schema_is_the_work_fields_then_the_catalog_columns(tmp_path):
    import dataclasses

    import pyarrow.parquet as pq

    from citeledger.works.row_schema import CATALOG_TYPES, WORKS_SCHEMA
    from resolvers.model import Work

    assert WORKS_SCHEMA.names == [f.name for f in dataclasses.fields(Work)] + list(CATALOG_TYPES)
    CatalogStore(tmp_path / "c").build([CAT / "crossref_messages.jsonl"])
    written = pq.read_schema(CatalogStore(tmp_path / "c").current() / "works.parquet")
    assert [(f.name, f.type) for f in written] == [(f.name, f.type) for f in WORKS_SCHEMA]


def test_a_work_survives_its_row_and_a_source_row_is_a_work():
    from citeledger.sources.source_rows import SourceRow
    from citeledger.works.row_schema import work_from_row, work_row
    from resolvers.model import Work

    work = Work("arxiv:0704.0001", doi="10.1/x", arxiv_id="0704.0001", title="T", authors=("A", "B"),
                year=2007, alt_dois=("10.48550/arxiv.0704.0001",), withdrawn=True)
    assert work_from_row(work_row(work)) == work
    assert work_from_row({"work_id": "w", "withdrawn": None}) == Work("w")
    row = SourceRow("doi:10.1/x", doi="10.1/x", authors=("A",), relations='{"update-to": []}')
    assert isinstance(row, Work) and row.as_dict()["relations"] == '{"update-to": []}'


@pytest.mark.parametrize("work_args, doi", [
    (dict(work_id="arxiv:0704.0001", doi="10.48550/arxiv.0704.0001", arxiv_id="0704.0001",
          alt_dois=("10.1103/physrevd.76.013009",), title="T", authors=("A",), year=2007),
     "10.1103/physrevd.76.013009"),  # the journal DOI, not arXiv's own (the build derives that)
    (dict(work_id="arxiv:0704.0002", doi="10.48550/arxiv.0704.0002", arxiv_id="0704.0002"), None),
    (dict(work_id="doi:10.1/x", doi="10.1/x", venue="V", volume="1", first_page="2", pmid="3", type="t",
          withdrawn=True), "10.1/x"),
])
def test_a_fetched_work_is_kept_as_a_works_jsonl_row(work_args, doi):
    from citeledger.works.row_schema import works_jsonl_row
    from resolvers.model import Work

    work = Work(**work_args)
    row = works_jsonl_row(work)
    assert row["doi"] == doi and "work_id" not in row and "alt_dois" not in row
    assert {k: row[k] for k in ("arxiv_id", "title", "year", "venue", "volume", "first_page", "pmid", "type",
                                "withdrawn")} == {k: getattr(work, k) for k in ("arxiv_id", "title", "year", "venue",
                                                  "volume", "first_page", "pmid", "type", "withdrawn")}
    assert row["authors"] == list(work.authors)


def test_extract_in_byte_ranges_by_worker_processes_gives_the_same_catalog(tmp_path, monkeypatch):
    """A big works file is read in ranges by two processes: same works bytes, same reject lines."""
    from citeledger.catalog import extract_parts as catalog_extract
    from citeledger.catalog.extract_parts import extract

    lines = []
    for i in range(400):
        lines.append(json.dumps({"doi": f"10.1000/r{i % 350}", "title": f"Work  {i}\tno {i}", "year": 1990 + i % 30}))
        if i % 97 == 5:
            lines.append("{broken")
        if i % 50 == 7:
            lines.append("")
    src = tmp_path / "works.jsonl"
    src.write_text("\r\n".join(lines) + "\n")

    def build(name):
        report = CatalogStore(tmp_path / name).build([src])
        gen = (tmp_path / name) / report.generation
        return report, (gen / "works.parquet").read_bytes(), (gen / "identifiers.parquet").read_bytes()

    serial = build("serial")
    monkeypatch.setattr(catalog_extract, "RANGE_BYTES", 2_000)
    monkeypatch.setattr(catalog_extract, "PARALLEL_BYTES", 0)
    assert len(catalog_extract.plan(src, catalog_extract.source_files.SourceFormat.WORKS_JSONL, 0)) > 10
    ranged = build("ranged")
    assert ranged[1:] == serial[1:]
    assert ranged[0].files == serial[0].files and serial[0].files[0]["rejects"] == 5
    assert serial[0].files[0]["reject_examples"][1].startswith(f"{src}:{lines.index('{broken', 10) + 1}: bad JSON")
    again = extract([src], None, seq=3, workers=2)
    assert again.works.column("ingested_seq").to_pylist() == list(range(4, 404))


def test_merge_of_works_with_one_row_skips_the_grouping_and_gives_the_grouped_rows(tmp_path, monkeypatch):
    """The merge groups only works several rows describe; its rows equal grouping every work."""
    import citeledger.catalog.catalog_store as catalog_module
    from citeledger.catalog.catalog_store import merge
    from citeledger.catalog.extract_parts import extract
    from citeledger.catalog.merge_sql import MERGED_GROUPED_SQL
    from citeledger.works.row_schema import WORKS_SCHEMA

    edge = tmp_path / "edge.jsonl"
    edge.write_text("\n".join(json.dumps(r) for r in [
        {"doi": "10.1000/empty", "title": "No authors", "authors": [], "withdrawn": True},
        {"doi": "10.1000/none", "title": "Null authors", "authors": None, "year": "1999"},
        {"arxiv_id": "0704.0001", "doi": "10.1000/j1", "title": "Both ids", "pmid": "123"},
        {"title": "Only a title", "authors": ["Zed"]}]) + "\n")
    files = [edge, *sorted(p for p in CAT.rglob("*") if p.is_file() and p.suffix not in (".md", ".dtd")
                           and "LICENSE" not in p.name)]
    new = extract(files, None, seq=0)
    odd = tmp_path / "odd.parquet"  # rows no reader gives (an older catalog's nulls): null lists, repeats
    pq.write_table(pa.Table.from_pylist([
        {"work_id": "doi:10.1000/odd1", "doi": "10.1000/odd1", "authors": None, "alt_dois": ["10.1000/x", "10.1000/x",
         "10.1000/odd1", None], "sources": None, "categories": None, "versions": None, "source_ids": ["b", "a", "b"],
         "precedence": 2, "ingested_seq": 1, "withdrawn": None},
        {"work_id": "doi:10.1000/odd2", "title": "T", "authors": [], "alt_dois": None, "sources": ["z", "a"],
         "precedence": 1, "ingested_seq": 2, "relations": '{"a": 1}', "source_updated": "2024-01-01"}],
        schema=WORKS_SCHEMA), odd)
    new.parts.append((odd, new.ingested_seq))
    (tmp_path / "fast").mkdir()
    (tmp_path / "grouped").mkdir()
    fast = merge(None, new, tmp_path / "fast")
    monkeypatch.setattr(catalog_module, "MERGED_SQL", MERGED_GROUPED_SQL)
    grouped = merge(None, new, tmp_path / "grouped")
    assert fast == grouped and fast.works < new.works.num_rows  # (some works have several rows)
    for name in ("works.parquet", "identifiers.parquet"):
        assert (tmp_path / "fast" / name).read_bytes() == (tmp_path / "grouped" / name).read_bytes(), name


def test_a_build_naming_unchanged_files_again_reuses_their_extract_and_gives_the_same_catalog(tmp_path, monkeypatch):
    """Incremental: the second build reads only the new file (the others' parts are cached by
    digest) and writes the same bytes as a build that reads every file again."""
    from citeledger.catalog import extract_parts as catalog_extract

    first = [CAT / "works.jsonl", CAT / "arxiv_snapshot.jsonl"]
    files = [*first, CAT / "crossref_messages.jsonl"]
    cached, uncached = CatalogStore(tmp_path / "cached"), CatalogStore(tmp_path / "uncached")
    cached.build(first)
    uncached.build(first)
    shutil.rmtree(uncached.dir / "extract-cache")
    planned = []
    real_plan = catalog_extract.plan
    monkeypatch.setattr(catalog_extract, "plan", lambda path, *a: planned.append(path) or real_plan(path, *a))
    a, b = cached.build(files), uncached.build(files)
    assert planned == [files[2], *files]  # the cached catalog read only the new file
    assert (a.works, a.added, a.files) == (b.works, b.added, b.files)
    for name in ("works.parquet", "identifiers.parquet", "notice_events.parquet", "venue_locators.arrow"):
        assert (cached.current() / name).read_bytes() == (uncached.current() / name).read_bytes(), name
    assert {p.name.split("-")[0] for p in (cached.dir / "extract-cache").iterdir()} == \
        {f["sha256"] for f in a.files}


def test_the_extract_cache_is_not_reused_by_other_reader_code(tmp_path, monkeypatch):
    """An entry made by other code of the readers is read again, not served (a changed reader
    must not go on giving the rows its old self made), and the old entry is dropped."""
    from citeledger.catalog import extract_parts as catalog_extract

    store = CatalogStore(tmp_path / "c")
    store.build([CAT / "works.jsonl"])
    planned = []
    real_plan = catalog_extract.plan
    monkeypatch.setattr(catalog_extract, "plan", lambda path, *a: planned.append(path) or real_plan(path, *a))
    store.build([CAT / "works.jsonl"])
    assert planned == []  # the same code: the cached parts are used
    monkeypatch.setattr(catalog_extract, "reader_fingerprint", lambda: "0" * 12)
    store.build([CAT / "works.jsonl"])
    assert planned == [CAT / "works.jsonl"]
    assert [p.name.endswith("-" + "0" * 12) for p in (store.dir / "extract-cache").iterdir()] == [True]


def test_a_reader_of_records_opens_only_the_lookup_files_it_reads(tmp_path, fixture_catalog):
    """Opening a catalog opens none of its lookup files; a record's reads (works by arXiv id, DOI
    and work id) open the identifier index and the works' row files, never the venue locators or
    the notice files, which only a run's resolution and notice check read."""
    from citeledger.records.record_files import find_papers_works

    catalog = ParquetCatalog(fixture_catalog)
    assert catalog._opened == {}
    found = find_papers_works(catalog, ["arXiv:0704.0001", "10.1000/none", "doi:10.1000/none"])
    assert len(found) == 3 and set(catalog._opened) <= {"identifiers", "works"}
    catalog.works_by_locator([("physrevd", "76", "13009")])
    catalog.notice_rows([w["work_id"] for w in found if w])
    assert set(catalog._opened) == {"identifiers", "works", "locators", "notices"}
