"""The site's own pages: the index (every paper with its title, its linked references and its state
counts in a table, which a small inline script sorts and searches over the same rows embedded as
JSON; ``?q=words`` in the address starts a search), a cited work's page (the catalog's fields of the
work, its identifiers and notice, every paper of the ledger citing it with its references, paged
like a record's), and the page of standing notices. Every value is escaped for where it goes: HTML
text and attributes by ``escape_html``, values reaching a script as JSON for a script element
(``json_script``); links are relative."""
from __future__ import annotations

import functools
import json
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence
from urllib.parse import quote

from citeledger.display import visible_controls
from citeledger.records.render import page_words
from citeledger.records.render.file_names import href_name, page_file, record_file_stem
from citeledger.records.render.html_pages import css, link, state_class
from citeledger.records.render.view import ALARM, escape_html
from citeledger.site.collect import CitedWork, Noticed

CITES_PER_PAGE = 1000  # references listed on one page of a cited work
# the index's column heads (the legend above says each in full; a head's tooltip too)
SHORT = {"verified_exact": "exact", "verified_fuzzy": "close", "metadata_mismatch": "mismatch",
         "malformed_identifier": "broken id", "parse_uncertain": "unread", "unavailable": "unavailable",
         "unresolved": "not found"}
# a paper whose title neither the catalog nor its own source gives: a dash, said in its tooltip
NO_TITLE = '<td class="none" title="no title in the catalog, nor read from the paper&#x27;s own source">&#x2014;</td>'
LINKED_MEANS = ("linked: verified exactly or by a close match; a reference whose identifier names another "
                "work (metadata_mismatch) is counted on its own, never as a link")

_SCRIPT = """
(function () {
  var rows = JSON.parse(document.getElementById("papers-data").textContent);
  var states = JSON.parse(document.getElementById("states-data").textContent);
  var noTitle = JSON.parse(document.getElementById("no-title-data").textContent);
  var body = document.getElementById("papers-body"), box = document.getElementById("search");
  var count = document.getElementById("shown"), key = "id", dir = 1;
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c];
    });
  }
  function value(r, k) { return k.indexOf("s:") === 0 ? r.states[+k.slice(2)] : r[k]; }
  function num(n, cls) { return '<td class="num' + (cls ? " " + cls : "") + '">' + esc(n) + "</td>"; }
  function render() {
    var q = box.value.trim().toLowerCase();
    var shown = rows.filter(function (r) {
      return !q || (r.id + " " + r.title).toLowerCase().indexOf(q) >= 0;
    });
    shown.sort(function (a, b) {
      var x = value(a, key), y = value(b, key);
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    body.innerHTML = shown.map(function (r) {
      return '<tr><td><a href="' + esc(r.href) + '">' + esc(r.id) + "</a></td>" +
        (r.title ? "<td>" + esc(r.title) + "</td>" : noTitle) +
        num(r.refs) + num(r.linked, "linked") + r.states.map(function (n, i) {
          return num(n, n ? "has " + states[i] : "");
        }).join("") + '<td class="num">' + (r.alarms ? '<span class="marker">' + esc(r.alarms) + "</span>" : "0") +
        "</td>" + num(r.inbound) + "</tr>";
    }).join("");
    count.textContent = shown.length + " of " + rows.length + " papers shown" + (q ? ' for "' + box.value + '"' : "");
  }
  Array.prototype.forEach.call(document.querySelectorAll("th[data-key]"), function (th) {
    th.addEventListener("click", function () {
      var k = th.getAttribute("data-key");
      dir = key === k ? -dir : (k === "id" || k === "title" ? 1 : -1);
      key = k;
      render();
    });
  });
  box.addEventListener("input", render);
  var q = new URLSearchParams(window.location.search).get("q");
  if (q) { box.value = q; }
  render();
})();
"""

# what a JSON text may hold that ends or changes a script element, or ends a line in old scripts
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028",
                   0x2029: "\\u2029"}


