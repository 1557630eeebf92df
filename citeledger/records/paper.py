"""The paper part of a citation record (schema v2): its identity, its short content-derived
handle, the aliases it answers to, and what the catalog says about it (categories, versions,
submission and last-update dates, journal reference, comments); and which observation rows are the
paper's (``select_rows``: its own references, and those of other papers resolved to its work).

The handle: ``p-`` + the first 10 characters (50 bits) of the lower-case RFC 4648 base32 of the
SHA-256 over the JCS of the paper's identity ``{"scheme": ..., "id": ...}``: its canonical arXiv id
(without version) when it has one (its own or its catalog work's), else its DOI (lower case), else
the id as the ledger has it. The identity, not the whole record, is hashed so the handle stays the
same when the record's content changes (a new run, a new notice). Collisions: any longer prefix of
the same base32 digest (``identity_digest``) is accepted too, and a handle two papers of a ledger
share is an error naming both, never a silent pick (50 bits: about 0.3 % odds of one collision
among 2.5 million papers).
"""
from __future__ import annotations

import base64
import functools
import hashlib
import re
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Iterable, Mapping

from resolvers.identifiers.extract import canonical_arxiv_id, normalize_doi
from resolvers.jcs import jcs

HANDLE_PREFIX = "p-"
HANDLE_CHARS = 10
HANDLE_RE = re.compile(r"^p-[a-z2-7]{10,52}$")
_ARXIV_DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)?10\.48550/arxiv\.(.+)$", re.I)
_VERSION = re.compile(r"^(.*\d)v(\d+)$")


def arxiv_of(text: str | None) -> str | None:
    """The canonical arXiv id (no version) a paper id names: ``arXiv:X``, ``XvN``, ``10.48550/arXiv.X``."""
    if not text:
        return None
    t = text.strip()
    m = _ARXIV_DOI.match(t)
    if m:
        t = m.group(1)
    return canonical_arxiv_id(t)


def identity(paper_id: str, work: Mapping[str, Any] | None) -> dict[str, str]:
    """The paper's identity: the one identifier its handle is derived from (see the module)."""
    arxiv = (work or {}).get("arxiv_id") or arxiv_of(paper_id)
    if arxiv:
        return {"scheme": "arxiv", "id": str(arxiv)}
    doi = (work or {}).get("doi") or normalize_doi(paper_id)
    if doi:
        return {"scheme": "doi", "id": str(doi).lower()}
    return {"scheme": "id", "id": paper_id.strip()}


def identity_digest(ident: Mapping[str, str]) -> str:
    """Lower-case base32 (no padding) of SHA-256 over the identity's JCS: 52 characters."""
    if type(ident.get("scheme")) is str and type(ident.get("id")) is str and len(ident) == 2:
        return _identity_digest(ident["scheme"], ident["id"])  # a record asks three times (digest, handle, aliases)
    return base64.b32encode(hashlib.sha256(jcs(dict(ident))).digest()).decode().rstrip("=").lower()


@functools.lru_cache(maxsize=256)
def _identity_digest(scheme: str, id_: str) -> str:
    return base64.b32encode(hashlib.sha256(jcs({"scheme": scheme, "id": id_})).digest()).decode().rstrip("=").lower()


def handle(ident: Mapping[str, str]) -> str:
    return HANDLE_PREFIX + identity_digest(ident)[:HANDLE_CHARS]


def iso_z(value: Any) -> str | None:
    """A time as ISO 8601 UTC with ``Z`` (arXiv's ``Mon, 2 Apr 2007 19:18:42 GMT`` too); None stays None."""
    if value is None or value == "":
        return None
    return _iso_z_text(value) if isinstance(value, str) else _iso_z(value)


@functools.lru_cache(maxsize=4096)
def _iso_z_text(text: str) -> str | None:
    """The same few times (a catalog's build, a run's start) recur in every entry: parsed once."""
    return _iso_z(text)


