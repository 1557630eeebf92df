"""The site's pages as a reader uses them, in a real browser (Debian's headless chromium, from
``file://``): a paper's references filtered by state (``?state=``, the boxes' own code), the
index searched (``?q=``) and showing each paper's title (the catalog's, else its own source's, read
from the e-print's ``\\title``); "linked" on every page is verified_exact + verified_fuzzy; and a
record file whose values carry script (its digest made again, as someone who can write the ledger
could) runs none of it and does not stop the build."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from browser import Browser, dump_dom, needs_chromium

from citeledger import cli
from citeledger.records.record_json import content_digest
from citeledger.records.render import page_words
from citeledger.site.site_pages import json_script

REPO = Path(__file__).parent.parent
EPRINT = REPO / "tests" / "fixtures" / "papers" / "1911.13021.tar.gz"
@pytest.fixture(scope="module")
def built(tmp_path_factory, default_catalog) -> tuple[Path, Path]:
    """The sample ledger and an arXiv e-print (its title only in its own source), records written,
    and their site: (ledger, site)."""
    work = tmp_path_factory.mktemp("site-pages")
    ledger, out = work / "ledger", work / "site"
    assert cli.main(["resolve", str(REPO / "data" / "sample_references.jsonl"), str(EPRINT), "--catalog",
                     str(default_catalog), "--ledger", str(ledger)]) == 0
    assert cli.main(["records", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    assert cli.main(["site", str(out), "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    return ledger, out


def index_rows(site: Path) -> dict[str, dict]:
    index = (site / "index.html").read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="papers-data">(.*?)</script>', index).group(1)
    return {row["id"]: row for row in json.loads(data)}


def test_the_index_shows_a_title_read_from_the_papers_own_source(built):
    _, site = built
    row = index_rows(site)["1911.13021"]
    assert (row["title"], row["from"]) == ("Efficient Calibration of Embedded MPC", "LaTeX \\title")
    assert "<td>Efficient Calibration of Embedded MPC</td>" in (site / "index.html").read_text(encoding="utf-8")
    page = (site / "papers" / "1911.13021.html").read_text(encoding="utf-8")
    assert '<p class="title"><b>Efficient Calibration of Embedded MPC</b></p>' in page


def test_linked_on_every_page_is_verified_exact_and_fuzzy(built):
    ledger, site = built
    rows = index_rows(site)
    states = list(page_words.STATES)  # the index's columns: the states in the pages' order
    assert any(row["states"][states.index("metadata_mismatch")] for row in rows.values())
    for paper, row in rows.items():
        record = json.loads((ledger / "records" / f"{Path(row['href']).stem}.json").read_text(encoding="utf-8"))
        by_status = record["counts"]["by_status"]
        linked = by_status["verified_exact"] + by_status["verified_fuzzy"]
        assert row["linked"] == linked == record["counts"]["linked"], paper
        assert dict(zip(states, row["states"])) == by_status
        page = (site / row["href"]).read_text(encoding="utf-8")
        said = re.findall(r"(\d+) linked to a catalog work", page)
        assert said and {int(n) for n in said} == {linked}, paper
        mismatch = by_status["metadata_mismatch"]
        assert (f"{mismatch} whose identifier names another work" in page) == bool(mismatch)


@needs_chromium
def test_the_state_filter_in_a_real_browser(built):
    _, site = built
    page = (site / "papers" / "citeledger-identifier-sample.html").as_uri()
    every = dump_dom(page)
    assert "102 of 102 references shown" in every and not re.search(r'<div class="ref [^"]* off"', every)
    dom = dump_dom(page + "?state=metadata_mismatch&state=parse_uncertain")
    assert "9 of 102 references shown" in dom
    shown = re.findall(r'<div class="ref s-(\w+) n-\w+" id="ref-\d+"', dom)
    hidden = re.findall(r'<div class="ref s-(\w+) n-\w+ off" id="ref-\d+"', dom)
    assert sorted(set(shown)) == ["metadata_mismatch", "parse_uncertain"] and len(shown) == 9
    assert len(hidden) == 93 and "metadata_mismatch" not in hidden


@needs_chromium
def test_the_index_searches_titles_and_shows_linked_in_a_real_browser(built):
    _, site = built
    found = dump_dom((site / "index.html").as_uri() + "?q=embedded%20mpc")
    assert '1 of 6 papers shown for "embedded mpc"' in found
    body = found.split('<tbody id="papers-body">', 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr>") == 1 and "<td>Efficient Calibration of Embedded MPC</td>" in body
    every = dump_dom((site / "index.html").as_uri())
    cells = re.findall(r'<a href="papers/([^"]+)\.html">[^<]*</a></td><td[^>]*>[^<]*</td><td class="num">\d+</td>'
                       r'<td class="num linked">(\d+)</td>((?:<td class="num[^"]*">\d+</td>){7})', every)
    rows = index_rows(site)
    assert len(cells) == len(rows) == 6
    for stem, linked, states in cells:
        counts = [int(n) for n in re.findall(r">(\d+)<", states)]
        exact, fuzzy = (list(page_words.STATES).index(s) for s in ("verified_exact", "verified_fuzzy"))
        assert int(linked) == counts[exact] + counts[fuzzy], stem  # the cells the browser drew
    assert table_cells(every) == table_cells((site / "index.html").read_text(encoding="utf-8"))  # script or none


def table_cells(page: str) -> list[list[tuple[str, str, str]]]:
    """The index's rows as (class, tooltip, text) of each cell."""
    from lxml import html

    return [[(td.get("class", ""), td.get("title", ""), td.text_content()) for td in tr.xpath("./td")]
            for tr in html.fromstring(page).xpath('//tbody[@id="papers-body"]/tr')]


