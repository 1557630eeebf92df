"""The citation record of one paper: what it cites, how sure each link is, whether each cited work
still stands, and who cites it. As JSON (``pith.paper-citation-record.v1`` shape) and as a page.

Pure functions over plain rows (dicts with the ledger's observation columns), so the ledger code
can feed them straight from DuckDB and tests can feed them by hand. Nothing here reads the wall
clock: every time in a record comes from its inputs, so the same inputs give the same digest.
"""
from __future__ import annotations

import functools
import hashlib
import html
import json
import math
import re
from datetime import date, datetime, timezone
from importlib import resources
from typing import Any, Iterable, Mapping, Sequence

from resolvers.canonical import canonical_json
from resolvers.model import STATE_ORDER, Status
from resolvers.notices import (
    StandingNotice,
    UnavailableReason,
    notice_from_dict,
    notice_to_dict,
    unavailable_notice,
)

__all__ = [
    "RECORD_SCHEMA",
    "STATES",
    "DEFAULT_PAGE_CAP",
    "canonical_json",
    "content_digest",
    "select_rows",
    "build_record",
    "load_schema",
    "validate_record",
    "render_ledger_text",
    "render_ledger_html",
]

RECORD_SCHEMA = "pith.paper-citation-record.v1"
STATES: tuple[str, ...] = tuple(s.value for s in STATE_ORDER)
LINK_STATES = frozenset(s.value for s in Status if s.names_work)
STANDINGS = ("retracted", "withdrawn", "expression_of_concern", "reinstated", "corrected", "none", "unknown")
DEFAULT_PAGE_CAP = 1000
DIGEST_FIELD = "content_digest"

_EMPTY_MEANS = {
    "outbound": "no reference of this paper is in the ledger's current observations",
    "inbound": "no paper in the ledger has a reference resolved to this paper's work; papers "
               "outside the ledger are not examined",
    "notice_events": "the sources checked list no notice for the work",
}


# ---------------------------------------------------------------------------------------------
# Canonical JSON and digest


def _plain(value: Any) -> Any:
    """DuckDB/pyarrow/numpy values -> JSON values (times as UTC ISO strings, NaN as null)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds") + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _plain(value.tolist())
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return value.value
    return str(value)


def content_digest(record: Mapping[str, Any]) -> str:
    """``sha256:`` over the canonical JSON of the record without its digest field."""
    body = {k: v for k, v in record.items() if k != DIGEST_FIELD}
    return "sha256:" + hashlib.sha256(canonical_json(body, strict=True).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# Choosing the rows of one paper


def id_forms(value: str | None) -> set[str]:
    """The spellings under which a paper id may appear as ``citing_paper`` (a light touch; the
    identifier module owns real normalisation)."""
    if not value:
        return set()
    v = value.strip()
    low = v.lower()
    forms = {v, low}
    for prefix in ("arxiv:", "doi:", "https://doi.org/", "http://doi.org/", "https://arxiv.org/abs/"):
        if low.startswith(prefix):
            forms.add(low[len(prefix):])
    for f in list(forms):
        head, sep, tail = f.rpartition("v")
        if sep and tail.isdigit() and head and head[-1].isdigit():
            forms.add(head)  # 1501.00001v2 -> 1501.00001
    return forms


def paper_forms(paper_id: str, paper_work: Mapping[str, Any] | None) -> set[str]:
    forms = id_forms(paper_id)
    if paper_work:
        for key in ("doi", "arxiv_id"):
            forms |= id_forms(paper_work.get(key))
        if paper_work.get("arxiv_id"):
            forms.add("10.48550/arxiv." + str(paper_work["arxiv_id"]).lower())
    return forms


def select_rows(paper_id: str, paper_work: Mapping[str, Any] | None,
                rows: Iterable[Mapping[str, Any]]) -> tuple[list[dict], list[dict]]:
    """From current observation rows, the paper's own references (outbound) and the references
    of other papers resolved to its work (inbound)."""
    forms = paper_forms(paper_id, paper_work)
    work_id = paper_work.get("work_id") if paper_work else None
    outbound, inbound = [], []
    for row in rows:
        row = dict(row)
        mine = bool(id_forms(row.get("citing_paper")) & forms)
        if mine:
            outbound.append(row)
        elif work_id and row.get("work_id") == work_id:
            inbound.append(row)
    return outbound, inbound


def _latest_per_reference(rows: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Keep the latest observation of each (citing paper, reference index): callers may pass
    ``observations`` rather than ``current``."""
    best: dict[tuple[str, int], dict] = {}
    for row in rows:
        r = {k: _plain(v) for k, v in dict(row).items()}
        key = (str(r.get("citing_paper")), int(r.get("reference_index") or 0))
        old = best.get(key)
        if old is None or (str(r.get("observed_at") or ""), str(r.get("observation_id") or "")) > (
            str(old.get("observed_at") or ""), str(old.get("observation_id") or "")
        ):
            best[key] = r
    return list(best.values())


