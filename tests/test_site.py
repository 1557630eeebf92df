"""``citeledger site``: the static site of the sample ledger (made as ``make run`` makes it) and
of a ledger citing a retracted DOI: every internal link of every file resolves (anchors
included), the index embeds every paper, cited works have pages with their citing references,
the notices page names the retracted DOI, and a long record's page files link to each other."""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from browser import dump_dom, needs_chromium
from link_check import broken_links, parse

from citeledger import cli

REPO = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
RETRACTED_DOI = "10.1016/j.micpro.2020.103053"


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory, default_catalog) -> Path:
    """The sample ledger as ``make run`` makes it, its records written, and its site."""
    work = tmp_path_factory.mktemp("site")
    ledger, out = work / "ledger", work / "site"
    assert cli.main(["resolve", str(REPO / "data" / "sample_references.jsonl"), "--catalog", str(default_catalog),
                     "--ledger", str(ledger)]) == 0
    assert cli.main(["records", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    assert cli.main(["site", str(out), "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    return out


@pytest.fixture(scope="module")
def retracted_site(tmp_path_factory) -> Path:
    """A ledger whose paper cites a DOI that Retraction Watch lists as retracted and no catalog work
    has (an unresolved reference with a retracted DOI), and its site built without written records."""
    work = tmp_path_factory.mktemp("retracted")
    fixture = (FIXTURES / "notices" / "retraction_watch_2026-09_sample.csv").read_text(encoding="utf-8")
    export = work / "retraction_watch.csv"
    export.write_text(fixture.split("#---8<--- payload below ---8<---\n", 1)[1], encoding="utf-8")
    catalog, ledger = work / "catalog", work / "ledger"
    assert cli.main(["catalog", "build", "--catalog", str(catalog), str(FIXTURES / "catalog" / "works.jsonl"),
                     str(export)]) == 0
    refs = work / "refs.jsonl"
    raws = [f"Placeholder P. Placeholder title zeta. Microprocess Microsyst. 2020;75:103053. doi:{RETRACTED_DOI}",
            "Gerke H, Baillie J. To cut or stretch? Am J Gastroenterol. 2004;99:1461-3. doi:10.1111/j.1572-0241.2004.40358.x"]
    refs.write_text("".join(json.dumps({"citing_paper": "2401.00001", "reference_index": i + 1, "raw": raw}) + "\n"
                            for i, raw in enumerate(raws)))
    assert cli.main(["resolve", str(refs), "--catalog", str(catalog), "--ledger", str(ledger)]) == 0
    assert cli.main(["site", str(work / "site"), "--ledger", str(ledger), "--catalog", str(catalog)]) == 0
    return work / "site"


def test_every_internal_link_of_the_sample_site_resolves(sample_site):
    files = list(sample_site.rglob("*"))
    assert (sample_site / "index.html").is_file() and (sample_site / "notices.html").is_file()
    broken, checked = broken_links(sample_site)
    assert broken == [] and checked > 1000  # every paper page links its cited works' pages
    assert len([f for f in files if f.suffix == ".html"]) > 200


def test_two_processes_write_the_same_site(sample_site, default_catalog, tmp_path):
    """The papers' pages made by two worker processes, each its half, give the same files."""
    from citeledger.site.site_files import build_site

    report = build_site(tmp_path / "two", sample_site.parent / "ledger", default_catalog, workers=2)
    one = {p.relative_to(sample_site): p.read_bytes() for p in [*sample_site.rglob("*.html"),
                                                                *sample_site.glob("papers/*.json")]}
    two = {p.relative_to(tmp_path / "two"): p.read_bytes() for p in [*(tmp_path / "two").rglob("*.html"),
                                                                     *(tmp_path / "two").glob("papers/*.json")]}
    assert report.files == len(two) and one.keys() == two.keys() and one == two


def test_the_index_lists_every_paper_with_its_counts(sample_site):
    index = (sample_site / "index.html").read_text(encoding="utf-8")
    rows = json.loads(re.search(r'<script type="application/json" id="papers-data">(.*?)</script>', index).group(1))
    papers = {r["id"]: r for r in rows}
    assert set(papers) == {"2212.11766", "2212.11770", "2212.11772", "citeledger-identifier-sample",
                           "citeledger-sample-glutton"}
    sample = papers["citeledger-identifier-sample"]
    assert sample["refs"] == 102 and sum(sample["states"]) == 102 and (sample_site / sample["href"]).is_file()
    assert 'href="papers/citeledger-identifier-sample.html"' in index  # the rows are there without the script


def test_a_cited_works_page_lists_the_references_citing_it(sample_site):
    page = (sample_site / "papers" / "citeledger-identifier-sample.html").read_text(encoding="utf-8")
    work_link = re.search(r'<p>Cited work: <a href="(\.\./works/[^"]+)">', page).group(1)
    work = (sample_site / "papers" / unquote(work_link)).resolve()
    text = work.read_text(encoding="utf-8")
    assert "Cited by 1 paper in this ledger (1 reference)" in text and "https://doi.org/" in text
    assert 'href="../papers/citeledger-identifier-sample.html#ref-' in text
    assert "<tr><th>Work id</th>" in text and "<tr><th>Title</th>" in text and "<tr><th>Authors</th>" in text


def test_every_cited_works_page_shows_the_catalogs_fields_its_notice_and_every_citing_reference(
        sample_site, default_catalog):
    """Each cited work's page, against the ledger and the catalog: the catalog's bibliographic fields
    and identifiers of the work (each one the catalog gives), the alarm of a work the ledger's notices
    call retracted, withdrawn or of concern, and every reference of the ledger that names the work
    (citing paper, reference number, state), none missing and none extra."""
    from lxml import html

    from citeledger.engine.process_cache import get_catalog
    from citeledger.ledger.query import run_query
    from citeledger.records.render import page_words

    ledger = sample_site.parent / "ledger"
    citing: dict[str, set] = {}
    for work_id, paper, index, status in run_query(
            "SELECT work_id, citing_paper, reference_index, status FROM current WHERE work_id IS NOT NULL",
            ledger, default_catalog).fetchall():
        citing.setdefault(work_id, set()).add((paper, str(index), page_words.state_words(status)[0]))
    standing = dict(run_query("SELECT work_id, standing FROM notices", ledger, default_catalog).fetchall())
    catalog_rows = get_catalog(default_catalog).work_rows(sorted(citing))
    pages = sorted((sample_site / "works").glob("*.html"))
    assert len(pages) == len(citing) > 200  # no sample paper is a catalog work: every cited work has its page
    alarms = 0
    for path in pages:
        tree = html.fromstring(path.read_bytes())
        fields = {th.text_content(): td.text_content() for th, td in
                  zip(tree.xpath('//table[@class="fields"]//th'), tree.xpath('//table[@class="fields"]//td'))}
        work_id = fields["Work id"]
        row = catalog_rows[work_id]
        for label, key in (("Title", "title"), ("Year", "year"), ("Venue", "venue"), ("Volume", "volume"),
                           ("Issue", "issue"), ("First page", "first_page"), ("DOI", "doi"), ("arXiv", "arxiv_id"),
                           ("PubMed", "pmid"), ("PMC", "pmcid"), ("Journal reference", "journal_ref")):
            assert fields.get(label) == (str(row[key]) if row.get(key) not in (None, "") else None), (work_id, label)
        assert fields.get("Authors") == ("; ".join(row["authors"]) if row.get("authors") else None), work_id
        shown = {(a.text_content().strip(), *ref) for tr in tree.xpath('//table[@class="citing"]//tr[td]')
                 for a in tr.xpath("./td[1]/a")
                 for ref in zip([x.text_content().strip("[]") for x in tr.xpath("./td[3]/a")],
                                [x.text_content() for x in tr.xpath("./td[3]/span")])}
        assert shown == citing[work_id], work_id
        alarm = tree.xpath('//p[@class="alarm"]')
        assert bool(alarm) == (standing.get(work_id) in page_words.ALARMING), work_id
        if alarm:
            alarms += 1
            assert standing[work_id].upper() in alarm[0].text_content(), work_id
    assert alarms >= 2  # the sample cites retracted works


def test_a_mismatch_shows_both_sides_of_each_contradicting_field(sample_site):
    page = (sample_site / "papers" / "citeledger-identifier-sample.html").read_text(encoding="utf-8")
    assert page.count('<table class="mismatch">') == 5
    assert ("<td>title</td><td>A vacation from work: Changes in work and nonwork outcomes</td>"
            "<td>Postnatal depression and elation among mothers and their partners: prevalence and predictors</td>"
            in page)


def test_a_retracted_doi_of_an_unresolved_reference_is_named_everywhere(retracted_site):
    broken, _ = broken_links(retracted_site)
    assert broken == []
    paper = (retracted_site / "papers" / "2401.00001.html").read_text(encoding="utf-8")
    assert "1 cited work retracted." in paper and "Cited work: nothing" not in paper
    assert f"no catalog work; the string cites <a href=\"https://doi.org/{RETRACTED_DOI}\">doi:{RETRACTED_DOI}</a>" in paper
    assert f"doi:{RETRACTED_DOI} is retracted: expression_of_concern 2021-06-25" in paper
    notices = (retracted_site / "notices.html").read_text(encoding="utf-8")
    assert "<h2>Retracted (1 cited work)</h2>" in notices and f"doi:{RETRACTED_DOI}" in notices
    assert 'href="papers/2401.00001.html#ref-1"' in notices
    index = (retracted_site / "index.html").read_text(encoding="utf-8")
    assert '<span class="marker">1</span>' in index


def test_a_long_records_page_files_link_to_the_right_page(tmp_path):
    """A record of 5 references at a page cap of 2: three page files, the notices on the first page
    lead to the page holding each reference, the pager to every page; no link is broken."""
    from test_records import WORK_A, record_of

    from citeledger.records.render.file_names import href_name, record_file_stem
    from citeledger.records.render.record_pages import render_all_files
    from resolvers.jcs import jcs

    record = record_of("arXiv:0704.0001", WORK_A, page_cap=2)
    files = render_all_files(record)
    assert sorted(files) == ["html", "page-2.html", "page-3.html", "txt"]
    stem = record_file_stem("arXiv:0704.0001")
    for suffix, data in files.items():
        (tmp_path / f"{stem}.{suffix}").write_bytes(data)
    (tmp_path / f"{stem}.json").write_bytes(jcs(record) + b"\n")  # the record its first page links to
    (tmp_path / f"{record_file_stem('10.1234/b')}.html").write_text("<p>the citing paper's page</p>")
    broken, _ = broken_links(tmp_path)
    assert broken == []
    first = parse(tmp_path / f"{stem}.html")
    noticed = [link for link in first.links if "#ref-" in link and not link.startswith("#")]
    assert noticed and all(link.startswith(href_name(stem) + ".page-") for link in noticed)


@needs_chromium
def test_the_index_searches_in_a_real_browser_from_the_file_system(sample_site):
    """``index.html?q=identifier`` from file://: the script reads the embedded rows, shows the one
    paper whose id matches and says so; with no query every paper is shown."""
    every = dump_dom((sample_site / "index.html").as_uri())
    assert "5 of 5 papers shown" in every
    found = dump_dom((sample_site / "index.html").as_uri() + "?q=identifier")
    assert '1 of 5 papers shown for "identifier"' in found
    body = found.split('<tbody id="papers-body">', 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr>") == 1 and 'href="papers/citeledger-identifier-sample.html"' in body
    none = dump_dom((sample_site / "index.html").as_uri() + "?q=no-such-paper")
    assert "0 of 5 papers shown" in none


@needs_chromium
def test_links_on_a_sample_of_pages_resolve_in_a_real_browser(sample_site):
    """Links of a paper page (a cited work's page, the index, the notices) and of a cited work's page
    (back to the citing reference's anchor) open in the browser as the pages they name."""
    paper = sample_site / "papers" / "citeledger-identifier-sample.html"
    links = parse(paper).links
    work = next(link for link in links if link.startswith("../works/"))
    opened = dump_dom((paper.parent / unquote(work)).resolve().as_uri())
    assert "<tr><th>Work id</th>" in opened
    back = next(link for link in parse((paper.parent / unquote(work)).resolve()).links if "#ref-" in link)
    path, anchor = back.split("#")
    target = dump_dom((paper.parent / unquote(path)).resolve().as_uri() + "#" + anchor)
    assert f'id="{anchor}"' in target and "<title>Citation ledger of citeledger-identifier-sample" in target
    for name, title in (("../index.html", "Citation ledger"), ("../notices.html", "Standing notices")):
        assert name in links and f"<title>{title}" in dump_dom((paper.parent / name).resolve().as_uri())
