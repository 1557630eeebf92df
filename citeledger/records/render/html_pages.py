"""A citation record as HTML pages a reader uses (``record_pages.render_html_pages``): the references first,
each with its state in plain words and colour, filtered by state in the browser; then the papers
of the ledger citing this one; then, folded, what a reader checks less often: the paper's ids and
dates, the references by state, what the record measured, the cited works with notices, the
provenance and the receipt. A paper citing a retracted, withdrawn or flagged work says so above
its references. A long record's pages (``file_names.page_file``) each hold a page cap of references,
with anchors that lead to the page holding each. Every value is escaped; the filter's script reads
the page's own elements and the address's ``?state=`` values, compared as text, nothing else."""
from __future__ import annotations

from typing import Any, Mapping

from citeledger.pith.export import REFUSAL
from citeledger.records.render import page_words
from citeledger.records.render.file_names import href_name, page_file
from citeledger.records.render.view import (
    ALARM,
    RecordView,
    as_of_sentence,
    coverage_rows,
    cut_text,
    escape_html,
    inbound_heading,
    json_name,
    no_notice_found,
    notice_line,
    page_heading,
    paper_facts,
    provenance_of,
    receipt_line,
    state_rows,
    work_line,
)


def css() -> str:
    """The page style; each state's colour (``page_words.STATES``) as a class ``s-<state>``."""
    return CSS


def make_css() -> str:
    colours = "".join(f".s-{s}{{border-left-color:{c}}}.s-{s} .badge,.badge.s-{s},.sw.s-{s}{{background:{c}}}"
                      for s, (_, _, c) in page_words.STATES.items())
    return ("body{font-family:system-ui,sans-serif;max-width:62em;margin:1.5em auto;padding:0 1em;line-height:1.45;"
            "color:#1f2328}a{color:#0969da}table{border-collapse:collapse;margin:.5em 0}"
            "td,th{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}"
            "th{background:#f6f8fa}.num{text-align:right}"
            ".ref{border-left:6px solid #57606a;padding:.3em .8em;margin:.7em 0;background:#fafbfc}"
            ".ref p{margin:.2em 0}.ref.off{display:none}"
            ".badge,.sw{display:inline-block;color:#fff;border-radius:3px;padding:0 .4em;font-size:.85em;"
            f"background:#57606a}}.sw{{width:1em;height:1em;padding:0}}{colours}"
            ".alarm{border:2px solid #c00;background:#fee;padding:.3em .8em}"
            ".ref.n-retracted,.ref.n-withdrawn{background:#fee}.ref.n-expression_of_concern{background:#fff4e0}"
            ".marker{color:#c00;font-weight:bold}.raw{color:#444}.prov{color:#57606a;font-size:.9em}"
            ".mismatch{background:#fff8c5}.pager{margin:1em 0}.legend span{margin-right:1em}nav.home{font-size:.9em}"
            ".filter{background:#f6f8fa;border:1px solid #d0d7de;padding:.3em .6em;position:sticky;top:0}"
            ".filter label{margin-right:.9em;white-space:nowrap}details{margin:.4em 0}"
            "details>summary{cursor:pointer;font-weight:600}.summary{font-size:1.05em}.ids{color:#57606a}"
            ".as-of{color:#57606a;font-size:.9em}.refusal{color:#57606a;font-size:.9em;font-style:italic}")


CSS = make_css()

# the filter of a paper page: a box per state shown, the address's ?state=... preselecting some
FILTER_SCRIPT = """
(function () {
  var bar = document.getElementById("filter");
  if (!bar) { return; }
  var boxes = Array.prototype.slice.call(bar.querySelectorAll("input[data-state]"));
  var refs = Array.prototype.slice.call(document.querySelectorAll("div.ref[data-state]"));
  var shown = document.getElementById("filter-shown");
  function apply() {
    var on = {}, n = 0;
    boxes.forEach(function (b) { on[b.getAttribute("data-state")] = b.checked; });
    refs.forEach(function (r) {
      var show = on[r.getAttribute("data-state")] !== false;
      r.className = r.className.replace(/ off$/, "") + (show ? "" : " off");
      n += show ? 1 : 0;
    });
    shown.textContent = n + " of " + refs.length + " references shown";
  }
  var wanted = new URLSearchParams(window.location.search).getAll("state");
  if (wanted.length) {
    boxes.forEach(function (b) { b.checked = wanted.indexOf(b.getAttribute("data-state")) >= 0; });
  }
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  apply();
})();
"""


