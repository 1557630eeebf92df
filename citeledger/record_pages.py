"""The citation record as a page: plain text for a terminal and HTML for a browser, with the
control characters of input strings made visible (they must not drive the reader's terminal).
Pure functions of a record built by ``records.build_record``; they add nothing to its content."""
from __future__ import annotations

import html
import json
import re
from typing import Any, Mapping

import orjson

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and newline, DEL, C1


def visible_controls(text: str) -> str:
    r"""``\x1b`` for ESC and the like: input strings must not drive the reader's terminal."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def json_visible(text: str) -> str:
    """JSON text with DEL and C1 escaped too (``json.dumps`` leaves them raw); the values are unchanged."""
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)


# orjson writes a float as ``json.dumps`` does except below 1e-4, where Python writes ``1e-05`` and
# orjson ``0.00001`` or ``1e-9`` for ``1e-09`` (a billion random doubles compared: no other
# difference). Its strings, integers, nesting and indent are ``json.dumps(indent=2,
# ensure_ascii=False)``'s; it refuses what json.dumps would write but UTF-8 cannot carry.
_SMALL_FLOAT = (re.compile(rb"e-\d"), re.compile(rb"0\.0000"))  # literal heads: quick scans


def _maybe_small_float(out: bytes) -> bool:
    """Whether orjson's text may hold a float below 1e-4: ``<digit>e-<digit>`` or ``0.0000`` not
    after a digit (a time's ``05:00:00.000000Z`` is not one; a look-alike in a string only costs
    the json.dumps path)."""
    exponent, positional = _SMALL_FLOAT
    return (any(out[m.start() - 1:m.start()].isdigit() for m in exponent.finditer(out))
            or any(not out[m.start() - 1:m.start()].isdigit() for m in positional.finditer(out)))


def render_json(record: Mapping[str, Any]) -> bytes:
    """The record file's bytes: ``json.dumps(record, indent=2, ensure_ascii=False) + "\\n"`` in UTF-8,
    written by orjson (the pure-Python indent writer cost more than building the record) unless
    the record holds a float below 1e-4 or something orjson refuses; then by ``json.dumps``. Records
    hold no NaN (``records._plain`` makes it null), the one value orjson would write differently
    and unseen (as null); tests/test_bytes_unchanged.py compares both on every record it writes."""
    try:
        out = orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        out = b""
    if out and not _maybe_small_float(out):
        return out
    return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()


_ALARM = {"retracted": "!! RETRACTED", "withdrawn": "!! WITHDRAWN",
          "expression_of_concern": "! EXPRESSION OF CONCERN"}


def _work_line(resolved: Mapping[str, Any] | None) -> str:
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


def _snapshot(item: Mapping[str, Any]) -> str:
    fingerprint = item.get("snapshot_fingerprint")
    if not fingerprint:
        return "unknown"
    return f"{fingerprint[:19]}… built {item.get('snapshot_observed_at') or 'at an unknown time'}"


def _notice_line(notice: Mapping[str, Any]) -> str:
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
    head = _ALARM.get(standing, standing)
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


def _header_lines(record: Mapping[str, Any]) -> list[str]:
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


def render_ledger_text(record: Mapping[str, Any]) -> str:
    """The record as plain text: header, each reference with its state, link and notice,
    then the inbound list. Retracted cited works carry a ``!! RETRACTED`` marker."""
    header = _header_lines(record)
    lines = [header[1], "", header[0], *header[2:]]  # the page opens with the "As of ..." sentence
    if record["with_notices"]:
        lines.append("")
        lines.append(f"Cited works with notices ({len(record['with_notices'])}, all listed):")
        for item in record["with_notices"]:
            lines.append(f"[{item['reference_index']}] {_work_line(item.get('resolved'))}")
            lines.append(f"    {_notice_line(item['notice'])}")
    out = record["outbound"]
    lines.append("")
    lines.append(_page_heading("References", out) + ":")
    for item in out["items"]:
        score = f" score {item['score']:.2f}" if isinstance(item.get("score"), (int, float)) else ""
        via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
        lines.append(f"[{item['reference_index']}] {item['status']}{via}{score}")
        lines.append(f"    cited as: {_short(item['cited_as']['raw'])}")
        lines.append(f"    resolved to: {_work_line(item.get('resolved'))}")
        lines.append(f"    notice: {_notice_line(item['notice'])}")
        if "source_observed_at" in item:
            lines.append(f"    read {item['source_observed_at']} from {item['source']}; judged against catalog "
                         f"{_snapshot(item)}; resolved {item['resolved_at']}")
    inbound = record["inbound"]
    lines.append("")
    lines.append(_page_heading("Cited by", inbound) + ":")
    if not inbound["items"]:
        lines.append("  (none in this ledger)")
    for item in inbound["items"]:
        title = f' "{item["citing_title"]}"' if item.get("citing_title") else ""
        via = f" via {item['resolver_source']}" if item.get("resolver_source") else ""
        lines.append(f"  - {item['citing_paper']}{title} reference [{item['reference_index']}] ({item['status']}{via})")
    return visible_controls("\n".join(lines) + "\n")


_CSS = """
body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;line-height:1.4}
.ref{border-left:4px solid #ccc;padding:.3em .8em;margin:.6em 0}
.ref.retracted,.ref.withdrawn{border-color:#c00;background:#fee}
.ref.expression_of_concern{border-color:#e80;background:#fff4e0}
.marker{color:#c00;font-weight:bold}
.state{font-family:monospace}
.raw{color:#444}
"""


def render_ledger_html(record: Mapping[str, Any]) -> str:
    """The record as one self-contained HTML page. Every value from the data is escaped;
    retracted and withdrawn cited works get the ``retracted``/``withdrawn`` class and a marker."""
    e = lambda v: html.escape("" if v is None else str(v), quote=True)  # noqa: E731
    header = _header_lines(record)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{e(header[0])}</title><style>{_CSS}</style></head><body>",
             f"<h1>{e(header[0])}</h1>", f'<p class="as-of">{e(header[1])}</p>', "<ul class=\"summary\">"]
    parts += [f"<li>{e(line.strip())}</li>" for line in header[2:]]
    parts.append("</ul>")
    if record["with_notices"]:
        parts.append(f"<h2>Cited works with notices ({len(record['with_notices'])}, all listed)</h2>")
        for item in record["with_notices"]:
            standing = item["notice"]["standing"]
            marker = _ALARM.get(standing)
            parts.append(f'<div class="ref {e(standing)}"><p><a href="#ref-{e(item["reference_index"])}">'
                         f'[{e(item["reference_index"])}]</a> {e(_work_line(item.get("resolved")))}'
                         + (f' <span class="marker">{e(marker)}</span>' if marker else "") + "</p>"
                         f"<p>{e(_notice_line(item['notice']))}</p></div>")
    out = record["outbound"]
    parts.append(f"<h2>{e(_page_heading('References', out))}</h2>")
    for item in out["items"]:
        standing = item["notice"]["standing"]
        marker = _ALARM.get(standing)
        parts.append(f'<div class="ref {e(standing)}" id="ref-{e(item["reference_index"])}">')
        parts.append(f'<p><b>[{e(item["reference_index"])}]</b> <span class="state">{e(item["status"])}</span>'
                     + (f" via {e(item['resolver_source'])}" if item.get("resolver_source") else "")
                     + (f' <span class="marker">{e(marker)}</span>' if marker else "") + "</p>")
        parts.append(f'<p class="raw">{e(_short(item["cited_as"]["raw"], 1000))}</p>')
        parts.append(f"<p>resolved to: {e(_work_line(item.get('resolved')))}</p>")
        parts.append(f"<p>notice: {e(_notice_line(item['notice']))}</p>")
        if "source_observed_at" in item:
            parts.append(f'<p class="when">read {e(item["source_observed_at"])} from {e(item["source"])}; judged '
                         f'against catalog {e(_snapshot(item))}; resolved {e(item["resolved_at"])}</p>')
        parts.append("</div>")
    inbound = record["inbound"]
    parts.append(f"<h2>{e(_page_heading('Cited by', inbound))}</h2>")
    parts.append("<ul class=\"inbound\">")
    if not inbound["items"]:
        parts.append("<li>none in this ledger</li>")
    for item in inbound["items"]:
        title = f' "{item["citing_title"]}"' if item.get("citing_title") else ""
        parts.append(f"<li>{e(item['citing_paper'])}{e(title)} reference [{e(item['reference_index'])}] "
                     f"(<span class=\"state\">{e(item['status'])}</span>)</li>")
    parts.append("</ul></body></html>")
    return visible_controls("\n".join(parts) + "\n")
