"""arXiv: batched ``id_list`` lookups on the API, and the OAI-PMH harvest for the catalog.

The API answers in two shapes. Before late 2025 (legacy) a missing id came back as a stub
``<entry>`` with an empty ``primary_category`` and ``totalResults`` counted the stubs; a malformed
id came back as an ``Error`` entry. Since then missing ids are simply omitted and entries may come
in any order. So "not found" is decided by comparing the ids asked for with the ids returned,
never by a count or a position.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from resolvers.errors import ArxivQueryError, RemoteUnavailable
from resolvers.identifiers.extract import canonical_arxiv_id
from resolvers.model import Work
from resolvers.remote.checkpoint import Checkpoint, read_state, write_state
from resolvers.remote.http import PoliteClient

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV_RAW = "{http://arxiv.org/OAI/arXivRaw/}"
ARXIV_OAI = "{http://arxiv.org/OAI/arXiv/}"

SERVICE = "arxiv"

_VERSION = re.compile(r"\dv(\d+)(?:\.pdf)?$", re.I)
_ERROR_ID = re.compile(r"api/errors#incorrect_id_format_for_(.+)$")
_WITHDRAWN = re.compile(r"\bwithdrawn\b", re.I)


def split_arxiv_id(token: str) -> tuple[str, int | None] | None:
    """``(canonical id without version, version or None)``, or None when not well formed:
    ``resolvers.identifiers.extract``' one rule (``math.GT/0309136`` -> ``math/0309136``; months, the
    four/five-digit eras, the old-style archives and dates). Whether it exists is the API's
    business."""
    ident = canonical_arxiv_id(token)
    if ident is None:
        return None
    version = _VERSION.search(token.strip())
    return ident, int(version.group(1)) if version else None


def _text(el: ET.Element | None) -> str | None:
    if el is None or el.text is None:
        return None
    value = " ".join(el.text.split())
    return value or None


# -- the API's Atom feed -----------------------------------------------------------------------


@dataclass(frozen=True)
class ArxivEntry:
    """One version of one paper, as the API's Atom feed describes it."""

    arxiv_id: str
    version: int | None
    title: str | None
    authors: tuple[str, ...]
    published: str | None
    updated: str | None
    doi: str | None
    journal_ref: str | None
    comment: str | None
    primary_category: str | None
    categories: tuple[str, ...]

    @property
    def withdrawn(self) -> bool:
        """arXiv marks a withdrawal only in free text, the comment of the withdrawing version."""
        return bool(self.comment and _WITHDRAWN.search(self.comment))


@dataclass
class ArxivFeed:
    entries: list[ArxivEntry] = field(default_factory=list)
    # token the API named in an Error entry -> its message ("incorrect id format for ...")
    errors: dict[str, str] = field(default_factory=dict)
    stubs: int = 0  # legacy empty entries for missing ids
    total_results: int | None = None  # reported, never trusted for "not found"


