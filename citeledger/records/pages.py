"""The citation record as a page: plain text for a terminal and HTML for a browser, with the
control characters of input strings made visible (they must not drive the reader's terminal).
Pure functions of a record built by ``fast_build.build_record``; they add nothing to its content."""
from __future__ import annotations

import html
from typing import Any, Mapping

from citeledger.display import visible_controls
from citeledger.records import canonical as record_canonical


def render_json(record: Mapping[str, Any]) -> bytes:
    """The record file's bytes: the RFC 8785 (JCS) form of the whole record and a newline, a built
    record's from the bytes its content digest was taken over (``record_canonical.file_bytes``)."""
    return record_canonical.file_bytes(record)


ALARM = {"retracted": "!! RETRACTED", "withdrawn": "!! WITHDRAWN",
          "expression_of_concern": "! EXPRESSION OF CONCERN"}


def work_line(resolved: Mapping[str, Any] | None) -> str:
    if not resolved:
        return "nothing"
    bits = [str(resolved.get("work_id"))]
    for key, prefix in (("doi", "doi:"), ("arxiv_id", "arxiv:")):  # the ids the work id does not show
        if resolved.get(key) and f"{prefix}{resolved[key]}".lower() != str(resolved.get("work_id")).lower():
            bits.append(f"{prefix}{resolved[key]}")
    text = " ".join(bits)
    if resolved.get("title"):
        text += f' "{resolved["title"]}"'
    if resolved.get("year"):
        text += f" ({resolved['year']})"
    return text


def snapshot_line(item: Mapping[str, Any]) -> str:
    fingerprint = item.get("snapshot_fingerprint")
    if not fingerprint:
        return "unknown"
    return f"{fingerprint[:19]}… built {item.get('snapshot_observed_at') or 'at an unknown time'}"


def notice_line(notice: Mapping[str, Any]) -> str:
    if notice["state"] != "measured":
        return f"notice not measured ({notice.get('reason')})"
    standing = notice["standing"]
    checked = ", ".join(notice.get("sources_checked") or []) or "no source"
    if notice.get("receipts"):
        checked = ", ".join(f"{r['source']} at {r['checked_at']}" for r in notice["receipts"])
    if not notice["events"]:
        return f"no notice found (checked: {checked})"
    events = "; ".join(
        f"{e['type']} {e.get('date') or 'undated'}"
        + (f" notice doi:{e['notice_doi']}" if e.get("notice_doi") else "")
        + f" [{', '.join(e.get('sources') or [])}]"
        for e in notice["events"]
    )
    head = ALARM.get(standing, standing)
    return f"{head}: {events}"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_of_sentence(record: Mapping[str, Any]) -> str:
    """One sentence: as of when, what the record measured and what it did not."""
    cov = record["coverage"]
    if "external_citations" not in cov:  # a v1 record: no lanes with states
        return f"As of {record['coverage']['resolution'].get('as_of') or 'an unknown time'}, this is a v1 record."
    res, notes, inbound = cov["resolution"], cov["notices"], cov["inbound"]
    missing = [name for name, lane in (("paper metadata", cov["paper_metadata"]), ("notices", notes),
                                       ("resolution", res)) if lane["state"] == "not_measured"]
    return (f"As of {record.get('as_of') or 'an unknown time'}, this record measured the resolution of "
            f"{res['observed']} of {res['denominator']} references, the notices of {notes['observed']} of "
            f"{notes['denominator']} linked cited works and the citations from the {inbound['denominator']} "
            f"references in this ledger that cite the paper; it did not measure citations from outside this "
            f"ledger" + (f", nor {', '.join(missing)}" if missing else "") + ".")


def _paper_lines(paper: Mapping[str, Any]) -> list[str]:
    """Handle, aliases, categories, versions and dates (v2), each only when known."""
    if "handle" not in paper:
        return []
    lines = [f"  handle {paper['handle']} | aliases: {', '.join(paper['aliases'])}"]
    if paper.get("categories") is not None:
        lines.append(f"  categories: {', '.join(paper['categories']) or 'none'}")
    if paper.get("versions"):
        lines.append(f"  submitted {paper['submitted_at']}, last updated {paper['last_updated_at']}, versions: "
                     + ", ".join(f"{v['version']} {v['created']}" for v in paper["versions"]))
    elif paper.get("versions") is None:
        lines.append("  categories, versions and dates: not kept by this catalog for this paper")
    if paper.get("metadata_source"):
        lines.append(f"  metadata from: {', '.join(paper['metadata_source'])}")
    return lines


def _receipt_line(record: Mapping[str, Any]) -> str:
    receipt = record.get("receipt")
    if not receipt:
        return "  receipt: none"
    if receipt["state"] == "signed":
        return (f"  signed {receipt['signed_at']} by key {receipt['key_id']} ({receipt['algorithm']}, "
                f"{receipt['builder']})")
    return f"  unsigned ({receipt['why_unsigned']}); built {receipt['signed_at']} by {receipt['builder']}"


