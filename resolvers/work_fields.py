"""Small pure field readers every source of works shares (catalog readers in ``citeledger`` and
the remote clients here): one place, so a work read from a file and the same work fetched from a
service get the same field values."""
from __future__ import annotations

import hashlib
import html
import json
import re
from typing import Any

# A JATS/HTML/MathML tag: "<", a name (after "/", "!" or "?"), up to ">"; "p < 0.05 and q > 2" is no tag
_TAG = re.compile(r"<[/!?]?[A-Za-z][^<>]{0,200}>")


# An HTML character reference with its ";" (html.unescape alone also reads "&para" in "&paragraph")
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


def _unescape(m: re.Match[str]) -> str:
    return html.unescape(m.group(0))


def clean_text(text: Any) -> str | None:
    """Collapse whitespace (arXiv titles are hard-wrapped), read HTML character references (Crossref
    writes "ecology &amp; evolution", "p &lt; 0.05") and drop JATS/HTML tags."""
    if text is None:
        return None
    text = str(text)
    if "&" in text:
        text = _ENTITY.sub(_unescape, text)
    if "<" in text:
        text = _TAG.sub("", text)
    text = " ".join(text.split())  # (the same white space as ``\s+``, without a regular expression per field)
    return text or None


def int_year(value: Any) -> int | None:
    try:
        year = int(str(value)[:4])
    except (TypeError, ValueError):
        return None
    return year if 1000 <= year <= 2999 else None


def first_page(pages: Any) -> str | None:
    if pages in (None, ""):
        return None
    m = re.match(r"\s*([A-Za-z]?\d+[A-Za-z]?)", str(pages))
    return m.group(1) if m else clean_text(str(pages))


def content_work_id(title: str | None, authors: list[str], year: int | None) -> str:
    """A stable id for a work with no DOI and no arXiv id: a digest of what identifies it."""
    key = json.dumps([(title or "").casefold(), [a.casefold() for a in authors[:1]], year])
    return "cl:" + hashlib.sha256(key.encode()).hexdigest()[:20]


def arxiv_doi(arxiv_id: str) -> str:
    """arXiv's own DataCite DOI for an id (lower-case, as every DOI here)."""
    return f"10.48550/arxiv.{arxiv_id}".lower()