def parse_feed(payload: bytes | str) -> ArxivFeed:
    """Parse an API response, legacy or new shape. Raises ``ValueError`` if it is not Atom."""
    try:
        root = ET.fromstring(payload)
    except ET.ParseError as exc:
        raise ValueError(f"not XML: {exc}") from None
    if root.tag != f"{ATOM}feed":
        raise ValueError(f"not an Atom feed: root is {root.tag}")
    feed = ArxivFeed()
    total = root.find(f"{OPENSEARCH}totalResults")
    if total is not None and total.text and total.text.strip().isdigit():
        feed.total_results = int(total.text.strip())
    for entry in root.findall(f"{ATOM}entry"):
        id_text = _text(entry.find(f"{ATOM}id"))
        if not id_text:
            feed.stubs += 1
            continue
        err = _ERROR_ID.search(id_text)
        if err or _text(entry.find(f"{ATOM}title")) == "Error" and "/api/errors" in id_text:
            token = err.group(1) if err else id_text
            feed.errors[token] = _text(entry.find(f"{ATOM}summary")) or "error"
            continue
        tail = id_text.split("/abs/", 1)[-1]
        split = split_arxiv_id(tail)
        if split is None:
            continue
        arxiv_id, version = split
        primary = entry.find(f"{ARXIV}primary_category")
        feed.entries.append(
            ArxivEntry(
                arxiv_id=arxiv_id,
                version=version,
                title=_text(entry.find(f"{ATOM}title")),
                authors=tuple(
                    name
                    for a in entry.findall(f"{ATOM}author")
                    if (name := _text(a.find(f"{ATOM}name")))
                ),
                published=_text(entry.find(f"{ATOM}published")),
                updated=_text(entry.find(f"{ATOM}updated")),
                doi=_text(entry.find(f"{ARXIV}doi")),
                journal_ref=_text(entry.find(f"{ARXIV}journal_ref")),
                comment=_text(entry.find(f"{ARXIV}comment")),
                primary_category=(primary.get("term") or None) if primary is not None else None,
                categories=tuple(
                    t for c in entry.findall(f"{ATOM}category") if (t := c.get("term"))
                ),
            )
        )
    return feed


def entries_to_work(entries: Sequence[ArxivEntry]) -> Work:
    """One work from the versions returned for one id: the latest version speaks for it.

    ``published`` is the first version's date in every version's entry, so the year is stable.
    The record's own DOI (10.48550/arXiv.X) and the journal DOI go to ``alt_dois``.
    """
    latest = max(entries, key=lambda e: e.version or 0)
    year = int(latest.published[:4]) if latest.published and latest.published[:4].isdigit() else None
    alt = [f"10.48550/arxiv.{latest.arxiv_id}"]
    dois = [e.doi.lower() for e in entries if e.doi]
    if dois:
        alt.insert(0, dois[0])
    return Work(
        work_id=f"arxiv:{latest.arxiv_id}",
        arxiv_id=latest.arxiv_id,
        title=latest.title,
        authors=latest.authors,
        year=year,
        type="preprint",
        alt_dois=tuple(dict.fromkeys(alt)),
        withdrawn=latest.withdrawn,
    )


@dataclass(frozen=True)
class ArxivOutcome:
    """What became of one requested id: ``found`` (with a work), ``missing`` or ``malformed``."""

    status: str
    work: Work | None = None
    why: str | None = None


