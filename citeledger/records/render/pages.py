"""The citation record as pages a reader uses: plain text for a terminal, HTML for a browser.

Both say the same facts: the paper and its links, the references by state (a table, each state in
plain words and, in HTML, a colour with its legend), what the record measured and what it did not
(coverage in plain words), the cited works with notices counted as works, one provenance block (a
reference shows its own only where it differs), then each reference with its links (doi.org,
arxiv.org, the cited and citing papers' own pages when the caller knows them), both sides of each
field a ``metadata_mismatch`` finds contradicted, and the DOI of every notice named. A long
record's HTML is paged (``<stem>.html``, ``<stem>.page-2.html``, ...; ``names.page_file``) with
anchors that lead to the page holding the reference. Control characters of input strings are made
visible. Pure functions of a record built by ``records.build_record``; they add nothing to it."""
from __future__ import annotations

from typing import Any, Mapping

from citeledger.display import visible_controls
from citeledger.records import canonical as record_canonical
from citeledger.records.render import words
from citeledger.records.render.names import href_name, page_file, record_file_stem
from citeledger.records.render.view import (
    ALARM,
    PageLinks,
    RecordView,
    as_of_sentence,
    escape_html,
    notice_line,
    provenance_of,
    sibling_page,
    work_line,
)

__all__ = ["ALARM", "PageLinks", "RecordView", "record_file_stem", "render_html_pages", "render_json",
           "render_ledger_html", "render_ledger_text", "sibling_page", "view_html_pages"]


def render_json(record: Mapping[str, Any]) -> bytes:
    """The record file's bytes: the RFC 8785 (JCS) form of the whole record and a newline, a built
    record's from the bytes its content digest was taken over (``records.canonical.file_bytes``)."""
    return record_canonical.file_bytes(record)


def render_ledger_text(record: Mapping[str, Any], links: PageLinks | None = None) -> str:
    """The record as plain text: every reference it holds, on one page."""
    return visible_controls(text_page(RecordView(record, links)))


def render_ledger_html(record: Mapping[str, Any], links: PageLinks | None = None) -> str:
    """The record's first HTML page (its one page when it holds up to its page cap of references)."""
    return render_html_pages(record, links)[0]


def render_html_pages(record: Mapping[str, Any], links: PageLinks | None = None) -> list[str]:
    """Each HTML page of the record, in order (``names.page_file`` names their files)."""
    return view_html_pages(RecordView(record, links))


def view_html_pages(view: RecordView) -> list[str]:
    """``render_html_pages`` of a record's view made already (the site reads the view's pages too)."""
    return [visible_controls(html_page(view, number)) for number in range(1, len(view.pages) + 1)]


def _cut(text: Any, limit: int) -> str:
    words_ = " ".join(str(text or "").split())
    return words_ if len(words_) <= limit else words_[: limit - 1] + "…"


# ---- facts both pages say ------------------------------------------------------------------


def paper_facts(record: Mapping[str, Any]) -> list[str]:
    """The paper's ids, handle, aliases, categories, versions and dates, each only when known."""
    paper = record["paper"]
    work = paper.get("work") or {}
    ids = [f"{k} {work[k]}" for k in ("work_id", "doi", "arxiv_id") if work.get(k)]
    lines = [" | ".join(ids) if ids else "not in the catalog"]
    if "handle" in paper:
        lines.append(f"handle {paper['handle']} | aliases: {', '.join(paper['aliases'])}")
        if paper.get("categories") is not None:
            lines.append(f"categories: {', '.join(paper['categories']) or 'none'}")
        if paper.get("versions"):
            lines.append(f"submitted {paper['submitted_at']}, last updated {paper['last_updated_at']}, versions: "
                         + ", ".join(f"{v['version']} {v['created']}" for v in paper["versions"]))
        elif paper.get("versions") is None:
            lines.append("categories, versions and dates: not kept by this catalog for this paper")
        if paper.get("metadata_source"):
            lines.append(f"metadata from: {', '.join(paper['metadata_source'])}")
    return lines


def receipt_line(record: Mapping[str, Any]) -> str:
    receipt = record.get("receipt")
    if not receipt:
        return "receipt: none"
    if receipt["state"] == "signed":
        return (f"signed {receipt['signed_at']} by key {receipt['key_id']} ({receipt['algorithm']}, "
                f"{receipt['builder']})")
    return f"unsigned ({receipt['why_unsigned']}); built {receipt['signed_at']} by {receipt['builder']}"


