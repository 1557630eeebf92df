"""The citation record as pages a reader uses: plain text for a terminal (here), HTML for a
browser (``html_pages``: the references first, filtered by state, the rest folded below).

Both say the same facts (``view``): the paper and its links, the references by state, what the
record measured and what it did not (coverage in plain words), the cited works with notices counted
as works, one provenance block (a reference shows its own only where it differs), then each
reference with its links (doi.org, arxiv.org, the cited and citing papers' own pages when the
caller knows them), both sides of each field a ``metadata_mismatch`` finds contradicted, and the DOI
of every notice named. A long record's HTML is paged (``<stem>.html``, ``<stem>.page-2.html``, ...;
``file_names.page_file``) with anchors that lead to the page holding the reference. Control characters
of input strings are made visible. Pure functions of a record built by ``record.build_record``;
they add nothing to it.

A record write makes its page files with the same code (``render_all_files``, each file in UTF-8),
so the files a write makes and the pages ``citeledger record`` prints cannot differ (about 1-2 ms a
record of 40 references: ``benchmarks/bench_records.py``, "serialise"); ``PageCache`` is the
writer's handle for what its records share."""
from __future__ import annotations

from typing import Any, Mapping

from citeledger.display import visible_controls, visible_utf8
from citeledger.pith.export import REFUSAL
from citeledger.records.record_json import file_bytes
from citeledger.records.render import page_words
from citeledger.records.render.file_names import page_suffix, record_file_stem
from citeledger.records.render.html_pages import html_page
from citeledger.records.render.view import (
    ALARM,
    PageLinks,
    RecordView,
    as_of_sentence,
    coverage_rows,
    cut_text,
    inbound_heading,
    json_name,
    notice_line,
    paper_facts,
    provenance_of,
    receipt_line,
    sibling_page,
    state_rows,
    work_line,
)

__all__ = ["ALARM", "PageLinks", "RecordView", "record_file_stem", "render_html_pages", "render_json",
           "render_ledger_html", "render_ledger_text", "sibling_page", "view_html_pages"]


def render_json(record: Mapping[str, Any]) -> bytes:
    """The record file's bytes: the RFC 8785 (JCS) form of the whole record and a newline, a built
    record's from the bytes its content digest was taken over (``record_json.file_bytes``)."""
    return file_bytes(record)


def render_ledger_text(record: Mapping[str, Any], links: PageLinks | None = None) -> str:
    """The record as plain text: every reference it holds, on one page."""
    return visible_controls(text_page(RecordView(record, links)))


def render_ledger_html(record: Mapping[str, Any], links: PageLinks | None = None) -> str:
    """The record's first HTML page (its one page when it holds up to its page cap of references)."""
    return render_html_pages(record, links)[0]


def render_html_pages(record: Mapping[str, Any], links: PageLinks | None = None) -> list[str]:
    """Each HTML page of the record, in order (``file_names.page_file`` names their files)."""
    return view_html_pages(RecordView(record, links))


def view_html_pages(view: RecordView) -> list[str]:
    """``render_html_pages`` of a record's view made already (the site reads the view's pages too)."""
    return [visible_controls(html_page(view, number)) for number in range(1, len(view.pages) + 1)]


# ---- text ------------------------------------------------------------------------------------