def header_lines(record: Mapping[str, Any]) -> list[str]:
    paper = record["paper"]
    work = paper.get("work") or {}
    counts = record["counts"]
    title = f' "{work["title"]}"' if work.get("title") else ""
    lines = [f"Citation ledger of {paper['id']}{title}", as_of_sentence(record)]
    ids = [f"{k} {work[k]}" for k in ("work_id", "doi", "arxiv_id") if work.get(k)]
    lines.append("  " + (" | ".join(ids) if ids else "not in the catalog"))
    lines += _paper_lines(paper)
    lines.append(f"  references: {counts['references']} | linked: {counts['linked']} | "
                 f"cited by (in this ledger): {counts['inbound']}")
    lines.append("  states: " + ", ".join(f"{s} {n}" for s, n in counts["by_status"].items()))
    flagged = {s: n for s, n in counts["cited_works_by_standing"].items() if n and s != "none"}
    lines.append("  cited works with notices: " + (", ".join(f"{s} {n}" for s, n in flagged.items()) or "none"))
    cov = record["coverage"]
    lines.append("  coverage: " + ", ".join(
        f"{k} {v.get('state', '')} {v['observed']}/{'-' if v['denominator'] is None else v['denominator']}".replace("  ", " ")
        for k, v in cov.items()))
    lines.append(f"  digest: {record['content_digest']}")
    lines.append(_receipt_line(record))
    return lines


def _page_heading(title: str, page: Mapping[str, Any]) -> str:
    """"References (1000 of 12485 listed, cut at 1000)": what a capped list shows and hides."""
    cut = f", cut at {page['cap']}" if page["truncated"] else ""
    return f"{title} ({page['listed']} of {page['total']} listed{cut})"


class ReferenceItem:
    """What the text and the HTML page both show of one reference, worked out once for both."""

    __slots__ = ("work", "notice", "raw", "when", "_html")

    def __init__(self, item: Mapping[str, Any]):
        self.work, self.notice = work_line(item.get("resolved")), notice_line(item["notice"])
        self.raw = " ".join((item["cited_as"]["raw"] or "").split())  # ``_short`` cuts it per page
        self.when = None
        self._html: tuple[str, ...] | None = None
        if "source_observed_at" in item:
            self.when = (f"read {item['source_observed_at']} from {item['source']}; judged against catalog "
                         f"{snapshot_line(item)}; resolved {item['resolved_at']}")

    def html(self) -> tuple[str, ...]:
        """The cited string (cut at 1000), work line, notice line and time line escaped for HTML:
        by one ``html.escape`` of them joined by NUL when none holds one (it maps each character on
        its own, so the parts come back as each one's escape): a call per part cost more than the
        escaping."""
        if self._html is None:
            parts = (_cut(self.raw, 1000), self.work, self.notice, self.when or "")
            joined = "\x00".join(parts)
            self._html = tuple(escape_html(joined).split("\x00")) if joined.count("\x00") == 3 else tuple(map(escape_html, parts))
        return self._html

    @staticmethod
    def of(parts: PageParts, item: Mapping[str, Any]) -> "ReferenceItem":
        """The parts of ``item``, made on first use (a record's listed notices are also references)."""
        got = parts.get(id(item))
        if got is None:
            got = parts[id(item)] = ReferenceItem(item)
        return got


# A page's ``ReferenceItem`` of each reference, by the item's id (a record's listed notices are also
# references: worked out once for both).
PageParts = dict[int, ReferenceItem]


def _cut(words: str, limit: int) -> str:
    """``_short`` of text whose whitespace is already folded."""
    return words if len(words) <= limit else words[: limit - 1] + "…"


def render_ledger_text(record: Mapping[str, Any]) -> str:
    """The record as plain text: header, each reference with its state, link and notice,
    then the inbound list. Retracted cited works carry a ``!! RETRACTED`` marker."""
    parts: PageParts = {}
    references = [text_reference(item, ReferenceItem.of(parts, item)) for item in record["outbound"]["items"]]
    return visible_controls(text_page(record, header_lines(record), references, parts))


def text_reference(item: Mapping[str, Any], got: ReferenceItem) -> str:
    """One reference's lines, in one string (the page joins its lines by newlines anyway)."""
    score = f" score {item['score']:.2f}" if isinstance(item.get("score"), (int, float)) else ""
    via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
    return (f"[{item['reference_index']}] {item['status']}{via}{score}\n    cited as: {_cut(got.raw, 300)}\n"
            f"    resolved to: {got.work}\n    notice: {got.notice}" + (f"\n    {got.when}" if got.when is not None else ""))


def text_page(record: Mapping[str, Any], header: list[str], references: list[str], parts: PageParts) -> str:
    """The text page around its references' lines (made already: here or by ``page_files``)."""
    lines = [header[1], "", header[0], *header[2:]]  # the page opens with the "As of ..." sentence
    if record["with_notices"]:
        lines.append("")
        lines.append(f"Cited works with notices ({len(record['with_notices'])}, all listed):")
        for item in record["with_notices"]:
            got = ReferenceItem.of(parts, item)
            lines.append(f"[{item['reference_index']}] {got.work}")
            lines.append(f"    {got.notice}")
    lines += ["", _page_heading("References", record["outbound"]) + ":", *references]
    inbound = record["inbound"]
    lines.append("")
    lines.append(_page_heading("Cited by", inbound) + ":")
    if not inbound["items"]:
        lines.append("  (none in this ledger)")
    for item in inbound["items"]:
        title = f' "{item["citing_title"]}"' if item.get("citing_title") else ""
        via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
        lines.append(f"  - {item['citing_paper']}{title} reference [{item['reference_index']}] ({item['status']}{via})")
    return "\n".join(lines) + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;line-height:1.4}