class ArxivClient:
    """The arXiv API (``id_list`` lookups) and OAI-PMH (harvest), through one polite client."""

    def __init__(self, http: PoliteClient, api_url: str, oai_url: str, batch_size: int = 50):
        self.http = http
        self.api_url = api_url
        self.oai_url = oai_url
        self.batch_size = max(1, batch_size)

    # -- API -----------------------------------------------------------------------------------
    def lookup(self, ids: Sequence[str]) -> dict[str, Work | None]:
        """Requested id -> its work, or None when arXiv says it does not exist (or is malformed).

        Raises ``RemoteUnavailable`` / ``RateLimited`` when arXiv cannot answer.
        """
        return {k: v.work for k, v in self.lookup_detailed(ids).items()}

    def lookup_detailed(self, ids: Sequence[str]) -> dict[str, ArxivOutcome]:
        outcomes: dict[str, ArxivOutcome] = {}
        wanted: dict[str, list[str]] = {}  # canonical id -> requested spellings
        for requested in dict.fromkeys(ids):
            split = split_arxiv_id(requested)
            if split is None:
                outcomes[requested] = ArxivOutcome("malformed", why="not a well-formed arXiv id")
            else:
                wanted.setdefault(split[0], []).append(requested)
        canonical = list(wanted)
        for start in range(0, len(canonical), self.batch_size):
            found, malformed = self._query(canonical[start : start + self.batch_size])
            for cid in canonical[start : start + self.batch_size]:
                if cid in found:
                    outcome = ArxivOutcome("found", work=found[cid])
                elif cid in malformed:
                    outcome = ArxivOutcome("malformed", why=malformed[cid])
                else:
                    outcome = ArxivOutcome("missing", why="arXiv returned no entry for this id")
                for requested in wanted[cid]:
                    outcomes[requested] = outcome
        return {requested: outcomes[requested] for requested in dict.fromkeys(ids)}

    def _query(self, batch: list[str]) -> tuple[dict[str, Work], dict[str, str]]:
        """Ask for ``batch`` (canonical ids, versions stripped so the latest version answers).

        An Error entry names one id; the legacy API may then leave out every other id of the
        query, so the ids not returned are asked again without the bad one: absent ids are only
        called missing by a response that reported no error.
        """
        found: dict[str, Work] = {}
        malformed: dict[str, str] = {}
        pending = list(batch)
        while pending:
            feed = self._fetch_feed(pending)
            by_id: dict[str, list[ArxivEntry]] = {}
            for entry in feed.entries:
                by_id.setdefault(entry.arxiv_id, []).append(entry)
            for cid in pending:
                if cid in by_id:
                    found[cid] = entries_to_work(by_id[cid])
            new_errors = {}
            for token, message in feed.errors.items():
                split = split_arxiv_id(token)
                key = split[0] if split else token
                if key in pending and key not in found:
                    new_errors[key] = message
            if feed.errors and not new_errors:
                raise ArxivQueryError(f"arXiv rejected the query: {feed.errors}")
            malformed.update(new_errors)
            if not new_errors:
                break
            pending = [c for c in pending if c not in found and c not in malformed]
        return found, malformed

    def _fetch_feed(self, ids: list[str]) -> ArxivFeed:
        params = {"id_list": ",".join(ids), "start": 0, "max_results": len(ids)}
        response = self.http.get(self.api_url, params=params)
        # the API reports a malformed id as an Atom Error entry, with HTTP 200 or 400
        if response.status_code not in (200, 400):
            raise RemoteUnavailable(SERVICE, f"HTTP {response.status_code} from the API")
        try:
            return parse_feed(response.content)
        except ValueError as exc:
            if response.status_code == 400:
                raise ArxivQueryError(f"HTTP 400 from the API: {response.text[:200]!r}") from None
            raise RemoteUnavailable(SERVICE, f"unreadable API response: {exc}") from None

    # -- OAI-PMH -------------------------------------------------------------------------------
    def harvest(
        self,
        *,
        from_date: str | None = None,
        until_date: str | None = None,
        metadata_prefix: str = "arXivRaw",
        set_spec: str | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> Iterator[dict[str, Any]]:
        """``ListRecords`` by date, yielding records in the arXiv snapshot JSONL shape.

        With ``checkpoint`` (kept by the caller) the harvest remembers its resumption token after each
        page and, when started again with the same arguments after a failure, continues from
        that token instead of the beginning. When a harvest completes, the checkpoint keeps its
        ``until`` date; a later call without ``from_date`` starts from there.
        """
        state = read_state(checkpoint)
        request = {"from": from_date, "until": until_date, "metadataPrefix": metadata_prefix, "set": set_spec}
        if from_date is None and state.get("completed") and state.get("last_completed_until"):
            request["from"] = state["last_completed_until"]
        token = None
        if not state.get("completed") and state.get("request") == request:
            token = state.get("resumption_token")
        while True:
            if token:
                params = {"verb": "ListRecords", "resumptionToken": token}
            else:
                params = {"verb": "ListRecords", "metadataPrefix": metadata_prefix}
                for key in ("from", "until", "set"):
                    if request[key]:
                        params[key] = request[key]
            records, token = self._list_records_page(params)
            yield from records
            if token:
                write_state(checkpoint, {"request": request, "resumption_token": token, "completed": False})
            else:
                done = {"request": request, "completed": True, "resumption_token": None}
                done["last_completed_until"] = request["until"] or state.get("last_completed_until")
                write_state(checkpoint, done)
                return

    def _list_records_page(self, params: dict[str, str]) -> tuple[list[dict[str, Any]], str | None]:
        response = self.http.get(self.oai_url, params=params)
        if response.status_code != 200:
            raise RemoteUnavailable(SERVICE, f"OAI-PMH HTTP {response.status_code}")
        try:
            root = ET.fromstring(response.content)
        except ET.ParseError as exc:
            raise RemoteUnavailable(SERVICE, f"unreadable OAI-PMH response: {exc}") from None
        error = root.find(f"{OAI}error")
        if error is not None:
            code = error.get("code", "")
            if code == "noRecordsMatch":
                return [], None
            raise ArxivQueryError(f"OAI-PMH error {code}: {_text(error)}")
        listing = root.find(f"{OAI}ListRecords")
        if listing is None:
            raise RemoteUnavailable(SERVICE, "OAI-PMH response without ListRecords")
        records = []
        for record in listing.findall(f"{OAI}record"):
            converted = oai_record_to_snapshot(record)
            if converted is not None:
                records.append(converted)
        token_el = listing.find(f"{OAI}resumptionToken")
        token = (token_el.text or "").strip() if token_el is not None else ""
        return records, token or None


def _raw_text(el: ET.Element | None) -> str | None:
    """Text as arXiv stores it (the snapshot keeps line breaks), trimmed; None when empty."""
    if el is None or el.text is None:
        return None
    return el.text.strip() or None


def oai_record_to_snapshot(record: ET.Element) -> dict[str, Any] | None:
    """An OAI ``<record>`` (arXivRaw or arXiv format) in the arXiv metadata snapshot shape.

    Deleted records (header status="deleted") carry no metadata and yield None.
    """
    header = record.find(f"{OAI}header")
    if header is not None and header.get("status") == "deleted":
        return None
    metadata = record.find(f"{OAI}metadata")
    if metadata is None or len(metadata) == 0:
        return None
    body = metadata[0]
    ns = ARXIV_RAW if body.tag == f"{ARXIV_RAW}arXivRaw" else ARXIV_OAI if body.tag == f"{ARXIV_OAI}arXiv" else None
    if ns is None:
        return None
    out: dict[str, Any] = {
        "id": _raw_text(body.find(f"{ns}id")),
        "submitter": _raw_text(body.find(f"{ns}submitter")),
        "title": _raw_text(body.find(f"{ns}title")),
        "comments": _raw_text(body.find(f"{ns}comments")),
        "journal-ref": _raw_text(body.find(f"{ns}journal-ref")),
        "doi": _raw_text(body.find(f"{ns}doi")),
        "report-no": _raw_text(body.find(f"{ns}report-no")),
        "categories": _raw_text(body.find(f"{ns}categories")),
        "license": _raw_text(body.find(f"{ns}license")),
        "abstract": _raw_text(body.find(f"{ns}abstract")),
        "update_date": _raw_text(header.find(f"{OAI}datestamp")) if header is not None else None,
    }
    if ns == ARXIV_RAW:
        out["authors"] = _raw_text(body.find(f"{ns}authors"))
        out["versions"] = [
            {"version": v.get("version"), "created": _raw_text(v.find(f"{ns}date"))}
            for v in body.findall(f"{ns}version")
        ]
    else:
        names = []
        for author in body.findall(f"{ns}authors/{ns}author"):
            parts = [_raw_text(author.find(f"{ns}forenames")), _raw_text(author.find(f"{ns}keyname")),
                     _raw_text(author.find(f"{ns}suffix"))]
            names.append(" ".join(p for p in parts if p))
        out["authors"] = ", ".join(names) or None
        out["versions"] = []  # the arXiv format has created/updated dates, not versions
        out["created"] = _raw_text(body.find(f"{ns}created"))
    return out