def page_head(title: str, top: str, wide: bool = False) -> list[str]:
    """A site page's head and navigation (``top``: the address of the site's top folder from here)."""
    e = escape_html
    return ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(title)}</title><style>{css()}.has{{font-weight:bold}}body.wide{{max-width:90em}}"
            "th[data-key]{cursor:pointer;text-decoration:underline dotted}#search{font-size:1.1em;width:30em}"
            "td.linked{background:#eef7ee}th.t{min-width:20em}#papers td:first-child{white-space:nowrap}"
            "td.none{color:#888}.fields th{width:12em}.left-out{border:2px solid #c00;background:#fee;"
            "padding:.3em .8em}</style></head><body" + (' class="wide">' if wide else ">"),
            f'<nav class="home">{link(top + "index.html", "All papers")} &middot; '
            f'{link(top + "notices.html", "Standing notices")}</nav>', f"<h1>{e(title)}</h1>"]


def json_script(element_id: str, value: Any) -> str:
    """``value`` as JSON inside a ``<script type="application/json">``: no ``<``, ``>`` or ``&`` in
    it (``</script>`` or ``<!--`` in a title cannot end or change the element), nor U+2028/U+2029."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_SCRIPT_ESCAPES)
    return f'<script type="application/json" id="{escape_html(element_id)}">{text}</script>'


def index_page(rows: Sequence[Mapping[str, Any]], as_of: str, noticed: int,
               left_out: Sequence[tuple[str, str]] = (), static_rows: Sequence[str] | None = None) -> str:
    """The index: every paper with its title and counts; static rows (readable without a script;
    ``static_rows``: made already, ``static_row`` of each row) that the script redraws when a header
    is clicked or the search box changes; the record files left out, and why, above them."""
    e = escape_html
    page = page_head("Citation ledger", "", wide=True)
    page.append(f"<p>{e(len(rows))} papers, as of {e(minute_utc(as_of) or 'an unknown time')}; "
                f"{link('notices.html', e(page_words.plural(noticed, 'cited work')) + ' with notices')}. "
                f"Click a column to sort; type to search ids and titles. {e(LINKED_MEANS.capitalize())}.</p>")
    if left_out:
        page.append(f'<div class="left-out" id="left-out"><p><b>{e(page_words.plural(len(left_out), "record file"))} '
                    "could not be read or failed its check, and "
                    f"{'is' if len(left_out) == 1 else 'are'} left out of this site</b> (run <code>citeledger "
                    "records</code> to write them again from the ledger):</p><ul>"
                    + "".join(f"<li><code>{e(name)}</code>: {e(why)}</li>" for name, why in left_out) + "</ul></div>")
    page.append('<p><label>Search: <input id="search" type="search" placeholder="arXiv id, DOI or title words">'
                '</label> <span id="shown"></span></p>')
    page.append(f'<p class="legend">{"".join(legend_items())}</p>')
    head = "".join(f'<th data-key="s:{i}" title="{e(plain)}: {e(meaning)}"><span class="sw s-{s}"></span> '
                   f"{e(SHORT.get(s, plain))}</th>"
                   for i, (s, (plain, meaning, _)) in enumerate(page_words.STATES.items()))
    page.append('<table id="papers"><thead><tr><th data-key="id">paper</th><th data-key="title" class="t">title</th>'
                f'<th data-key="refs">refs</th><th data-key="linked" title="{e(LINKED_MEANS)}">linked</th>'
                f'{head}<th data-key="alarms" title="cited works retracted, withdrawn or under an expression of '
                'concern">alarms</th><th data-key="inbound" title="references of papers in this ledger citing it">'
                "cited by</th></tr></thead><tbody id=\"papers-body\">")
    page += static_rows if static_rows is not None else [static_row(row) for row in rows]
    page.append("</tbody></table>")
    page.append(json_script("papers-data", list(rows)))
    page.append(json_script("states-data", [f"s-{s}" for s in page_words.STATES]))
    page.append(json_script("no-title-data", NO_TITLE))
    page.append(f"<script>{_SCRIPT}</script></body></html>")
    return visible_controls("\n".join(page) + "\n")


def minute_utc(moment: str) -> str:
    """An ISO time as a reader reads it, to the minute in UTC (``2026-12-06 04:56 UTC``); other text as it is."""
    try:
        when = datetime.fromisoformat(moment)
    except ValueError:
        return moment
    return (when.astimezone(timezone.utc) if when.tzinfo else when).strftime("%Y-%m-%d %H:%M") + " UTC"


def legend_items() -> list[str]:
    return [f'<span><span class="sw s-{s}"></span> {escape_html(plain)}</span>'
            for s, (plain, _, _) in page_words.STATES.items()]


def static_row(row: Mapping[str, Any]) -> str:
    e = escape_html
    cells = "".join(f'<td class="num{" has s-" + s if n else ""}">{e(n)}</td>'
                    for s, n in zip(page_words.STATES, row["states"]))
    alarms = f'<span class="marker">{e(row["alarms"])}</span>' if row["alarms"] else "0"
    title = f'<td>{e(row["title"])}</td>' if row["title"] else NO_TITLE
    return (f'<tr><td>{link(row["href"], e(row["id"]))}</td>{title}<td class="num">{e(row["refs"])}</td>'
            f'<td class="num linked">{e(row["linked"])}</td>{cells}<td class="num">{alarms}</td>'
            f'<td class="num">{e(row["inbound"])}</td></tr>')


def work_fields(work_id: str, row: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(label, HTML) of each field of a cited work the catalog gives (escaped; identifiers linked)."""
    e = escape_html
    doi, arxiv_id = (row.get("doi"), row.get("arxiv_id")) if row else (None, None)
    fields: list[tuple[str, str]] = []
    if row:
        authors = row.get("authors") or []
        if not isinstance(authors, (list, tuple)):
            authors = [authors]
        for label, value in (("Title", row.get("title")), ("Authors", "; ".join(str(a) for a in authors)),
                             ("Year", row.get("year")), ("Venue", row.get("venue")), ("Volume", row.get("volume")),
                             ("Issue", row.get("issue")), ("First page", row.get("first_page")),
                             ("Type", row.get("type")), ("Journal reference", row.get("journal_ref"))):
            if value not in (None, "", []):
                fields.append((label, e(value)))
    fields.append(("Work id", f"<code>{e(work_id)}</code>"))
    if doi:
        fields.append(("DOI", link(page_words.doi_href(doi), e(doi))))
    others = [d for d in (row.get("alt_dois") or [] if row else []) if d and d != doi]
    if others:
        fields.append(("Other DOIs", ", ".join(link(page_words.doi_href(d), e(d)) for d in others)))
    if arxiv_id:
        fields.append(("arXiv", link(page_words.arxiv_href(arxiv_id), e(arxiv_id))))
    if row and row.get("pmid"):
        fields.append(("PubMed", link("https://pubmed.ncbi.nlm.nih.gov/" + quote(str(row["pmid"]), safe="") + "/",
                                      e(row["pmid"]))))
    if row and row.get("pmcid"):
        fields.append(("PMC", e(row["pmcid"])))
    if row and row.get("sources"):
        fields.append(("From the catalog sources", e(", ".join(str(s) for s in row["sources"]))))
    if not row:
        fields.append(("Catalog", "not in the catalog the site was built with (its citing references were "
                                  "linked to it by an earlier one)"))
    return fields


