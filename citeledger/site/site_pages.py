"""The site's own pages: the index (every paper with its state counts in a table, which a small
inline script sorts and searches over the same rows embedded as JSON; ``?q=words`` in the address
starts a search), a cited work's page (the references citing it, paged like a record's), and the
page of standing notices. Every value is escaped; links are relative."""
from __future__ import annotations

import json
from typing import Any, Sequence

from citeledger.display import visible_controls
from citeledger.records.render import words
from citeledger.records.render.names import href_name, page_file
from citeledger.records.render.pages import css, link, state_class, work_line
from citeledger.records.render.view import ALARM, escape_html
from citeledger.site.collect import CitedWork, Noticed

CITES_PER_PAGE = 1000  # references listed on one page of a cited work

_SCRIPT = """
(function () {
  var rows = JSON.parse(document.getElementById("papers-data").textContent);
  var states = JSON.parse(document.getElementById("states-data").textContent);
  var body = document.getElementById("papers-body"), box = document.getElementById("search");
  var count = document.getElementById("shown"), key = "id", dir = 1;
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c];
    });
  }
  function value(r, k) { return k.indexOf("s:") === 0 ? r.states[+k.slice(2)] : r[k]; }
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
      return '<tr><td><a href="' + esc(r.href) + '">' + esc(r.id) + "</a></td><td>" + esc(r.title) +
        '</td><td class="num">' + r.refs + "</td>" + r.states.map(function (n, i) {
          return '<td class="num ' + (n ? "has " + states[i] : "") + '">' + n + "</td>";
        }).join("") + '<td class="num">' + (r.alarms ? '<span class="marker">' + r.alarms + "</span>" : "0") +
        '</td><td class="num">' + r.inbound + "</td></tr>";
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


def page_head(title: str, top: str) -> list[str]:
    """A site page's head and navigation (``top``: the address of the site's top folder from here)."""
    e = escape_html
    return ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(title)}</title><style>{css()}.has{{font-weight:bold}}body.wide{{max-width:90em}}"
            "th[data-key]{cursor:pointer;text-decoration:underline dotted}#search{font-size:1.1em;width:30em}"
            "</style></head><body" + (' class="wide">' if top == "" and title == "Citation ledger" else ">"),
            f'<nav class="home">{link(top + "index.html", "All papers")} &middot; '
            f'{link(top + "notices.html", "Standing notices")}</nav>', f"<h1>{e(title)}</h1>"]


def json_script(element_id: str, value: Any) -> str:
    """``value`` as JSON inside a ``<script type="application/json">`` (no ``<`` in it: ``</script>``
    in a title cannot end the element)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def index_page(rows: Sequence[dict[str, Any]], as_of: str, noticed: int) -> str:
    """The index: every paper with its state counts; static rows (readable without a script)
    that the script redraws when a header is clicked or the search box changes."""
    e = escape_html
    page = page_head("Citation ledger", "")
    page.append(f"<p>{e(len(rows))} papers, as of {e(as_of or 'an unknown time')}; "
                f"{link('notices.html', e(words.plural(noticed, 'cited work')) + ' with notices')}. "
                "Click a column to sort; type to search ids and titles.</p>")
    page.append('<p><label>Search: <input id="search" type="search" placeholder="arXiv id, DOI or title words">'
                '</label> <span id="shown"></span></p>')
    page.append(f'<p class="legend">{"".join(legend_items())}</p>')
    head = "".join(f'<th data-key="s:{i}" title="{e(meaning)}"><span class="sw s-{s}"></span> {e(plain)}</th>'
                   for i, (s, (plain, meaning, _)) in enumerate(words.STATES.items()))
    page.append('<table id="papers"><thead><tr><th data-key="id">paper</th><th data-key="title">title</th>'
                f'<th data-key="refs">references</th>{head}<th data-key="alarms">cited works retracted, withdrawn '
                'or of concern</th><th data-key="inbound">cited by (this ledger)</th></tr></thead>'
                '<tbody id="papers-body">')
    page += [static_row(row) for row in rows]
    page.append("</tbody></table>")
    page.append(json_script("papers-data", list(rows)))
    page.append(json_script("states-data", [f"s-{s}" for s in words.STATES]))
    page.append(f"<script>{_SCRIPT}</script></body></html>")
    return visible_controls("\n".join(page) + "\n")