SHOWN_STATES = ("Array.prototype.filter.call(document.querySelectorAll('div.ref'), function (r) "
                "{ return r.offsetParent !== null; }).map(function (r) { return r.getAttribute('data-state'); })")
INDEX_CELLS = ("Array.prototype.map.call(document.querySelectorAll('#papers-body tr'), function (r) "
               "{ return Array.prototype.map.call(r.cells, function (c) { return c.innerText.trim(); }); })")


@needs_chromium
def test_a_reader_unticks_and_ticks_states_on_a_paper_page(built):
    """The state boxes clicked as a reader clicks them: the references of an unticked state are hidden
    from sight, the count says what is shown, and ticking the box again brings them back."""
    _, site = built
    with Browser() as browser:
        browser.open((site / "papers" / "citeledger-identifier-sample.html").as_uri())
        assert browser.text("#filter-shown") == "102 of 102 references shown"
        assert len(browser.evaluate(SHOWN_STATES)) == 102
        browser.click('input[data-state="verified_exact"]')
        assert browser.text("#filter-shown") == "12 of 102 references shown"
        shown = browser.evaluate(SHOWN_STATES)
        assert len(shown) == 12 and "verified_exact" not in shown
        browser.click('input[data-state="malformed_identifier"]')
        assert browser.text("#filter-shown") == "9 of 102 references shown"
        assert sorted(set(browser.evaluate(SHOWN_STATES))) == ["metadata_mismatch", "parse_uncertain"]
        browser.click('input[data-state="verified_exact"]')
        browser.click('input[data-state="malformed_identifier"]')
        assert browser.text("#filter-shown") == "102 of 102 references shown"
        assert len(browser.evaluate(SHOWN_STATES)) == 102


@needs_chromium
def test_a_reader_searches_and_sorts_the_index(built):
    """Words typed into the index's search box keep the papers whose id or title holds them (a title
    read from the paper's own source is found by its words); a click on a column's head sorts by it."""
    _, site = built
    with Browser() as browser:
        browser.open((site / "index.html").as_uri())
        assert browser.text("#shown") == "6 of 6 papers shown"
        browser.type("#search", "calibration")
        assert browser.text("#shown") == '1 of 6 papers shown for "calibration"'
        (row,) = browser.evaluate(INDEX_CELLS)
        assert row[:4] == ["1911.13021", "Efficient Calibration of Embedded MPC", "19", "0"]
        browser.type("#search", "SAMPLE")
        assert [r[0] for r in browser.evaluate(INDEX_CELLS)] == ["citeledger-identifier-sample",
                                                                 "citeledger-sample-glutton"]
        browser.type("#search", "2212.")
        assert browser.text("#shown") == '3 of 6 papers shown for "2212."'
        browser.click('th[data-key="linked"]')
        linked = [int(r[3]) for r in browser.evaluate(INDEX_CELLS)]
        assert len(linked) == 3 and linked == sorted(linked, reverse=True) and linked[0] > linked[-1]