def state_class(state: Any) -> str:
    return f"s-{state}" if isinstance(state, str) and state in page_words.STATES else "s-other"


def link(href: str | None, label: str) -> str:
    """``label`` (escaped already) linked to ``href`` (escaped here), or as it is without one."""
    return f'<a href="{escape_html(href)}">{label}</a>' if href else label


def html_page(view: RecordView, number: int) -> str:
    """Page ``number`` of the record: its heading and, on the first page, one line of counts and
    notices; the references with their filter; then, on the first page, the citing papers and the
    folded details."""
    record, e = view.record, escape_html
    work = dict(record["paper"].get("work") or {})
    if not work.get("title") and view.links.title:
        work["title"] = view.links.title  # the paper's own source's, when the catalog has none
    heading = f"Citation ledger of {record['paper']['id']}"
    page = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(heading)}{e(' — ' + str(work['title']) if work.get('title') else '')}"
            f"{e(f' (page {number})' if number > 1 else '')}</title><style>{css()}</style></head><body>"]
    if view.links.home:
        home = " &middot; ".join(link(h, e(label)) for label, h in view.links.home)
        page.append(f'<nav class="home">{home}</nav>')
    page.append(f"<h1>{e(heading)}</h1>")
    if work.get("title"):
        page.append(f'<p class="title"><b>{e(work["title"])}</b></p>')
    outside = [link(href, e(label)) for label, href in page_words.work_links(work)]
    if outside:
        page.append(f'<p class="ids">{" &middot; ".join(outside)}</p>')
    page.append(f'<p class="as-of">{e(as_of_sentence(record))}</p>')
    page.append(f'<p class="refusal">{e(REFUSAL)}</p>')
    if number == 1:
        page += html_head_lines(view)
    else:
        page.append(f'<p>{link(href_name(page_file(view.links.stem, 1)), "Summary, notices and citing papers")} '
                    "are on the first page.</p>")
    page += html_references(view, number)
    if number == 1:
        page += html_inbound(view)
        page += html_details(view)
    page.append(f"<script>{FILTER_SCRIPT}</script></body></html>")
    return "\n".join(page) + "\n"


def html_head_lines(view: RecordView) -> list[str]:
    """The first page's lines above the references: the counts (linked apart from mismatched), and
    the cited works with notices, each alarming one with the references citing it."""
    record, e = view.record, escape_html
    alarming = any(s in page_words.ALARMING for s in view.noticed)
    notices = page_words.works_sentence(view.noticed)
    page = [f'<p class="summary"><b>{e(page_words.linked_words(record["counts"]))}</b>; '
            f"{e(notices[:1].lower() + notices[1:])}</p>",
            f'<p class="prov">Schema <code>{e(record["schema"])}</code>; the record as JSON: '
            f"{link(href_name(json_name(view)), e(json_name(view)))}; its digest <code>{e(record['content_digest'])}"
            "</code></p>"]
    if alarming:
        refs = ", ".join(link(view.anchor(i, 1), f"[{e(i['reference_index'])}]") for i in record["with_notices"]
                         if i["notice"]["standing"] in page_words.ALARMING)
        alarm_works = {s: v for s, v in view.noticed.items() if s in page_words.ALARMING}
        page.append(f'<p class="alarm"><span class="marker">!!</span> cited by reference {refs}: '
                    f"{e(page_words.works_sentence(alarm_works))}</p>")
    return page