def legend_items() -> list[str]:
    return [f'<span><span class="sw s-{s}"></span> {escape_html(plain)}</span>'
            for s, (plain, _, _) in words.STATES.items()]


def static_row(row: dict[str, Any]) -> str:
    e = escape_html
    cells = "".join(f'<td class="num{" has s-" + s if n else ""}">{e(n)}</td>'
                    for s, n in zip(words.STATES, row["states"]))
    alarms = f'<span class="marker">{e(row["alarms"])}</span>' if row["alarms"] else "0"
    return (f'<tr><td>{link(row["href"], e(row["id"]))}</td><td>{e(row["title"])}</td><td class="num">{e(row["refs"])}'
            f'</td>{cells}<td class="num">{alarms}</td><td class="num">{e(row["inbound"])}</td></tr>')


def work_pages(stem: str, work: CitedWork) -> list[str]:
    """A cited work's pages: what it is, its links and notice, the references citing it."""
    e = escape_html
    resolved = work.resolved
    chunks = [work.cites[i:i + CITES_PER_PAGE] for i in range(0, len(work.cites), CITES_PER_PAGE)] or [[]]
    pages = []
    for number, chunk in enumerate(chunks, start=1):
        page = page_head(f"Cited work {resolved.get('work_id')}", "../")
        page.append(f"<p><b>{e(work_line(resolved))}</b></p>")
        outside = [link(href, e(label)) for label, href in words.work_links(resolved)]
        if outside:
            page.append(f"<p>Links: {' &middot; '.join(outside)}</p>")
        marker = ALARM.get(work.standing)
        flag = f'<span class="marker">{e(marker)}</span> ' if marker else ""
        page.append(f"<p>{flag}Notice: {e(work.notice)}</p>")
        page.append(f"<h2>Cited by {e(words.plural(len(work.cites), 'reference'))} in this ledger"
                    + (f" (page {number} of {len(chunks)})" if len(chunks) > 1 else "") + "</h2>")
        if len(chunks) > 1:
            page.append("<nav class=\"pager\">Pages: " + " ".join(
                f"<b>{n}</b>" if n == number else link(href_name(page_file(stem, n)), str(n))
                for n in range(1, len(chunks) + 1)) + "</nav>")
        page.append("<ul class=\"inbound\">")
        page += [f"<li>{link(href, e(paper))}, its reference [{e(index)}] "
                 f'<span class="badge {state_class(status)}">{e(words.state_words(status)[0])}</span></li>'
                 for paper, href, index, status in chunk]
        page.append("</ul></body></html>")
        pages.append(visible_controls("\n".join(page) + "\n"))
    return pages


def notices_page(noticed: dict[str, Noticed]) -> str:
    """Every cited work with a notice, the alarming standings first, with the references citing it."""
    e = escape_html
    by_standing: dict[str, list[Noticed]] = {}
    for entry in noticed.values():
        by_standing.setdefault(entry.standing, []).append(entry)
    page = page_head("Standing notices of the cited works", "")
    page.append(f"<p>{e(words.works_sentence(ordered({s: [n.line for n in v] for s, v in by_standing.items()})))}</p>")
    for standing in ordered(by_standing):
        page.append(f"<h2>{e(words.STANDINGS.get(standing, standing).capitalize())} "
                    f"({e(words.plural(len(by_standing[standing]), 'cited work'))})</h2><ul class=\"noticed\">")
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
    order = [s for s in words.ALARMING if s in by_standing] + sorted(s for s in by_standing if s not in words.ALARMING)
    return {s: by_standing[s] for s in order}
