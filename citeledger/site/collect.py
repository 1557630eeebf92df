"""The ledger as the site shows it: each paper's record, and what each paper gives the site.

A paper's record is its record file under ``<ledger>/records/``, read through the checker
``citeledger verify`` uses (``receipts.checked_record_file``: its content digest, and its
signature against the ledger's keys; an unsigned record of a ledger without keys is taken as
unsigned); a file that fails is left out, with the reason on the index. A paper with no record
file yet, or a long record (whose file holds only its first page cap of references), has its
record built from the ledger.

What a paper gives the site (its *part*) is plain JSON, kept in the published site's state so the
next build reads again only the records that changed: its index row, the cited works it names (and
each one's notice as the record gives it), its references to them, its notices, its inbound
citing papers and its page files. Records come one at a time (a site of 10,000 papers holds one
record at once and the small parts of the others)."""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from citeledger.records import receipts
from citeledger.records.record_files import citation_records
from citeledger.records.record_json import RECORD_SCHEMA
from citeledger.records.render import page_words
from citeledger.records.render.file_names import href_name, page_file, record_file_stem
from citeledger.records.render.record_pages import ALARM, PageLinks, RecordView, notice_line, work_line
from resolvers.model import linked_count

PAPERS, WORKS = "papers", "works"  # the site's folders of paper and cited-work pages


def record_path(ledger_dir: str | Path, paper_id: str) -> Path:
    return Path(ledger_dir) / "records" / f"{record_file_stem(paper_id)}.json"


def record_source(path: str | Path) -> list[int] | None:
    """What says a record file is the one a build read before: [size, mtime (ns), inode], None for none."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ino] if stat.S_ISREG(status.st_mode) else None


@dataclass(frozen=True)
class LedgerLinks:
    """What every page's links depend on: the ledger's papers (each has a page), the catalog work id
    of each ledger paper the catalog knows (that work's page is the paper's), and the titles read
    from the papers' own sources (paper id -> [title, where it was read])."""

    papers: frozenset[str]
    work_papers: Mapping[str, str]
    titles: Mapping[str, list[str]] = field(default_factory=dict)

    def paper_href(self, paper_id: str, prefix: str = "") -> str | None:
        """The address of a ledger paper's page from a folder (``prefix``: "" beside it, "../papers/")."""
        return prefix + href_name(page_file(record_file_stem(paper_id), 1)) if paper_id in self.papers else None

    def paper_of_work(self, work_id: str) -> str | None:
        """The ledger paper whose page is a work's page, None when the work has a page of its own."""
        paper = self.work_papers.get(work_id)
        return paper if paper is not None and paper in self.papers else None

    def work_href(self, work_id: str, prefix: str) -> str | None:
        """The address of a cited work's page: the paper's own page when the work is a ledger paper."""
        paper = self.paper_of_work(work_id)
        if paper is not None:
            return self.paper_href(paper, prefix + "../papers/")
        return f"{prefix}../{WORKS}/" + href_name(page_file(record_file_stem(work_id), 1))

    def links_for(self, record: Mapping[str, Any]) -> PageLinks:
        paper_id = str(record["paper"]["id"])
        own = self.titles.get(paper_id)
        return PageLinks(record_file_stem(paper_id), paper_href=lambda paper: self.paper_href(paper),
                         work_href=lambda resolved: self.work_href(str(resolved.get("work_id")), ""),
                         home=[("All papers", "../index.html"), ("Standing notices", "../notices.html")],
                         title=own[0] if own else None)

    def page_key(self, code: str, part: Mapping[str, Any]) -> str:
        """A digest of what a paper's pages show besides its record's links: its record, its title
        from its own source, the code that makes the pages."""
        text = orjson.dumps([code, part["digest"], self.titles.get(part["row"]["id"])])
        return hashlib.sha256(text).hexdigest()