def work_pages(stem: str, work_id: str, row: Mapping[str, Any] | None, work: CitedWork) -> list[str]:
    """A cited work's pages: the catalog's fields of it, its identifiers and notice, then every paper
    of the ledger citing it, each with its references to it (their state and a link to each)."""
    e = escape_html
    by_paper: dict[str, list[tuple[str, str, str, str, str]]] = {}
    for cite in work.cites:
        by_paper.setdefault(cite[0], []).append(cite)
    papers = list(by_paper.values())
    chunks: list[list[list[tuple[str, str, str, str, str]]]] = [[]]
    for cites in papers:
        if chunks[-1] and sum(map(len, chunks[-1])) + len(cites) > CITES_PER_PAGE:
            chunks.append([])
        chunks[-1].append(cites)
    title = str(row.get("title")) if row and row.get("title") else f"Cited work {work_id}"
    pages = []
    for number, chunk in enumerate(chunks, start=1):
        page = page_head(title, "../")
        page.append('<table class="fields">' + "".join(f"<tr><th>{e(label)}</th><td>{value}</td></tr>"
                                                       for label, value in work_fields(work_id, row))
                    + "</table>")
        page.append(f'<p class="{"alarm" if work.standing in ALARM else "notices"}">Notice: {e(work.notice)}</p>')
        page.append(f"<h2>Cited by {e(page_words.plural(len(papers), 'paper'))} in this ledger "
                    f"({e(page_words.plural(len(work.cites), 'reference'))})"
                    + (f", page {number} of {len(chunks)}" if len(chunks) > 1 else "") + "</h2>")
        if len(chunks) > 1:
            page.append("<nav class=\"pager\">Pages: " + " ".join(
                f"<b>{n}</b>" if n == number else link(href_name(page_file(stem, n)), str(n))
                for n in range(1, len(chunks) + 1)) + "</nav>")
        page.append('<table class="citing"><tr><th>citing paper</th><th>title</th><th>its references to this work'
                    "</th></tr>")
        for cites in chunk:
            paper, paper_title = cites[0][0], cites[0][1]
            refs = " ".join(f'<a href="{e(h)}">[{e(index)}]</a> {_badge(status)}' for _, _, h, index, status in cites)
            title = f"<td>{e(paper_title)}</td>" if paper_title else NO_TITLE
            page.append(f"<tr><td>{_paper_link(paper)}</td>{title}<td>{refs}</td></tr>")
        page.append("</table></body></html>")
        pages.append(visible_controls("\n".join(page) + "\n"))
    return pages


