"""What arXiv metadata says beyond the work fields, kept as catalog-only columns for users and
citation records: categories, versions with their dates, journal-ref and comments."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

_WS = re.compile(r"\s+")
_SNAPSHOT_DATE = re.compile(r"\w{3}, (\d{1,2}) (\w{3}) (\d{4}) (\d\d:\d\d:\d\d) GMT")
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}


def _text(value: Any) -> str | None:
    if isinstance(value, str) and "  " not in value and "\n" not in value and "\t" not in value:
        return value.strip() or None  # the common case, without a regex (millions of rows)
    text = _WS.sub(" ", str(value)).strip() if value is not None else ""
    return text or None


def iso_utc(created: Any) -> str | None:
    """arXiv's version dates as ISO 8601 UTC with ``Z``: the snapshot's RFC 2822 form (``Mon, 2
    Apr 2007 19:18:42 GMT``) or an ISO date (OAI ``arXiv``); None when unreadable."""
    text = _text(created)
    if not text:
        return None
    m = _SNAPSHOT_DATE.fullmatch(text)
    if m and m.group(2) in _MONTHS:  # the snapshot's own form, read without the email parser
        return f"{m.group(3)}-{_MONTHS[m.group(2)]:02d}-{int(m.group(1)):02d}T{m.group(4)}Z"
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def arxiv_versions(versions: Any) -> tuple[dict[str, str | None], ...]:
    """``[{version: "v1", created: "Mon, 2 Apr 2007 ..."}]`` -> versions with ISO dates."""
    out = []
    for v in versions or ():
        if isinstance(v, dict) and _text(v.get("version")):
            out.append({"version": _text(v.get("version")) or "", "created": iso_utc(v.get("created"))})
    return tuple(out)


def arxiv_details(obj: dict) -> dict[str, Any]:
    """The catalog-only columns of one arXiv record (snapshot JSON or OAI fields as a dict)."""
    categories = obj.get("categories") or ""
    if isinstance(categories, str):
        categories = categories.split()
    return {"categories": tuple(c for c in (_text(c) for c in categories) if c),
            "versions": arxiv_versions(obj.get("versions")),
            "journal_ref": _text(obj.get("journal-ref")), "comments": _text(obj.get("comments"))}