@needs_chromium
def test_linked_on_every_paper_page_in_a_real_browser_is_exact_and_close(built):
    """For every paper, what the browser shows: the index's linked cell, the paper page's "N linked to
    a catalog work" and its state boxes' counts of exact and close matches agree (a mismatch is not a link)."""
    _, site = built
    rows = index_rows(site)
    with Browser() as browser:
        cells = {r[0]: r for r in browser.open((site / "index.html").as_uri()).evaluate(INDEX_CELLS)}
        assert set(cells) == set(rows)
        states = list(page_words.STATES)
        for paper, row in rows.items():
            cell = cells[paper]
            exact, close = (int(cell[4 + states.index(s)]) for s in ("verified_exact", "verified_fuzzy"))
            assert cell[1] == (row["title"] or "\u2014") and int(cell[3]) == exact + close, paper
            text = browser.open((site / row["href"]).as_uri()).evaluate("document.body.innerText")
            assert {int(n) for n in re.findall(r"(\d+) linked to a catalog work", text)} == {exact + close}, paper
            boxes = dict(re.findall(r"(verified exactly|verified by a close match) \((\d+)\)",
                                    browser.text("#filter")))
            assert int(boxes.get("verified exactly", 0)) == exact, paper
            assert int(boxes.get("verified by a close match", 0)) == close, paper


def test_a_value_in_a_script_cannot_end_or_change_it():
    text = json_script("x", {"t": "</script><!--<script>\u2028\u2029&"})
    body = text.split(">", 1)[1].rsplit("</script>", 1)[0]
    assert "<" not in body and ">" not in body and "&" not in body and "\u2028" not in body and "\u2029" not in body
    assert json.loads(body) == {"t": "</script><!--<script>\u2028\u2029&"}


HOSTILE = "</script><script>document.title='pwned'</script><!--<img src=x onerror=\"document.title='pwned'\">\u2028"


def redigest(path: Path, record: dict) -> None:
    """``record`` written to ``path`` with its content digest made again (an unsigned receipt)."""
    record["content_digest"] = content_digest(record)
    record["receipt"]["signed_digest"] = record["content_digest"]
    path.write_text(json.dumps(record), encoding="utf-8")


@needs_chromium
def test_a_record_carrying_script_runs_none_of_it(built, tmp_path, default_catalog):
    """Record files rewritten with script in a title, reference strings and a state, or counts that
    are no numbers, their digests made again (an unsigned ledger cannot tell): the site is built
    (a record whose counts are no numbers left out with the reason), and in the browser no script
    of a record's runs (the title stays, no element of the record's appears) while the pages' own do."""
    ledger, _ = built
    copy = tmp_path / "ledger"
    shutil.copytree(ledger, copy)
    path = copy / "records" / "2212.11766.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["paper"]["work"] = {"title": HOSTILE}
    for item in record["outbound"]["items"]:
        item["cited_as"]["raw"] = HOSTILE
        item["status"] = HOSTILE if item["reference_index"] == 1 else item["status"]
    redigest(path, record)
    other = copy / "records" / "2212.11770.json"  # counts that are no numbers, as the index script once wrote
    record = json.loads(other.read_text(encoding="utf-8"))
    record["counts"]["references"] = record["counts"]["by_status"]["unresolved"] = HOSTILE
    redigest(other, record)
    out = tmp_path / "site"
    assert cli.main(["site", str(out), "--ledger", str(copy), "--catalog", str(default_catalog)]) == 0
    note = (out / "index.html").read_text(encoding="utf-8").split('<div class="left-out"', 1)[1].split("</div>")[0]
    assert "1 record file" in note and "records/2212.11770.json</code>: cannot be shown" in note
    index = dump_dom((out / "index.html").as_uri())
    assert "<title>Citation ledger</title>" in index and "5 of 5 papers shown" in index
    assert "<img" not in index and "<title>pwned</title>" not in index
    paper = dump_dom((out / "papers" / "2212.11766.html").as_uri() + "?state=unresolved")
    assert "<title>Citation ledger of 2212.11766" in paper and "<img" not in paper
    assert "<title>pwned</title>" not in paper and "of 16 references shown" in paper
