"""A record seen as its pages see it (``RecordView``): all its references split into pages, the
page of each, the provenance they share, the cited works with notices; where its links lead
(``PageLinks``), and the lines both the text and the HTML page say of a work, a notice, a time."""
from __future__ import annotations

import html
from typing import Any, Callable, Mapping

from citeledger.records.render import page_words
from citeledger.records.render.file_names import href_name, page_file, record_file_stem

ALARM = {"retracted": "!! RETRACTED", "withdrawn": "!! WITHDRAWN",
         "expression_of_concern": "! EXPRESSION OF CONCERN"}


def escape_html(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def work_line(resolved: Mapping[str, Any] | None, doi: str | None = None) -> str:
    """A cited work in one line: its id, the ids the id does not show, title and year; with no
    catalog work, the DOI of the string a notice is about (``doi``), if any."""
    if not resolved:
        return f"no catalog work; the string cites doi:{doi}" if doi else "no catalog work"
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
    return f"{str(fingerprint)[:19]}… built {item.get('snapshot_observed_at') or 'at an unknown time'}"


def events_line(notice: Mapping[str, Any]) -> str:
    """A notice's events: "retraction 2024-02-14 notice doi:10.x [retraction_watch_csv]; ..."."""
    return "; ".join(
        f"{e['type']} {e.get('date') or 'undated'}"
        + (f" notice doi:{e['notice_doi']}" if e.get("notice_doi") else "")
        + f" [{', '.join(e.get('sources') or [])}]"
        for e in notice["events"])


def notice_line(notice: Mapping[str, Any], doi: str | None = None) -> str:
    """A notice in words, the DOI it is about named when it is one to act on."""
    if notice["state"] != "measured":
        reason = notice.get("reason")
        return f"not checked for notices: {page_words.NOTICE_REASONS.get(str(reason), str(reason))}"
    checked = ", ".join(notice.get("sources_checked") or []) or "no source"
    if notice.get("receipts"):
        checked = ", ".join(f"{r['source']} at {r['checked_at']}" for r in notice["receipts"])
    if not notice["events"]:
        return f"no notice found (checked: {checked})"
    standing = notice["standing"]
    named = f"doi:{doi} is {page_words.STANDINGS.get(standing, standing)}: " if doi and standing in ALARM else ""
    return f"{ALARM.get(standing, standing)}: {named}{events_line(notice)}"


def as_of_sentence(record: Mapping[str, Any]) -> str:
    """One sentence: as of when, what the record measured and what it did not."""
    cov = record["coverage"]
    if "external_citations" not in cov:  # a v1 record: no lanes with states
        return f"As of {record['coverage']['resolution'].get('as_of') or 'an unknown time'}, this is a v1 record."
    res, notes, inbound = cov["resolution"], cov["notices"], cov["inbound"]
    missing = [name for name, lane in (("the paper's own metadata", cov["paper_metadata"]),
                                       ("the notices of the cited works (no notice source answered)", notes),
                                       ("resolution", res)) if lane["state"] == "not_measured"]
    measured = [f"the resolution of {res['observed']} of {res['denominator']} references"]
    if notes["state"] != "not_measured":
        measured.append(f"the notices of the cited works of {notes['observed']} of {notes['denominator']} "
                        "references naming a catalog work")
    measured.append(f"the citations from the {inbound['denominator']} references in this ledger that cite the paper")
    return (f"As of {record.get('as_of') or 'an unknown time'}, this record measured {', '.join(measured[:-1])} "
            f"and {measured[-1]}; it did not measure citations from outside this ledger"
            + (f", nor {', '.join(missing)}" if missing else "") + ".")


def provenance_of(item: Mapping[str, Any]) -> str | None:
    """Where a reference's observation came from and what it was judged against (v2 records)."""
    if "source_observed_at" not in item:
        return None
    run = f" in run {item['run_id']}" if item.get("run_id") else ""
    return (f"read {item['source_observed_at']} from {item.get('source')}; judged against catalog "
            f"{snapshot_line(item)}; resolved {item.get('resolved_at')}{run}")


def common_provenance(references: list[Mapping[str, Any]]) -> str | None:
    """The provenance most references share (said once per page), None when none has one."""
    counts: dict[str, int] = {}
    for item in references:
        line = provenance_of(item)
        if line is not None:
            counts[line] = counts.get(line, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else None


class PageLinks:
    """Where a record's pages link: ``stem`` (the record's file stem, naming its page files),
    ``paper_href`` (a ledger paper id -> the relative address of its page, or None) and
    ``work_href`` (a cited work's resolved view -> the address of its page here, or None),
    ``home`` ((label, address) pairs shown at the top of every page) and ``title``: the paper's
    title as read from its own source, shown when the catalog has none."""

    def __init__(self, stem: str, paper_href: Callable[[str], str | None] | None = None,
                 work_href: Callable[[Mapping[str, Any]], str | None] | None = None,
                 home: list[tuple[str, str]] | None = None, title: str | None = None):
        self.stem = stem
        self.paper_href = paper_href or sibling_page
        self.work_href = work_href or (lambda resolved: None)
        self.home = home or []
        self.title = title


def sibling_page(paper_id: str) -> str:
    """The page of a ledger paper beside this one (the record files of a ledger share a folder)."""
    return href_name(page_file(record_file_stem(str(paper_id)), 1))


class RecordView:
    """What every page of a record shows, worked out once: all its references (those past the cap
    the file does not hold too, when the builder kept them: ``BuiltRecord.unlisted``), split into
    pages of the record's page cap; the page of each; the provenance they share; the cited works
    with notices by standing."""

    def __init__(self, record: Mapping[str, Any], links: PageLinks | None = None):
        self.record = record
        self.links = links or PageLinks(record_file_stem(str(record["paper"]["id"])))
        self.references = list(record["outbound"]["items"]) + list(getattr(record, "unlisted", None) or [])
        cap = record["outbound"].get("cap")
        size = cap if type(cap) is int and cap > 0 else max(1, len(self.references))
        self.pages = [self.references[i:i + size] for i in range(0, len(self.references), size)] or [[]]
        self.page_by_id: dict[int, int] = {}
        self.page_by_index: dict[Any, int] = {}
        for number, page in enumerate(self.pages, start=1):
            for item in page:
                self.page_by_id[id(item)] = number
                try:
                    self.page_by_index.setdefault(item["reference_index"], number)
                except TypeError:  # an index that is no key: found by the item only
                    pass
        self.common = common_provenance(self.references)
        self.noticed = page_words.works_by_standing(list(record["with_notices"]))

    def page_of(self, item: Mapping[str, Any]) -> int | None:
        """The page listing a reference (a listed notice's reference too), None when none does."""
        got = self.page_by_id.get(id(item))
        if got is None:
            try:
                got = self.page_by_index.get(item["reference_index"])
            except TypeError:
                return None
        return got

    def anchor(self, item: Mapping[str, Any], here: int) -> str | None:
        """The link to a reference from page ``here``: ``#ref-N`` on its own page, else its page's file."""
        number = self.page_of(item)
        if number is None:
            return None
        target = f"#ref-{item['reference_index']}"
        return target if number == here else href_name(page_file(self.links.stem, number)) + target


# ---- facts both pages say ------------------------------------------------------------------


def cut_text(text: Any, limit: int) -> str:
    words_ = " ".join(str(text or "").split())
    return words_ if len(words_) <= limit else words_[: limit - 1] + "…"


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


def json_name(view: "RecordView") -> str:
    """The record's JSON file, beside its pages (``<ledger>/records/``, the site's ``papers/``)."""
    return f"{view.links.stem}.json"


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
    order = [s for s in page_words.STATES if s in by_status] + [s for s in by_status if s not in page_words.STATES]
    return [(s, *page_words.state_words(s), by_status[s]) for s in order]


def coverage_rows(record: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(what, how far measured, figure, from where and when, what it means) of each coverage lane."""
    lanes = record["coverage"]
    order = [n for n in page_words.LANES if n in lanes] + sorted(n for n in lanes if n not in page_words.LANES)
    return [(*page_words.lane_figures(name, lanes[name]), page_words.lane_source(name, lanes[name]),
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


def no_notice_found(notice: Any) -> bool:
    """A notice check that ran and found nothing (the usual case: said once on a page, not per reference)."""
    return isinstance(notice, Mapping) and notice.get("state") == "measured" and not notice.get("events")