@functools.lru_cache(maxsize=64)
def _badge(status: str) -> str:
    """A state's badge, made once a process (the works' pages show a few states thousands of times)."""
    return f'<span class="badge {state_class(status)}">{escape_html(page_words.state_words(status)[0])}</span>'


@functools.lru_cache(maxsize=65536)
def _paper_link(paper: str) -> str:
    """A citing paper's link from a work's page (a paper cites dozens of works: made once a process)."""
    return link("../papers/" + href_name(page_file(record_file_stem(paper), 1)), escape_html(paper))


def notices_page(noticed: Mapping[str, Noticed]) -> str:
    """Every cited work with a notice, the alarming standings first, with the references citing it."""
    e = escape_html
    by_standing: dict[str, list[Noticed]] = {}
    for entry in noticed.values():
        by_standing.setdefault(entry.standing, []).append(entry)
    page = page_head("Standing notices of the cited works", "")
    lines = ordered({s: [n.line for n in v] for s, v in by_standing.items()})
    page.append(f"<p>{e(page_words.works_sentence(lines))}</p>")
    for standing in ordered(by_standing):
        page.append(f"<h2>{e(page_words.STANDINGS.get(standing, standing).capitalize())} "
                    f"({e(page_words.plural(len(by_standing[standing]), 'cited work'))})</h2><ul class=\"noticed\">")
        for entry in by_standing[standing]:
            refs = ", ".join(f"{link(href, e(paper))} [{e(index)}]" for paper, href, index in entry.cites)
            page.append(f'<li class="n-{e(standing)}">{link(entry.href, e(entry.line))}<br>{e(entry.notice)}'
                        f"<br>cited by {refs}</li>")
        page.append("</ul>")
    if not noticed:
        page.append("<p>No cited work in this ledger has a notice in the sources checked.</p>")
    page.append("</body></html>")
    return visible_controls("\n".join(page) + "\n")


def ordered(by_standing: dict[str, Any]) -> dict[str, Any]:
    """The standings in the order the pages give them: retracted, withdrawn, of concern, then the rest."""
    alarming = page_words.ALARMING
    order = [s for s in alarming if s in by_standing] + sorted(s for s in by_standing if s not in alarming)
    return {s: by_standing[s] for s in order}
