"""The ledger as the site shows it: each paper's record (read from ``<ledger>/records/`` where a
record file is there and holds all its references, else built), and what the site gathers across
them as it goes: a row of the index per paper, the references citing each cited work, the cited
works with notices. Records come one at a time (a site of 10,000 papers holds one record at once
and the small rows of the others)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import orjson

from citeledger.records import receipts
from citeledger.records import record as records
from citeledger.records.files import citation_records, ledger_work_pages
from citeledger.records.ledger_reads import citing_papers
from citeledger.records.render import words
from citeledger.records.render.names import href_name, page_file, record_file_stem
from citeledger.records.render.pages import ALARM, PageLinks, RecordView, notice_line, work_line

PAPERS, WORKS = "papers", "works"  # the site's folders of paper and cited-work pages


def ledger_records(ledger_dir: str | Path, catalog_dir: str | Path,
                   papers: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every ledger paper's record (or those of ``papers``), in order: its record file when it is a
    current-schema record listing all its references, else built now (a paper with no file yet; a
    long record, whose file holds only its first page cap of references), signed with the ledger's key."""
    folder = Path(ledger_dir) / "records"
    to_build = []
    for paper in citing_papers(ledger_dir, catalog_dir, None) if papers is None else papers:
        path = folder / f"{record_file_stem(paper)}.json"
        record = orjson.loads(path.read_bytes()) if path.is_file() else None
        if record is None or record.get("schema") != records.RECORD_SCHEMA or record["outbound"]["truncated"]:
            to_build.append(paper)
        else:
            yield record
    if to_build:
        key = receipts.active_key(ledger_dir)
        for record in citation_records(to_build, ledger_dir, catalog_dir):
            yield receipts.sign_record(record, key)


@dataclass
class CitedWork:
    """A cited work's page: its resolved view (the first seen) and the references citing it:
    (citing paper id, its page's address from the works folder, reference number, state)."""

    resolved: Mapping[str, Any]
    standing: str = "none"
    notice: str = ""
    cites: list[tuple[str, str, Any, Any]] = field(default_factory=list)


@dataclass
class Noticed:
    """A cited work with a notice on the notices page: its line, standing, notice line, its page
    here (when it has one) and the references citing it (paper, address from the site's top, number)."""

    line: str
    standing: str
    notice: str
    href: str | None
    cites: list[tuple[str, str, Any]] = field(default_factory=list)


class SiteData:
    """What the site gathers over the records: the index rows, the cited works, the notices;
    ``links_for`` gives each paper page its links (papers and works by relative address)."""

    def __init__(self, papers: list[str], work_papers: dict[str, str]):
        self.papers = set(papers)
        self.work_papers = work_papers  # work id -> the ledger paper it is
        self.rows: list[dict[str, Any]] = []
        self.works: dict[str, CitedWork] = {}
        self.noticed: dict[str, Noticed] = {}

    @staticmethod
    def of_ledger(ledger_dir: str | Path, catalog_dir: str | Path) -> "SiteData":
        return SiteData(citing_papers(ledger_dir, catalog_dir, None), ledger_work_pages(ledger_dir, catalog_dir))

    def merge(self, other: "SiteData") -> None:
        """Add what another part of the papers (gathered after this one's) holds."""
        self.rows += other.rows
        for key, work in other.works.items():
            got = self.works.setdefault(key, work)
            if got is not work:
                got.cites += work.cites
        for key, noticed in other.noticed.items():
            had = self.noticed.setdefault(key, noticed)
            if had is not noticed:
                had.cites += noticed.cites

    def paper_href(self, paper_id: str, prefix: str = "") -> str | None:
        """The address of a ledger paper's page from a folder (``prefix``: "" beside it, "../papers/")."""
        return prefix + href_name(page_file(record_file_stem(paper_id), 1)) if paper_id in self.papers else None

    def work_href(self, resolved: Mapping[str, Any], prefix: str) -> str | None:
        """The address of a cited work's page: the paper's own page when the work is a ledger paper."""
        work_id = str(resolved.get("work_id"))
        if work_id in self.work_papers:
            return self.paper_href(self.work_papers[work_id], prefix + "../papers/")
        return f"{prefix}../{WORKS}/" + href_name(page_file(record_file_stem(work_id), 1))

    def top_work_href(self, resolved: Mapping[str, Any] | None) -> str | None:
        """A cited work's page from the site's top folder (None for no catalog work)."""
        if not resolved or not resolved.get("work_id"):
            return None
        href = self.work_href(resolved, "")
        return href[len("../"):] if href else None

    def links_for(self, record: Mapping[str, Any]) -> PageLinks:
        stem = record_file_stem(str(record["paper"]["id"]))
        return PageLinks(stem, paper_href=lambda paper: self.paper_href(paper),
                         work_href=lambda resolved: self.work_href(resolved, ""),
                         home=[("All papers", "../index.html"), ("Standing notices", "../notices.html")])

    def add(self, view: RecordView) -> None:
        """A paper's index row, its references to cited works and its notices."""
        record = view.record
        paper_id, work = str(record["paper"]["id"]), record["paper"].get("work") or {}
        here = f"../{PAPERS}/"
        by_status = record["counts"]["by_status"]
        self.rows.append({"href": f"{PAPERS}/" + href_name(page_file(view.links.stem, 1)), "id": paper_id,
                          "title": str(work.get("title") or ""), "refs": record["counts"]["references"],
                          "states": [by_status.get(s, 0) for s in words.STATES],
                          "alarms": sum(len(v) for s, v in view.noticed.items() if s in words.ALARMING),
                          "inbound": record["inbound"]["total"], "as_of": str(record.get("as_of") or "")})
        for item in view.references:
            resolved = item.get("resolved")
            if not resolved or not resolved.get("work_id"):
                continue
            cited = self.works.get(str(resolved["work_id"]))
            if cited is None:
                cited = self.works[str(resolved["work_id"])] = CitedWork(resolved, item["notice"]["standing"],
                                                                         notice_line(item["notice"]))
            page = href_name(page_file(view.links.stem, view.page_of(item) or 1))
            cited.cites.append((paper_id, f"{here}{page}#ref-{item['reference_index']}", item["reference_index"],
                                item["status"]))
        self.add_notices(view)

    def add_notices(self, view: RecordView) -> None:
        paper_id = str(view.record["paper"]["id"])
        for item in view.record["with_notices"]:
            key, doi = words.noticed_work_key(item), words.notice_doi(item)
            got = self.noticed.get(key)
            if got is None:
                resolved = item.get("resolved")
                standing = str(item["notice"]["standing"])
                got = self.noticed[key] = Noticed(
                    work_line(resolved, doi if standing in ALARM else None), standing,
                    notice_line(item["notice"], doi), self.top_work_href(resolved))
            anchor = view.anchor(item, 0)
            got.cites.append((paper_id, f"{PAPERS}/{anchor}" if anchor else f"{PAPERS}/"
                              + href_name(page_file(view.links.stem, 1)), item["reference_index"]))
