"""A BibTeX entry's fields rendered as one reference string, in the order a reference list
shows them: ``Authors. Title. Venue, Volume(Number):Pages, Year. doi:D. arXiv:E. Note.``"""
from __future__ import annotations

import re

from .text import latex_to_text

_VENUE_FIELDS = ("journal", "journaltitle", "booktitle", "school", "institution", "organization",
                 "publisher", "howpublished")


def _name(name: str) -> str:
    """``Last, First`` -> ``First Last``; ``others`` -> ``et al.``"""
    name = name.strip()
    if name.lower() == "others":
        return "et al."
    parts = [p.strip() for p in _split_top(name, ",")]
    if len(parts) == 2:
        return f"{parts[1]} {parts[0]}".strip()
    if len(parts) == 3:  # Last, Jr, First
        return f"{parts[2]} {parts[0]} {parts[1]}".strip()
    return name


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside braces."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
    return parts + [text[start:]]


def authors(value: str) -> str:
    names = [_name(n) for n in _split_top(re.sub(r"\s+", " ", value), " and ") if n.strip()]
    if len(names) > 1 and names[-1] == "et al.":
        return ", ".join(names[:-1]) + " et al."
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else ""


def render(fields: dict[str, str]) -> str:
    """The entry as a reference string; LaTeX turned to text, piece by piece."""
    text = {k: latex_to_text(v) for k, v in fields.items() if v and v.strip()}
    pieces = []
    who = fields.get("author") or fields.get("editor")
    if who:
        pieces.append(latex_to_text(authors(who)))
    if "title" in text:
        pieces.append(text["title"])
    venue = next((text[f] for f in _VENUE_FIELDS if f in text), "")
    numbers = text.get("volume", "") + (f"({text['number']})" if "number" in text else "")
    if "pages" in text:
        numbers += (":" if numbers else "pp. ") + text["pages"]
    place = ", ".join(p for p in (venue, numbers, text.get("year") or text.get("date", "")) if p)
    if place:
        pieces.append(place)
    if "doi" in text:
        pieces.append("doi:" + text["doi"].removeprefix("https://doi.org/"))
    if "eprint" in text:
        prefix = "arXiv:" if fields.get("archiveprefix", "arXiv").lower() == "arxiv" else ""
        pieces.append(prefix + text["eprint"])
    elif "url" in text and "doi" not in text:
        pieces.append(text["url"])
    if "note" in text:
        pieces.append(text["note"])
    return ". ".join(p.rstrip(". ") for p in pieces if p.strip(". ")) + ("." if pieces else "")
