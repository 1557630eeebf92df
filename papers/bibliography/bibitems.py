"""The entries of a ``thebibliography`` environment (in a ``.bbl`` or inline in a ``.tex``): one
per ``\\bibitem``, with its key and body, in order. A ``\\bibitem[label]{key}`` label may hold
braces and brackets (natbib's ``[{Smith et~al.(2001)}]``), so it is scanned, not matched."""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_BEGIN = re.compile(r"\\begin\s*\{thebibliography\}")
_END = re.compile(r"\\end\s*\{thebibliography\}")
_BIBITEM = re.compile(r"\\bibitem(?![A-Za-z@])\s*")


@dataclass(frozen=True, slots=True)
class Bibitem:
    offset: int  # of ``\bibitem`` in the text searched
    key: str | None
    body: str


def _skip_group(text: str, i: int, close_ch: str, stop: int | None = None) -> int:
    """The offset after the group opening at ``text[i]`` (``[`` or ``{``) and closing with
    ``close_ch`` outside any inner braces; -1 when it does not close before ``stop`` (the next
    item: a natbib label lists every author, hundreds of them in a collaboration's paper)."""
    depth, j, stop = 0, i + 1, len(text) if stop is None else min(len(text), stop)
    while j < stop:
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == close_ch and depth == 0:
            return j + 1
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        j += 1
    return -1


def _item_head(text: str, start: int, stop: int) -> tuple[int, str | None]:
    """After ``\\bibitem`` at ``start``: (offset where the body starts, key)."""
    i = start
    if text[i:i + 1] == "[":
        end = _skip_group(text, i, "]", stop)
        i = end if end > 0 else i
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    if text[i:i + 1] == "{":
        end = _skip_group(text, i, "}", min(stop, i + 2000))
        if end > 0:
            return end, text[i + 1:end - 1].strip()
    return i, None


def environments(text: str) -> list[tuple[int, int]]:
    """(start, end) of every ``thebibliography`` body; an unclosed one runs to the end."""
    spans: list[tuple[int, int]] = []
    for begin in _BEGIN.finditer(text):
        if spans and begin.start() < spans[-1][1]:
            continue
        end = _END.search(text, begin.end())
        spans.append((begin.end(), end.start() if end else len(text)))
    return spans


def bibitems(text: str, start: int = 0, end: int | None = None, limit: int | None = None) -> list[Bibitem]:
    """Every ``\\bibitem`` between ``start`` and ``end`` (past ``limit`` items, one more and no
    further); a body runs to the next item."""
    end = len(text) if end is None else end
    heads = list(itertools.islice(_BIBITEM.finditer(text, start, end), None if limit is None else limit + 1))
    items = []
    for n, m in enumerate(heads):
        stop = heads[n + 1].start() if n + 1 < len(heads) else end
        body_start, key = _item_head(text, m.end(), stop)
        items.append(Bibitem(m.start(), key, text[body_start:stop]))
    return items


def bibliography_items(text: str, limit: int | None = None) -> list[Bibitem]:
    """The items of every ``thebibliography`` environment in ``text``, or of the whole text when
    it has ``\\bibitem``s and no environment (a fragment of a ``.bbl``); past ``limit`` items,
    one more and no further."""
    spans = environments(text)
    if not spans:
        return bibitems(text, limit=limit)
    items: list[Bibitem] = []
    for start, end in spans:
        items += bibitems(text, start, end, None if limit is None else limit - len(items))
        if limit is not None and len(items) > limit:
            break
    return items


_BIBINFO = re.compile(r"\\bibinfo\s*\{\s*([A-Za-z]+)\s*\}\s*\{")
# what revtex's ``\bibinfo`` fields give the parser beside the string (names joined by ``and``)
BIBINFO_KEPT = ("author", "editor", "title", "journal", "booktitle", "volume", "pages", "year", "publisher",
                "doi", "eprint", "school", "institution", "series", "edition", "number", "note")


def bibinfo_fields(body: str) -> dict[str, str]:
    """revtex's ``\\bibinfo{field}{value}`` of one entry, as LaTeX: the first of each field, every
    author and editor joined with `` and ``."""
    if "\\bibinfo" not in body:
        return {}
    found: dict[str, list[str]] = {}
    for m in _BIBINFO.finditer(body):
        end = _skip_group(body, m.end() - 1, "}", m.end() + 4000)
        name = m.group(1).lower()
        if end > 0 and name in BIBINFO_KEPT:
            found.setdefault(name, []).append(body[m.end():end - 1])
    return {k: " and ".join(_last_first(n) for n in v) if k in ("author", "editor") else v[0]
            for k, v in found.items()}


_NAMEFONT = re.compile(r"\\bib(f?)namefont\s*\{")


def _last_first(name: str) -> str:
    """revtex's ``\\bibfnamefont{V.~C.}\\ \\bibnamefont{{Rubin}}, \\bibfnamefont{Jr.}`` as BibTeX's
    ``Rubin, Jr., V.~C.``; a name without those macros as it is."""
    parts: dict[str, list[str]] = {"": [], "f": []}
    for m in _NAMEFONT.finditer(name):
        end = _skip_group(name, m.end() - 1, "}", m.end() + 1000)
        if end > 0:
            parts[m.group(1)].append(name[m.end():end - 1])
    if len(parts[""]) != 1 or not parts["f"]:
        return name
    given, suffix = parts["f"][0], parts["f"][1:]
    return ", ".join([parts[""][0], *suffix, given])