def read_record(path: Path, keys: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(the record, None), (None, None) when it is built from the ledger instead (no file, a record
    of another schema, a long record cut at its page cap), or (None, why it is left out)."""
    if record_source(path) is None:
        if os.path.lexists(path):
            return None, "not a regular file"
        return None, None
    record, problems = receipts.checked_record_file(path, keys, unsigned=True)
    if record is None:
        return None, "; ".join(problems)
    outbound = record.get("outbound")
    if record.get("schema") != RECORD_SCHEMA or not isinstance(outbound, dict) or outbound.get("truncated"):
        return None, None
    return record, None


def built_records(papers: list[str], ledger_dir: str | Path, catalog_dir: str | Path) -> Iterator[dict[str, Any]]:
    """The records of ``papers`` built from the ledger now, signed with the ledger's key (or unsigned)."""
    if papers:
        key = receipts.active_key(ledger_dir)
        for record in citation_records(papers, ledger_dir, catalog_dir):
            yield receipts.sign_record(record, key)


def _plain(value: Any) -> Any:
    """A value of a record as the state keeps it: JSON scalars as they are, anything else as its text."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


# the references of every paper to cited works, one row each, in the papers' order and each paper's
# own: what a cited work's page lists (the notice is the record's for that reference)
CITE_COLUMNS = ("paper", "n", "work_id", "page", "ref", "status", "standing", "notice")
CITES_SCHEMA = pa.schema([("paper", pa.string()), ("n", pa.int32()), ("work_id", pa.string()), ("page", pa.int32()),
                          ("ref", pa.string()), ("status", pa.string()), ("standing", pa.string()),
                          ("notice", pa.string())])


def paper_part(view: RecordView, links: LedgerLinks, source: list[int] | None,
               files: list[str]) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """What a paper gives the site (see the module), from its record's view, and its rows of
    ``CITE_COLUMNS``."""
    record = view.record
    paper = str(record["paper"]["id"])
    work = record["paper"].get("work") or {}
    by_status = record["counts"]["by_status"]
    own = links.titles.get(paper)
    title, origin = (str(work["title"]), "catalog") if work.get("title") else (own[0], own[1]) if own else ("", "")
    row = {"href": f"{PAPERS}/" + href_name(page_file(view.links.stem, 1)), "id": paper, "title": title,
           "from": origin, "refs": int(record["counts"]["references"]),
           "states": [int(by_status.get(s) or 0) for s in page_words.STATES], "linked": linked_count(by_status),
           "alarms": sum(len(v) for s, v in view.noticed.items() if s in page_words.ALARMING),
           "inbound": int(record["inbound"]["total"]), "as_of": str(record.get("as_of") or "")}
    cites: list[tuple[Any, ...]] = []
    for item in view.references:
        resolved = item.get("resolved")
        if not isinstance(resolved, Mapping) or not resolved.get("work_id"):
            continue
        cites.append((paper, len(cites), str(resolved["work_id"]), view.page_of(item) or 1,
                      str(_plain(item["reference_index"])), str(item["status"]), str(item["notice"]["standing"]),
                      notice_line(item["notice"])))
    noticed = []
    for item in record["with_notices"]:
        resolved, doi = item.get("resolved"), page_words.notice_doi(item)
        standing = str(item["notice"]["standing"])
        anchor = view.anchor(item, 0)
        work_id = str(resolved["work_id"]) if isinstance(resolved, Mapping) and resolved.get("work_id") else None
        noticed.append([page_words.noticed_work_key(item), work_line(resolved, doi if standing in ALARM else None),
                        standing,
                        notice_line(item["notice"], doi), work_id, _plain(item["reference_index"]),
                        f"{PAPERS}/{anchor}" if anchor else row["href"]])
    inbound = sorted({str(i["citing_paper"]) for i in record["inbound"]["items"]})
    part = {"stem": view.links.stem, "source": source, "digest": str(record.get("content_digest")), "files": files,
            "row": row, "noticed": noticed, "inbound": inbound}
    return part, cites


def cites_table(rows: list[tuple[Any, ...]]) -> pa.Table:
    """``CITE_COLUMNS`` rows as a table."""
    columns = list(zip(*rows)) if rows else [() for _ in CITE_COLUMNS]
    return pa.Table.from_arrays([pa.array(list(c), f.type) for c, f in zip(columns, CITES_SCHEMA)],
                                schema=CITES_SCHEMA)


@dataclass
class CitedWork:
    """A cited work's page: the first citing reference's notice of it (standing, line) and the
    references citing it: (citing paper, its title, the reference's address from the works folder,
    reference number, state)."""

    standing: str
    notice: str
    cites: list[tuple[str, str, str, str, str]] = field(default_factory=list)


@dataclass
class Noticed:
    """A cited work with a notice on the notices page: its line, standing, notice line, its page
    here (when it has one) and the references citing it (paper, address from the site's top, number)."""

    line: str
    standing: str
    notice: str
    href: str | None
    cites: list[tuple[str, str, Any]] = field(default_factory=list)


def cited_works(cites: pa.Table, work_ids: set[str], titles: Mapping[str, str]) -> dict[str, CitedWork]:
    """The pages' content of the cited works ``work_ids`` from the table of every reference, each
    work's references in the order of the papers' ids and their places: the same in every build."""
    wanted = cites.filter(pc.is_in(cites["work_id"], pa.array(sorted(work_ids), pa.string())))
    wanted = wanted.sort_by([("paper", "ascending"), ("n", "ascending")])
    works: dict[str, CitedWork] = {}
    stems: dict[str, str] = {}
    for paper, work_id, page, ref, status, standing, notice in zip(
            *(wanted[c].to_pylist() for c in ("paper", "work_id", "page", "ref", "status", "standing", "notice"))):
        cited = works.get(work_id)
        if cited is None:
            cited = works[work_id] = CitedWork(standing, notice)
        stem = stems.get(paper) or stems.setdefault(paper, record_file_stem(paper))
        cited.cites.append((paper, titles.get(paper, ""), f"../{PAPERS}/{href_name(page_file(stem, page))}#ref-{ref}",
                            ref, status))
    return dict(sorted(works.items()))


def noticed_works(parts: Mapping[str, Mapping[str, Any]], links: LedgerLinks) -> dict[str, Noticed]:
    """The cited works with notices over every paper's part, in the order of the papers' ids."""
    noticed: dict[str, Noticed] = {}
    for paper in sorted(parts):
        for key, line, standing, notice, work_id, index, href in parts[paper]["noticed"]:
            got = noticed.get(key)
            if got is None:
                page = links.work_href(work_id, "") if work_id else None
                got = noticed[key] = Noticed(line, standing, notice, page[len("../"):] if page else None)
            got.cites.append((paper, href, index))
    return noticed