# ---------------------------------------------------------------------------------------------
# Building the record


def _notice_dict(notice: StandingNotice | Mapping[str, Any] | None, *, linked: bool) -> dict[str, Any]:
    if not linked:
        notice = unavailable_notice(UnavailableReason.NO_CANONICAL_WORK)
    elif notice is None:
        notice = unavailable_notice(UnavailableReason.NOT_CHECKED)
    elif not isinstance(notice, StandingNotice):
        notice = notice_from_dict(notice)
    return _plain(notice_to_dict(notice))


def _evidence(value: Any) -> Any:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            return _plain(json.loads(value))
        except ValueError:
            return {"unparsed": value}
    return _plain(value)


def _work_view(work: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not work:
        return None
    keys = ("work_id", "doi", "arxiv_id", "title", "authors", "year", "venue", "volume", "first_page",
            "pmid", "type")
    out = {k: _plain(work.get(k)) for k in keys if work.get(k) is not None}
    if "authors" in out and not isinstance(out["authors"], list):
        out["authors"] = [out["authors"]]
    return out


def _outbound_entry(row: Mapping[str, Any], notices: Mapping[str, Any],
                    works: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    status = str(row.get("status"))
    work_id = row.get("work_id")
    linked = bool(work_id) and status in LINK_STATES
    resolved = None
    if work_id:
        resolved = {"work_id": work_id, "doi": row.get("doi"), "arxiv_id": row.get("arxiv_id")}
        known = _work_view(works.get(work_id))
        if known:
            for k in ("title", "authors", "year", "venue"):
                if k in known:
                    resolved[k] = known[k]
    return {
        "reference_index": int(row.get("reference_index") or 0),
        "observation_id": row.get("observation_id"),
        "observation_digest": row.get("observation_digest"),
        "run_id": row.get("run_id"),
        "source": row.get("source") or "unknown",
        "cited_as": {
            "raw": row.get("raw") or "",
            "dois": list(row.get("extracted_dois") or []),
            "arxiv_ids": list(row.get("extracted_arxiv_ids") or []),
        },
        "status": status,
        "resolved": resolved,
        "resolver_source": row.get("resolver_source"),
        "resolved_at": row.get("observed_at"),
        "score": row.get("score"),
        "evidence": _evidence(row.get("evidence")),
        "notice": _notice_dict(notices.get(work_id) if work_id else None, linked=linked),
    }


def _page(items: list[dict], cap: int | None) -> dict[str, Any]:
    listed = items if cap is None else items[:cap]
    return {"total": len(items), "listed": len(listed), "cap": cap, "truncated": len(listed) < len(items),
            "items": listed}


def build_record(paper_id: str, paper_work: Mapping[str, Any] | None, outbound: Sequence[Mapping[str, Any]],
                 inbound: Sequence[Mapping[str, Any]], notices: Mapping[str, StandingNotice | Mapping[str, Any]],
                 generated_from: Mapping[str, Any], page_cap: int | None = DEFAULT_PAGE_CAP,
                 works: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The citation record of ``paper_id`` from its outbound and inbound observation rows.

    ``notices`` maps a cited work_id to its ``StandingNotice`` (or a ``notices`` view row);
    ``works`` (optional) maps work_id to catalog rows so resolved entries carry titles.
    ``generated_from`` names the source tables (``tables``: name -> location) and their time
    (``as_of``); when ``as_of`` is missing the latest ``observed_at`` of the rows stands in.
    ``generated_from`` is part of the digested content: put no wall-clock time in it.
    Counts and coverage are taken over every row; only the listed items are capped.
    """
    works = works or {}
    out_rows = sorted(_latest_per_reference(outbound), key=lambda r: (int(r.get("reference_index") or 0),
                                                                      str(r.get("citing_paper"))))
    in_rows = sorted(_latest_per_reference(inbound), key=lambda r: (str(r.get("citing_paper")),
                                                                    int(r.get("reference_index") or 0)))
    out_items = [_outbound_entry(r, notices, works) for r in out_rows]
    in_items = [{
        "citing_paper": str(r.get("citing_paper")),
        "reference_index": int(r.get("reference_index") or 0),
        "observation_id": r.get("observation_id"),
        "status": str(r.get("status")),
        "resolved_at": r.get("observed_at"),
    } for r in in_rows]

    by_status = {s: 0 for s in STATES}
    for item in out_items:
        if item["status"] not in by_status:
            raise ValueError(f"reference {item['reference_index']}: unknown status {item['status']!r}")
        by_status[item["status"]] += 1
    linked = [i for i in out_items if i["status"] in LINK_STATES and i["resolved"]]
    by_standing = {s: 0 for s in STANDINGS}
    for item in linked:
        by_standing[item["notice"]["standing"]] += 1

    gen = _plain(dict(generated_from))
    tables = gen.get("tables") or {}
    times = [t for t in (r.get("observed_at") for r in out_rows + in_rows) if t]
    as_of = gen.get("as_of") or (max(times) if times else None)
    notice_times = sorted({i["notice"]["checked_at"] for i in linked if i["notice"]["checked_at"]})
    outbound_page = _page(out_items, page_cap)
    inbound_page = _page(in_items, page_cap)

    def table_names(*wanted: str) -> list[str]:
        return [t for t in wanted if t in tables] or list(wanted[:1])

    record: dict[str, Any] = {
        "schema": RECORD_SCHEMA,
        "paper": {
            "id": paper_id,
            "in_catalog": bool(paper_work),
            "work": _work_view(paper_work),
            "citing_paper_ids": sorted({str(r.get("citing_paper")) for r in out_rows}),
        },
        "counts": {
            "references": len(out_items),
            "by_status": by_status,
            "linked": len(linked),
            "cited_works_by_standing": by_standing,
            "inbound": len(in_items),
        },
        "outbound": outbound_page,
        "with_notices": [i for i in out_items if i["notice"]["standing"] not in ("none", "unknown")],
        "inbound": inbound_page,
        "coverage": {
            "resolution": {
                "observed": sum(1 for i in out_items if i["status"] != Status.UNAVAILABLE.value),
                "denominator": len(out_items),
                "means": "references with a decided state (not 'unavailable') out of the paper's "
                         "references in the ledger",
                "sources": table_names("current", "observations"),
                "as_of": as_of,
            },
            "notices": {
                "observed": sum(1 for i in linked if i["notice"]["state"] == "measured"),
                "denominator": len(linked),
                "means": "linked references whose cited work's notices were measured out of all "
                         "linked references",
                "sources": table_names("notices"),
                "as_of": notice_times[-1] if notice_times else None,
            },
            "inbound": {
                "observed": inbound_page["listed"],
                "denominator": inbound_page["total"],
                "means": "citing references listed out of those in the ledger resolved to this work",
                "sources": table_names("current", "observations"),
                "as_of": as_of,
            },
        },
        "page_caps": {"outbound": page_cap, "inbound": page_cap},
        "empty_means": dict(_EMPTY_MEANS),
        "generated_from": gen,
    }
    record[DIGEST_FIELD] = content_digest(record)
    return record


# ---------------------------------------------------------------------------------------------
# Schema


def load_schema() -> dict[str, Any]:
    """The record's JSON schema (Draft 2020-12), shipped with the package."""
    text = resources.files("citeledger").joinpath("schemas", "paper-citation-record.v1.json").read_text("utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    """The schema's validator, built once per process (it was most of a record's cost). The shipped
    schema itself is checked against the metaschema by the tests (0.3 s a process saved)."""
    import jsonschema

    return jsonschema.Draft202012Validator(load_schema())


def validate_record(record: Mapping[str, Any], *, check_digest: bool = True) -> None:
    """Raise ``jsonschema.ValidationError`` if the record does not fit the schema, and
    ``ValueError`` if its content digest does not match its content."""
    _validator().validate(record)
    if check_digest and record.get(DIGEST_FIELD) != content_digest(record):
        raise ValueError(f"content digest mismatch: record says {record.get(DIGEST_FIELD)}, "
                         f"content gives {content_digest(record)}")


# ---------------------------------------------------------------------------------------------
# The ledger page

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and newline, DEL, C1


def visible_controls(text: str) -> str:
    r"""``\x1b`` for ESC and the like: input strings must not drive the reader's terminal."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def json_visible(text: str) -> str:
    """JSON text with DEL and C1 escaped too (``json.dumps`` leaves them raw); the values are unchanged."""
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)


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


def _notice_line(notice: Mapping[str, Any]) -> str:
    if notice["state"] != "measured":
        return f"notice not measured ({notice.get('reason')})"
    standing = notice["standing"]
    checked = ", ".join(notice.get("sources_checked") or []) or "no source"
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


def _header_lines(record: Mapping[str, Any]) -> list[str]:
    paper = record["paper"]
    work = paper.get("work") or {}
    counts = record["counts"]
    title = f' "{work["title"]}"' if work.get("title") else ""
    lines = [f"Citation ledger of {paper['id']}{title}"]
    ids = [f"{k} {work[k]}" for k in ("work_id", "doi", "arxiv_id") if work.get(k)]
    lines.append("  " + (" | ".join(ids) if ids else "not in the catalog"))
    lines.append(f"  references: {counts['references']} | linked: {counts['linked']} | "
                 f"cited by (in this ledger): {counts['inbound']}")
    lines.append("  states: " + ", ".join(f"{s} {n}" for s, n in counts["by_status"].items()))
    flagged = {s: n for s, n in counts["cited_works_by_standing"].items() if n and s != "none"}
    lines.append("  cited works with notices: " + (", ".join(f"{s} {n}" for s, n in flagged.items()) or "none"))
    cov = record["coverage"]
    lines.append("  coverage: " + ", ".join(f"{k} {v['observed']}/{v['denominator']}" for k, v in cov.items()))
    lines.append(f"  digest: {record['content_digest']}")
    return lines


def _page_heading(title: str, page: Mapping[str, Any]) -> str:
    """"References (1000 of 12485 listed, cut at 1000)": what a capped list shows and hides."""
    cut = f", cut at {page['cap']}" if page["truncated"] else ""
    return f"{title} ({page['listed']} of {page['total']} listed{cut})"


def render_ledger_text(record: Mapping[str, Any]) -> str:
    """The record as plain text: header, each reference with its state, link and notice,
    then the inbound list. Retracted cited works carry a ``!! RETRACTED`` marker."""
    lines = _header_lines(record)
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
    inbound = record["inbound"]
    lines.append("")
    lines.append(_page_heading("Cited by", inbound) + ":")
    if not inbound["items"]:
        lines.append("  (none in this ledger)")
    for item in inbound["items"]:
        lines.append(f"  - {item['citing_paper']} reference [{item['reference_index']}] ({item['status']})")
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
             f"<h1>{e(header[0])}</h1>", "<ul class=\"summary\">"]
    parts += [f"<li>{e(line.strip())}</li>" for line in header[1:]]
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
        parts.append("</div>")
    inbound = record["inbound"]
    parts.append(f"<h2>{e(_page_heading('Cited by', inbound))}</h2>")
    parts.append("<ul class=\"inbound\">")
    if not inbound["items"]:
        parts.append("<li>none in this ledger</li>")
    for item in inbound["items"]:
        parts.append(f"<li>{e(item['citing_paper'])} reference [{e(item['reference_index'])}] "
                     f"(<span class=\"state\">{e(item['status'])}</span>)</li>")
    parts.append("</ul></body></html>")
    return visible_controls("\n".join(parts) + "\n")