def html_details(view: RecordView) -> list[str]:
    """What a reader checks less often, folded: the paper, the states, coverage, notices, provenance."""
    record, e = view.record, escape_html
    page = ["<h2>About this record</h2>", "<details><summary>The paper</summary><ul class=\"paper\">"]
    page += [f"<li>{e(line)}</li>" for line in paper_facts(record)] + ["</ul></details>"]
    page += [f"<details><summary>References by state ({e(page_words.linked_words(record['counts']))})</summary>",
             '<table class="states"><tr><th>state</th><th>in words</th><th class="num">references</th>'
             "<th>what it means</th></tr>"]
    page += [f'<tr><td><span class="sw {state_class(s)}"></span> <code>{e(s)}</code></td><td>{e(plain)}</td>'
             f'<td class="num">{e(count)}</td><td>{e(meaning)}</td></tr>'
             for s, plain, meaning, _, count in state_rows(record)]
    page += ["</table></details>", "<details><summary>What this record measured</summary>",
             '<table class="coverage"><tr><th>what</th><th>measured?</th><th>how much</th>'
             "<th>from (as of)</th><th>what it means</th></tr>"]
    page += [f"<tr><td>{e(what)}</td><td>{e(state)}</td><td>{e(figure)}</td><td>{e(source)}</td>"
             f"<td>{e(means)}</td></tr>" for what, state, figure, source, means in coverage_rows(record)]
    page.append("</table></details>")
    page += html_notices(view)
    page += ["<details><summary>Provenance and receipt</summary>",
             f'<p class="prov">Every reference above was {e(view.common or "of unrecorded provenance")}, '
             "unless it says otherwise.</p>",
             f'<p class="prov">Record digest <code>{e(record["content_digest"])}</code>; '
             f"{e(receipt_line(record))}.</p></details>"]
    return page


def html_notices(view: RecordView) -> list[str]:
    """The cited works with notices, each once, with the references citing it (linked to their page)."""
    noticed = view.record["with_notices"]
    if not noticed:
        return []
    e = escape_html
    works = page_words.plural(sum(map(len, view.noticed.values())), "work")
    page = [f"<details><summary>Cited works with notices ({works}, {page_words.plural(len(noticed), 'reference')})"
            "</summary>", "<ul class=\"noticed\">"]
    by_work: dict[str, list[Mapping[str, Any]]] = {}
    for item in noticed:
        by_work.setdefault(page_words.noticed_work_key(item), []).append(item)
    for items in by_work.values():
        first = items[0]
        refs = ", ".join(link(view.anchor(i, 1), f"[{e(i['reference_index'])}]") for i in items)
        marker = ALARM.get(first["notice"]["standing"])
        page.append(f'<li class="n-{e(first["notice"]["standing"])}">'
                    + (f'<span class="marker">{e(marker)}</span> ' if marker else "")
                    + f"{html_work(view, first.get('resolved'), page_words.notice_doi(first))}<br>"
                    f"{e(notice_line(first['notice'], page_words.notice_doi(first)))}<br>"
                    f"cited by reference {refs}</li>")
    return page + ["</ul></details>"]


def html_work(view: RecordView, resolved: Mapping[str, Any] | None, doi: str | None = None) -> str:
    """A cited work with its links: its page here (when it has one), doi.org, arxiv.org; a
    reference with no catalog work but a DOI with a notice names that DOI, linked."""
    e = escape_html
    if not resolved:
        if doi:
            return f"no catalog work; the string cites {link(page_words.doi_href(doi), e('doi:' + doi))}"
        return "no catalog work"
    text = link(view.links.work_href(resolved), e(work_line(resolved)))
    outside = " ".join(link(href, e(label)) for label, href in page_words.work_links(resolved))
    return text + (f" ({outside})" if outside else "")


def html_references(view: RecordView, number: int) -> list[str]:
    e = escape_html
    items = view.pages[number - 1]
    page = [f'<h2 id="references">{e(page_heading(view, number))}</h2>', *html_filter(items),
            *html_pager(view, number)]
    if any(no_notice_found(item["notice"]) for item in items):
        page.append('<p class="prov">A reference below names the notice of its cited work when one was found or '
                    "its work could not be checked; the sources checked, and when, are under What this record "
                    "measured (first page).</p>")
    page += [html_reference(view, item) for item in items]
    if not items:
        page.append("<p>No reference of this paper is in the ledger.</p>")
    return page + html_pager(view, number)