def text_page(view: RecordView) -> str:
    """The text page: the summary, the notices, every reference, the citing papers."""
    record = view.record
    work = record["paper"].get("work") or {}
    title = f' "{work["title"]}"' if work.get("title") else ""
    lines = [as_of_sentence(record), REFUSAL, "", f"Citation ledger of {record['paper']['id']}{title}"]
    lines += [f"  {line}" for line in paper_facts(record)]
    lines += [f"  link: {href}" for _, href in page_words.work_links(work)]
    lines += ["", f"Notices: {page_words.works_sentence(view.noticed)}", "",
              f"References by state ({page_words.linked_words(record['counts'])}):"]
    lines += [f"  {plain:<34} {count:>6}  ({state}: {meaning})"
              for state, plain, meaning, _, count in state_rows(record)]
    lines += ["", "What this record measured:"]
    lines += [f"  {what}: {state}, {figure}; from {source}" + (f" ({means})" if means else "")
              for what, state, figure, source, means in coverage_rows(record)]
    lines += ["", "Provenance (of every reference unless it says otherwise):", f"  {view.common or 'not recorded'}",
              f"  record digest {record['content_digest']}", f"  {receipt_line(record)}",
              f"  schema {record['schema']}; the record as JSON: {json_name(view)}"]
    lines += text_notices(view)
    lines += ["", page_heading_text(view) + ":"]
    lines += [text_reference(view, item) for item in view.references]
    lines += ["", inbound_heading(record) + ":"]
    if not record["inbound"]["items"]:
        lines.append("  (none in this ledger)")
    for item in record["inbound"]["items"]:
        title = f' "{item["citing_title"]}"' if item.get("citing_title") else ""
        via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
        lines.append(f"  - {item['citing_paper']}{title} reference [{item['reference_index']}] "
                     f"({item['status']}{via}), observation {item.get('observation_id')}")
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
    works = page_words.plural(sum(map(len, view.noticed.values())), "work")
    lines = ["", f"Cited works with notices ({works}, {page_words.plural(len(noticed), 'reference')}):"]
    for item in noticed:
        lines.append(f"[{item['reference_index']}] {work_line(item.get('resolved'), page_words.notice_doi(item))}")
        lines.append(f"    {notice_line(item['notice'], page_words.notice_doi(item))}")
    return lines


def text_reference(view: RecordView, item: Mapping[str, Any]) -> str:
    """One reference's lines, in one string."""
    state, resolved = item["status"], item.get("resolved")
    score = f", score {item['score']:.2f}" if isinstance(item.get("score"), (int, float)) else ""
    via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
    doi = page_words.notice_doi(item) if item["notice"]["standing"] in ALARM else None
    lines = [f"[{item['reference_index']}] {page_words.state_words(state)[0]} ({state}){via}{score}",
             f"    cited as: {cut_text(item['cited_as']['raw'], 300)}", f"    cited work: {work_line(resolved, doi)}"]
    lines += [f"      {href}" for _, href in page_words.work_links(resolved)]
    if state == "metadata_mismatch":
        lines += [f'    contradicts on {field}: the string says "{cut_text(said, 200)}"; '
                  f'the work says "{cut_text(has, 200)}"'
                  for field, said, has in page_words.contradictions(item.get("evidence"))]
    lines.append(f"    notice: {notice_line(item['notice'], page_words.notice_doi(item))}")
    lines.append(f"    observation: {item.get('observation_id')}")
    own = provenance_of(item)
    if own is not None and own != view.common:
        lines.append(f"    provenance: {own}")
    return "\n".join(lines)


class PageCache:
    """What a writer's records share for their pages: the ``PageLinks`` of their cited works'
    pages, when the writer knows which cited works are papers of the ledger (``work_pages``: work
    id -> the ledger paper id whose record is that work's page)."""

    __slots__ = ("work_pages",)

    def __init__(self, work_pages: Mapping[str, str] | None = None) -> None:
        self.work_pages = dict(work_pages or {})

    def links(self, record: Mapping[str, Any]) -> PageLinks:
        stem = record_file_stem(str(record["paper"]["id"]))
        pages = self.work_pages

        def work_href(resolved: Mapping[str, Any]) -> str | None:
            paper = pages.get(str(resolved.get("work_id")))
            return sibling_page(paper) if paper is not None and paper != record["paper"]["id"] else None

        return PageLinks(stem, work_href=work_href if pages else None)


def render_page_files(record: Mapping[str, Any], cache: PageCache | None = None) -> tuple[bytes, bytes]:
    """The record's text page and first HTML page in UTF-8 (controls made visible)."""
    links = (cache or PageCache()).links(record)
    return visible_utf8(render_ledger_text(record, links)), visible_utf8(render_ledger_html(record, links))


def render_all_files(record: Mapping[str, Any], cache: PageCache | None = None) -> dict[str, bytes]:
    """Every page file of the record by suffix: ``txt``, ``html`` and, for a long record,
    ``page-2.html``, ... (``file_names.page_suffix``)."""
    links = (cache or PageCache()).links(record)
    files = {"txt": visible_utf8(render_ledger_text(record, links))}
    for number, page in enumerate(render_html_pages(record, links), start=1):
        files[page_suffix(number)] = visible_utf8(page)
    return files