.ref{border-left:4px solid #ccc;padding:.3em .8em;margin:.6em 0}
.ref.retracted,.ref.withdrawn{border-color:#c00;background:#fee}
.ref.expression_of_concern{border-color:#e80;background:#fff4e0}
.marker{color:#c00;font-weight:bold}
.state{font-family:monospace}
.raw{color:#444}
"""


def escape_html(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


_WORDS: dict[Any, str] = {}  # escaped states, standings, resolver sources, markers, reference numbers


def escape_word(value: Any) -> str:
    """``escape_html`` of a value from a small set that recurs on every page, escaped once a process (text
    and integers only: ``True`` and ``1.0`` would find ``1``'s entry)."""
    if type(value) not in (str, int):
        return escape_html(value)
    got = _WORDS.get(value)
    if got is None:
        got = escape_html(value)
        if len(_WORDS) < 10_000:
            _WORDS[value] = got
    return got


def render_ledger_html(record: Mapping[str, Any]) -> str:
    """The record as one self-contained HTML page. Every value from the data is escaped;
    retracted and withdrawn cited works get the ``retracted``/``withdrawn`` class and a marker."""
    parts: PageParts = {}
    references = [html_reference(item, ReferenceItem.of(parts, item)) for item in record["outbound"]["items"]]
    return visible_controls(html_page(record, header_lines(record), references, parts))


def html_page(record: Mapping[str, Any], header: list[str], references: list[str], parts: PageParts) -> str:
    """The HTML page around its references' blocks (made already: here or by ``page_files``)."""
    e = escape_html
    page = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{e(header[0])}</title><style>{_CSS}</style></head><body>",
            f"<h1>{e(header[0])}</h1>", f'<p class="as-of">{e(header[1])}</p>', "<ul class=\"summary\">"]
    page += [f"<li>{e(line.strip())}</li>" for line in header[2:]]
    page.append("</ul>")
    if record["with_notices"]:
        page.append(f"<h2>Cited works with notices ({len(record['with_notices'])}, all listed)</h2>")
        for item in record["with_notices"]:
            standing, got, index = item["notice"]["standing"], ReferenceItem.of(parts, item), e(item["reference_index"])
            marker = ALARM.get(standing)
            page.append(f'<div class="ref {e(standing)}"><p><a href="#ref-{index}">[{index}]</a> {got.html()[1]}'
                        + (f' <span class="marker">{e(marker)}</span>' if marker else "") + "</p>"
                        f"<p>{got.html()[2]}</p></div>")
    page += [f"<h2>{e(_page_heading('References', record['outbound']))}</h2>", *references]
    inbound = record["inbound"]
    page.append(f"<h2>{e(_page_heading('Cited by', inbound))}</h2>")
    page.append("<ul class=\"inbound\">")
    if not inbound["items"]:
        page.append("<li>none in this ledger</li>")
    for item in inbound["items"]:
        title = f' "{item["citing_title"]}"' if item.get("citing_title") else ""
        page.append(f"<li>{e(item['citing_paper'])}{e(title)} reference [{e(item['reference_index'])}] "
                    f"(<span class=\"state\">{e(item['status'])}</span>)</li>")
    page.append("</ul></body></html>")
    return "\n".join(page) + "\n"


def html_reference(item: Mapping[str, Any], got: ReferenceItem) -> str:
    """One reference's block, its lines in one string (the page joins its parts by newlines).
    html.escape maps each character on its own, so a line of text is escaped whole
    (``e(a + b) == e(a) + e(b)``) where its parts are text, never None."""
    e, word = escape_html, escape_word
    standing, index = item["notice"]["standing"], word(item["reference_index"])
    marker = ALARM.get(standing)
    raw, work, notice, when = got.html()
    block = (f'<div class="ref {word(standing)}" id="ref-{index}">\n'
             f'<p><b>[{index}]</b> <span class="state">{word(item["status"])}</span>'
             + (f" via {word(item['resolver_source'])}" if item.get("resolver_source") else "")
             + (f' <span class="marker">{word(marker)}</span>' if marker else "") + "</p>\n"
             f'<p class="raw">{raw}</p>\n<p>resolved to: {work}</p>\n<p>notice: {notice}</p>\n')
    if got.when is not None:
        if None in (item["source_observed_at"], item["source"], item["resolved_at"]):  # the text page says None
            block += (f'<p class="when">read {e(item["source_observed_at"])} from {e(item["source"])}; judged '
                      f'against catalog {e(snapshot_line(item))}; resolved {e(item["resolved_at"])}</p>\n')
        else:
            block += f'<p class="when">{when}</p>\n'
    return block + "</div>"