def html_filter(items: list[Mapping[str, Any]]) -> list[str]:
    """A box per state of the page's references (its colour, words and count: the legend too), each
    ticked; unticking one hides its references. ``?state=unresolved`` in the address ticks only those."""
    counts: dict[Any, int] = {}
    for item in items:
        counts[item["status"]] = counts.get(item["status"], 0) + 1
    if not counts:
        return []
    order = [s for s in page_words.STATES if s in counts] + [s for s in counts if s not in page_words.STATES]
    e = escape_html
    boxes = "".join(f'<label title="{e(page_words.state_words(s)[1])}">'
                    f'<input type="checkbox" data-state="{e(s)}" checked> '
                    f'<span class="sw {state_class(s)}"></span> {e(page_words.state_words(s)[0])} ({counts[s]})</label>'
                    for s in order)
    return [f'<div class="filter" id="filter">Show: {boxes}<span id="filter-shown"></span></div>']


def html_pager(view: RecordView, number: int) -> list[str]:
    if len(view.pages) < 2:
        return []
    cells = [f"<b>{n}</b>" if n == number else link(href_name(page_file(view.links.stem, n)) + "#references", str(n))
             for n in range(1, len(view.pages) + 1)]
    return [f'<nav class="pager">Pages: {" ".join(cells)}</nav>']


def html_reference(view: RecordView, item: Mapping[str, Any]) -> str:
    """One reference's block."""
    e = escape_html
    state, standing, index = item["status"], item["notice"]["standing"], e(item["reference_index"])
    marker = ALARM.get(standing)
    via = f" via {e(item['resolver_source'])}" if item.get("resolver_source") else ""
    score = f", score {item['score']:.2f}" if isinstance(item.get("score"), (int, float)) else ""
    doi = page_words.notice_doi(item) if marker else None
    plain, meaning, _ = page_words.state_words(state)
    block = [f'<div class="ref {state_class(state)} n-{e(standing)}" id="ref-{index}" data-state="{e(state)}">',
             f'<p><a href="#ref-{index}"><b>[{index}]</b></a> '
             f'<span class="badge" title="{e(state)}: {e(meaning)}">{e(plain)}</span>{via}{e(score)}'
             + (f' <span class="marker">{e(marker)}</span>' if marker else "")
             + "</p>", f'<p class="raw">{e(cut_text(item["cited_as"]["raw"], 1000))}</p>',
             f"<p>{'Its identifier names' if state == 'metadata_mismatch' else 'Cited work'}: "
             f"{html_work(view, item.get('resolved'), doi)}</p>"]
    if state == "metadata_mismatch":
        block.append(html_mismatch(item.get("evidence")))
    if not no_notice_found(item["notice"]) and item["notice"].get("reason") != "no_canonical_work":
        block.append(f"<p>Notice: {e(notice_line(item['notice'], page_words.notice_doi(item)))}</p>")
    own = provenance_of(item)
    if own is not None and own != view.common:
        block.append(f'<p class="prov">Provenance: {e(own)}</p>')
    block.append(f'<p class="prov">Observation <code>{e(item.get("observation_id"))}</code></p>')
    return "\n".join(block) + "\n</div>"


def html_mismatch(evidence: Any) -> str:
    """The fields a ``metadata_mismatch`` finds contradicted, both sides of each."""
    e = escape_html
    rows = page_words.contradictions(evidence)
    if not rows:
        return '<p class="mismatch">The identifier names another work (the evidence names no field).</p>'
    return ('<table class="mismatch"><tr><th>contradicting field</th><th>the cited string says</th>'
            "<th>the identifier's work says</th></tr>"
            + "".join(f"<tr><td>{e(f)}</td><td>{e(said)}</td><td>{e(has)}</td></tr>" for f, said, has in rows)
            + "</table>")


def html_inbound(view: RecordView) -> list[str]:
    record, e = view.record, escape_html
    page = [f"<h2>{e(inbound_heading(record))}</h2>", "<ul class=\"inbound\">"]
    if not record["inbound"]["items"]:
        page.append("<li>none in this ledger</li>")
    for item in record["inbound"]["items"]:
        title = f' "{item["citing_title"]}"' if item.get("citing_title") else ""
        href = view.links.paper_href(str(item["citing_paper"]))
        page.append(f"<li>{link(href, e(item['citing_paper']))}{e(title)}, "
                    f"its reference [{e(item['reference_index'])}] "
                    f'(<span class="badge {state_class(item["status"])}">{e(page_words.state_words(item["status"])[0])}'
                    f'</span>), observation <code>{e(item.get("observation_id"))}</code></li>')
    return page + ["</ul>"]