def _iso_z(value: Any) -> str | None:
    if isinstance(value, datetime):
        when = value
    else:
        text = str(value).strip()
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            try:
                when = parsedate_to_datetime(text)
            except (TypeError, ValueError):
                return text  # not a time we can read: kept as the source wrote it
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def versions_of(work: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """The catalog's arXiv versions (``v1``, ``v2``, ... with their times), None when not kept."""
    raw = (work or {}).get("versions")
    if raw is None:
        return None
    out = [{"version": str(v.get("version")), "created": iso_z(v.get("created"))} for v in raw if v]
    return sorted(out, key=lambda v: int(v["version"].lstrip("v") or 0) if v["version"].lstrip("v").isdigit() else 0)


def aliases(paper_id: str, ident: Mapping[str, str], work: Mapping[str, Any] | None,
            versions: list[dict[str, Any]] | None, citing_ids: list[str]) -> list[str]:
    """Every id ``citeledger record`` takes for this paper, the handle last."""
    out: list[str] = []
    if ident["scheme"] == "arxiv":
        x = ident["id"]
        out += [x, f"arXiv:{x}"]
        given = _VERSION.match(paper_id.strip().removeprefix("arXiv:").removeprefix("arxiv:"))
        numbers = [v["version"] for v in versions or []] or ([f"v{given.group(2)}"] if given else [])
        out += [f"{x}{n}" for n in numbers]
        out.append(f"10.48550/arXiv.{x}")
    for doi in [(work or {}).get("doi"), *((work or {}).get("alt_dois") or [])]:
        if doi and not str(doi).lower().startswith("10.48550/arxiv."):
            out.append(str(doi).lower())
    if ident["scheme"] != "arxiv":
        out.append(ident["id"])
    out += citing_ids
    out.append(handle(ident))
    return list(dict.fromkeys(out))


def paper_section(paper_id: str, work: Mapping[str, Any] | None, work_view: dict[str, Any] | None,
                  citing_ids: list[str]) -> dict[str, Any]:
    """The record's ``paper``: identity, handle, aliases, the catalog's metadata (null when the
    catalog does not keep a field; ``coverage.paper_metadata`` says which)."""
    ident = identity(paper_id, work)
    versions = versions_of(work)
    categories = (work or {}).get("categories")
    return {
        "id": paper_id,
        "identity": ident,
        "identity_digest": identity_digest(ident),
        "handle": handle(ident),
        "aliases": aliases(paper_id, ident, work, versions, citing_ids),
        "in_catalog": bool(work),
        "work": work_view,
        "metadata_source": list((work or {}).get("sources") or []) or None,
        "categories": list(categories) if categories is not None else None,
        "submitted_at": versions[0]["created"] if versions else None,
        "last_updated_at": versions[-1]["created"] if versions else None,
        "versions": versions,
        "journal_ref": (work or {}).get("journal_ref"),
        "comments": (work or {}).get("comments"),
        "citing_paper_ids": citing_ids,
    }


METADATA_FIELDS = ("categories", "versions", "journal_ref", "comments")


def metadata_lane(work: Mapping[str, Any] | None) -> dict[str, Any]:
    """Which catalog metadata of the paper the record could carry: the optional works.parquet
    columns (categories, versions, journal_ref, comments) are read when the catalog has them."""
    if not work:
        return {"state": "not_measured", "observed": 0, "denominator": len(METADATA_FIELDS),
                "means": "the paper is not in the catalog: no categories, versions or dates"}
    kept = [f for f in METADATA_FIELDS if f in work]
    state = "measured" if len(kept) == len(METADATA_FIELDS) else "partial" if kept else "not_measured"
    missing = [f for f in METADATA_FIELDS if f not in kept]
    return {"state": state, "observed": len(kept), "denominator": len(METADATA_FIELDS),
            "means": "catalog fields of the paper kept by this catalog" +
                     (f"; not kept (null in the record): {', '.join(missing)}" if missing else "")}


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
    arxiv = arxiv_of(paper_id)
    if arxiv:
        forms |= {arxiv.lower(), "10.48550/arxiv." + arxiv.lower()}
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