def state_rows(record: Mapping[str, Any]) -> list[tuple[Any, str, str, str, Any]]:
    """(state, words, meaning, colour, count) of each state the record counts, known states first."""
    by_status = record["counts"]["by_status"]
    order = [s for s in words.STATES if s in by_status] + [s for s in by_status if s not in words.STATES]
    return [(s, *words.state_words(s), by_status[s]) for s in order]


def coverage_rows(record: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(what, how far measured, figure, from where and when, what it means) of each coverage lane."""
    lanes = record["coverage"]
    order = [n for n in words.LANES if n in lanes] + sorted(n for n in lanes if n not in words.LANES)
    return [(*words.lane_figures(name, lanes[name]), words.lane_source(name, lanes[name]),
             str(lanes[name].get("means") or "")) for name in order if isinstance(lanes[name], Mapping)]


def page_heading(view: RecordView, number: int) -> str:
    """"References 1001-2000 of 12485 (page 2 of 13)": what a page of a paged list shows."""
    outbound, page = view.record["outbound"], view.pages[number - 1]
    total = outbound["total"]
    if len(view.pages) == 1 and not outbound["truncated"]:
        return f"References ({total})"
    first = sum(len(p) for p in view.pages[:number - 1]) + 1
    shown = f"References {first}-{first + len(page) - 1} of {total}" if page else f"References (0 of {total})"
    missing = len(view.references) < total
    return shown + f" (page {number} of {len(view.pages)}" + (
        f"; the record holds {len(view.references)} of them, cut at {outbound['cap']}" if missing else "") + ")"


def inbound_heading(record: Mapping[str, Any]) -> str:
    inbound = record["inbound"]
    cut = f", cut at {inbound['cap']}" if inbound["truncated"] else ""
    return f"Cited by papers in this ledger ({inbound['listed']} of {inbound['total']} listed{cut})"


# ---- text ------------------------------------------------------------------------------------


def text_page(view: RecordView) -> str:
    """The text page: the summary, the notices, every reference, the citing papers."""
    record = view.record
    work = record["paper"].get("work") or {}
    title = f' "{work["title"]}"' if work.get("title") else ""
    lines = [as_of_sentence(record), "", f"Citation ledger of {record['paper']['id']}{title}"]
    lines += [f"  {line}" for line in paper_facts(record)]
    lines += [f"  link: {href}" for _, href in words.work_links(work)]
    lines += ["", f"Notices: {words.works_sentence(view.noticed)}", "",
              f"References by state ({words.linked_words(record['counts'])}):"]
    lines += [f"  {plain:<34} {count:>6}  ({state}: {meaning})"
              for state, plain, meaning, _, count in state_rows(record)]
    lines += ["", "What this record measured:"]
    lines += [f"  {what}: {state}, {figure}; from {source}" + (f" ({means})" if means else "")
              for what, state, figure, source, means in coverage_rows(record)]
    lines += ["", "Provenance (of every reference unless it says otherwise):", f"  {view.common or 'not recorded'}",
              f"  record digest {record['content_digest']}", f"  {receipt_line(record)}"]
    lines += text_notices(view)
    lines += ["", page_heading_text(view) + ":"]
    lines += [text_reference(view, item) for item in view.references]
    lines += ["", inbound_heading(record) + ":"]
    if not record["inbound"]["items"]:
        lines.append("  (none in this ledger)")
    for item in record["inbound"]["items"]:
        title = f' "{item["citing_title"]}"' if item.get("citing_title") else ""
        via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
        lines.append(f"  - {item['citing_paper']}{title} reference [{item['reference_index']}] ({item['status']}{via})")
    return "\n".join(lines) + "\n"


def page_heading_text(view: RecordView) -> str:
    outbound = view.record["outbound"]
    if len(view.references) < outbound["total"]:
        return f"References ({len(view.references)} of {outbound['total']} listed, cut at {outbound['cap']})"
    return f"References ({outbound['total']})"


def text_notices(view: RecordView) -> list[str]:
    noticed = view.record["with_notices"]
    if not noticed:
        return []
    works = words.plural(sum(map(len, view.noticed.values())), "work")
    lines = ["", f"Cited works with notices ({works}, {words.plural(len(noticed), 'reference')}):"]
    for item in noticed:
        lines.append(f"[{item['reference_index']}] {work_line(item.get('resolved'), words.notice_doi(item))}")
        lines.append(f"    {notice_line(item['notice'], words.notice_doi(item))}")
    return lines


def text_reference(view: RecordView, item: Mapping[str, Any]) -> str:
    """One reference's lines, in one string."""
    state, resolved = item["status"], item.get("resolved")
    score = f", score {item['score']:.2f}" if isinstance(item.get("score"), (int, float)) else ""
    via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
    doi = words.notice_doi(item) if item["notice"]["standing"] in ALARM else None
    lines = [f"[{item['reference_index']}] {words.state_words(state)[0]} ({state}){via}{score}",
             f"    cited as: {_cut(item['cited_as']['raw'], 300)}", f"    cited work: {work_line(resolved, doi)}"]
    lines += [f"      {href}" for _, href in words.work_links(resolved)]
    if state == "metadata_mismatch":
        lines += [f'    contradicts on {field}: the string says "{_cut(said, 200)}"; the work says "{_cut(has, 200)}"'
                  for field, said, has in words.contradictions(item.get("evidence"))]
    lines.append(f"    notice: {notice_line(item['notice'], words.notice_doi(item))}")
    own = provenance_of(item)
    if own is not None and own != view.common:
        lines.append(f"    provenance: {own}")
    return "\n".join(lines)


# ---- HTML ------------------------------------------------------------------------------------


def css() -> str:
    """The page style; each state's colour (``words.STATES``) as a class ``s-<state>``."""
    return CSS


def make_css() -> str:
    colours = "".join(f".s-{s}{{border-left-color:{c}}}.s-{s} .badge,.badge.s-{s},.sw.s-{s}{{background:{c}}}"
                      for s, (_, _, c) in words.STATES.items())
    return ("body{font-family:system-ui,sans-serif;max-width:62em;margin:1.5em auto;padding:0 1em;line-height:1.45;"
            "color:#1f2328}a{color:#0969da}table{border-collapse:collapse;margin:.5em 0}"
            "td,th{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}"
            "th{background:#f6f8fa}.num{text-align:right}"
            ".ref{border-left:6px solid #57606a;padding:.3em .8em;margin:.7em 0;background:#fafbfc}"
            ".badge,.sw{display:inline-block;color:#fff;border-radius:3px;padding:0 .4em;font-size:.85em;"
            f"background:#57606a}}.sw{{width:1em;height:1em;padding:0}}{colours}"
            ".alarm{border:2px solid #c00;background:#fee;padding:.3em .8em}"
            ".ref.n-retracted,.ref.n-withdrawn{background:#fee}.ref.n-expression_of_concern{background:#fff4e0}"
            ".marker{color:#c00;font-weight:bold}.raw{color:#444}.prov{color:#57606a;font-size:.9em}"
            ".mismatch{background:#fff8c5}.pager{margin:1em 0}.legend span{margin-right:1em}nav.home{font-size:.9em}")


CSS = make_css()


def state_class(state: Any) -> str:
    return f"s-{state}" if isinstance(state, str) and state in words.STATES else "s-other"


def link(href: str | None, label: str) -> str:
    """``label`` (escaped already) linked to ``href`` (escaped here), or as it is without one."""
    return f'<a href="{escape_html(href)}">{label}</a>' if href else label


def html_page(view: RecordView, number: int) -> str:
    """Page ``number`` of the record: the summary on the first page, then its references."""
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
    page.append(f'<p class="as-of">{e(as_of_sentence(record))}</p>')
    if number == 1:
        page += html_summary(view)
    else:
        page.append(f'<p>{link(href_name(page_file(view.links.stem, 1)), "Summary, notices and citing papers")} '
                    "are on the first page.</p>")
    page += html_references(view, number)
    if number == 1:
        page += html_inbound(view)
    page.append("</body></html>")
    return "\n".join(page) + "\n"


def html_summary(view: RecordView) -> list[str]:
    """The first page's summary: links, notices, states, coverage, provenance, record."""
    record, e = view.record, escape_html
    work = record["paper"].get("work") or {}
    page = ["<ul class=\"paper\">"] + [f"<li>{e(line)}</li>" for line in paper_facts(record)]
    page += [f"<li>{link(href, e(label))}</li>" for label, href in words.work_links(work)] + ["</ul>"]
    alarming = any(s in words.ALARMING for s in view.noticed)
    page.append(f'<p class="{"alarm" if alarming else "notices"}">{e(words.works_sentence(view.noticed))}</p>')
    page += html_notices(view)
    page += [f"<h2>References by state ({e(words.linked_words(record['counts']))})</h2>",
             '<table class="states"><tr><th>state</th><th>in words</th><th class="num">references</th>'
             "<th>what it means</th></tr>"]
    page += [f'<tr><td><span class="sw {state_class(s)}"></span> <code>{e(s)}</code></td><td>{e(plain)}</td>'
             f'<td class="num">{e(count)}</td><td>{e(meaning)}</td></tr>'
             for s, plain, meaning, _, count in state_rows(record)]
    page += ["</table>", "<h2>What this record measured</h2>",
             '<table class="coverage"><tr><th>what</th><th>measured?</th><th>how much</th>'
             "<th>from (as of)</th><th>what it means</th></tr>"]
    page += [f"<tr><td>{e(what)}</td><td>{e(state)}</td><td>{e(figure)}</td><td>{e(source)}</td>"
             f"<td>{e(means)}</td></tr>" for what, state, figure, source, means in coverage_rows(record)]
    page += ["</table>", "<h2>Provenance</h2>",
             f'<p class="prov">Every reference below was {e(view.common or "of unrecorded provenance")}, '
             "unless it says otherwise.</p>",
             f'<p class="prov">Record digest <code>{e(record["content_digest"])}</code>; '
             f"{e(receipt_line(record))}.</p>"]
    return page


def html_notices(view: RecordView) -> list[str]:
    """The cited works with notices, each once, with the references citing it (linked to their page)."""
    noticed = view.record["with_notices"]
    if not noticed:
        return []
    e = escape_html
    page = [f"<h2>Cited works with notices ({words.plural(sum(map(len, view.noticed.values())), 'work')}, "
            f"{words.plural(len(noticed), 'reference')})</h2>", "<ul class=\"noticed\">"]
    by_work: dict[str, list[Mapping[str, Any]]] = {}
    for item in noticed:
        by_work.setdefault(words.noticed_work_key(item), []).append(item)
    for items in by_work.values():
        first = items[0]
        refs = ", ".join(link(view.anchor(i, 1), f"[{e(i['reference_index'])}]") for i in items)
        marker = ALARM.get(first["notice"]["standing"])
        page.append(f'<li class="n-{e(first["notice"]["standing"])}">'
                    + (f'<span class="marker">{e(marker)}</span> ' if marker else "")
                    + f"{html_work(view, first.get('resolved'), words.notice_doi(first))}<br>"
                    f"{e(notice_line(first['notice'], words.notice_doi(first)))}<br>cited by reference {refs}</li>")
    return page + ["</ul>"]


def html_work(view: RecordView, resolved: Mapping[str, Any] | None, doi: str | None = None) -> str:
    """A cited work with its links: its page here (when it has one), doi.org, arxiv.org; a
    reference with no catalog work but a DOI with a notice names that DOI, linked."""
    e = escape_html
    if not resolved:
        if doi:
            return f"no catalog work; the string cites {link(words.doi_href(doi), e('doi:' + doi))}"
        return "no catalog work"
    text = link(view.links.work_href(resolved), e(work_line(resolved)))
    outside = " ".join(link(href, e(label)) for label, href in words.work_links(resolved))
    return text + (f" ({outside})" if outside else "")


def html_references(view: RecordView, number: int) -> list[str]:
    e = escape_html
    page = [f'<h2 id="references">{e(page_heading(view, number))}</h2>', html_legend(), *html_pager(view, number)]
    page += [html_reference(view, item) for item in view.pages[number - 1]]
    if not view.pages[number - 1]:
        page.append("<p>No reference of this paper is in the ledger.</p>")
    return page + html_pager(view, number)


def html_legend() -> str:
    return ('<p class="legend">' + "".join(f'<span><span class="sw s-{s}"></span> {escape_html(plain)}</span>'
                                           for s, (plain, _, _) in words.STATES.items()) + "</p>")


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
    doi = words.notice_doi(item) if marker else None
    block = [f'<div class="ref {state_class(state)} n-{e(standing)}" id="ref-{index}">',
             f'<p><a href="#ref-{index}"><b>[{index}]</b></a> '
             f'<span class="badge">{e(words.state_words(state)[0])}</span> <code>{e(state)}</code>{via}{e(score)}'
             + (f' <span class="marker">{e(marker)}</span>' if marker else "")
             + "</p>", f'<p class="raw">{e(_cut(item["cited_as"]["raw"], 1000))}</p>',
             f"<p>Cited work: {html_work(view, item.get('resolved'), doi)}</p>"]
    if state == "metadata_mismatch":
        block.append(html_mismatch(item.get("evidence")))
    block.append(f"<p>Notice: {e(notice_line(item['notice'], words.notice_doi(item)))}</p>")
    own = provenance_of(item)
    if own is not None and own != view.common:
        block.append(f'<p class="prov">Provenance: {e(own)}</p>')
    return "\n".join(block) + "\n</div>"


def html_mismatch(evidence: Any) -> str:
    """The fields a ``metadata_mismatch`` finds contradicted, both sides of each."""
    e = escape_html
    rows = words.contradictions(evidence)
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
                    f'(<span class="badge {state_class(item["status"])}">{e(words.state_words(item["status"])[0])}'
                    "</span>)</li>")
    return page + ["</ul>"]
