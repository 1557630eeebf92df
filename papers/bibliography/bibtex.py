"""BibTeX entries as reference strings: each entry's fields read (braces, quotes, ``#``
concatenation, ``@string`` macros, month names) and rendered as a reference a reader would see
(authors, title, venue, volume, pages, year, identifiers, note) with LaTeX turned to text; the
fields are kept beside it for the parser."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

_HEAD = re.compile(r"@\s*([A-Za-z]+)\s*([{(])")
_NAME = re.compile(r"\s*([A-Za-z0-9_:.+/\-]+)\s*")
_FIELD = re.compile(r"[\s,]*([A-Za-z][\w\-:.+]*)\s*=")
_MONTHS = {m: m.capitalize() for m in ("jan feb mar apr may jun jul aug sep oct nov dec").split()}


@dataclass(slots=True)
class BibEntry:
    offset: int
    kind: str
    key: str | None
    fields: dict[str, str] = field(default_factory=dict)
    error: str = ""  # why the entry could not be read (it is not listed)
    warning: str = ""  # what was wrong with an entry read all the same, as BibTeX reads it


_BRACES = {"{": re.compile(r"[{}]"), "(": re.compile(r"[{})]")}
_QUOTED = re.compile(r'[{}"]')
_NEXT_HEAD = re.compile(r"\n[ \t]*@[ \t]*[A-Za-z]+[ \t]*[{(]")
_SIMPLE = re.compile(r"\{([^{}]*)\}")


def _close(text: str, start: int, open_ch: str, stop: int | None = None) -> int:
    """Offset after the entry opened before ``start`` closes (before ``stop``); -1 when it never does."""
    depth = 0
    for m in _BRACES[open_ch].finditer(text, start, len(text) if stop is None else stop):
        ch = m.group()
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif depth == 0:  # the closing brace (or parenthesis) of the entry
            return m.end()
    return -1


def _quoted_end(text: str, start: int) -> int:
    """Offset of the ``"`` closing a quoted value that opened before ``start`` (braces nest)."""
    depth = 0
    for m in _QUOTED.finditer(text, start):
        ch = m.group()
        if ch == '"' and depth == 0:
            return m.start()
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
    return len(text)


# a field is at most an abstract of some thousand characters; ``@string``s each joining the one
# before twice double per line, so a value past this is an error, not a gigabyte
MAX_VALUE_CHARS = 256 * 1024


class ValueTooLong(Exception):
    """A field value (``@string``s joined with ``#``) past ``MAX_VALUE_CHARS``."""


def _value(text: str, i: int, macros: dict[str, str]) -> tuple[str, int]:
    """One field value at ``text[i]`` (pieces joined by ``#``) and the offset after it."""
    parts: list[str] = []
    size = 0
    while True:
        if parts:
            size += len(parts[-1])
            if size > MAX_VALUE_CHARS:
                raise ValueTooLong(f"a field value passes {MAX_VALUE_CHARS:,} characters (@string "
                                   "macros joined with # multiply)")
        while i < len(text) and text[i].isspace():
            i += 1
        ch = text[i:i + 1]
        simple = _SIMPLE.match(text, i) if ch == "{" else None
        if simple:
            parts.append(simple.group(1))
            i = simple.end()
        elif ch == "{":
            end = _close(text, i + 1, "{")
            end = len(text) if end < 0 else end
            parts.append(text[i + 1:end - 1])
            i = end
        elif ch == '"':
            j = _quoted_end(text, i + 1)
            parts.append(text[i + 1:j])
            i = j + 1
        else:
            m = _NAME.match(text, i)
            word = m.group(1) if m else ""
            parts.append(macros.get(word.lower(), word))
            i = m.end() if m and word else i + 1
        while i < len(text) and text[i].isspace():
            i += 1
        if text[i:i + 1] != "#":
            return "".join(parts), i
        i += 1


def _fields(body: str, macros: dict[str, str]) -> tuple[str | None, dict[str, str]]:
    """The key and the ``name = value`` fields of one entry's body."""
    key, _, rest = body.partition(",")
    if "=" in key:  # no key: the body starts with a field
        key, rest = "", body
    fields: dict[str, str] = {}
    i = 0
    while i < len(rest):
        m = _FIELD.match(rest, i)
        if not m:
            break
        value, i = _value(rest, m.end(), macros)
        fields[m.group(1).lower()] = value.strip()
    return key.strip() or None, fields


def _unclosed(body: str, at: int, kind: str, macros: dict[str, str]) -> BibEntry:
    """An entry whose closing brace never comes before the next entry. When each of its values
    closes, only that brace is missing: BibTeX reports it ("I was expecting a `,' or a `}'"),
    keeps the fields read and goes on at the next ``@``, so the entry is listed with a
    ``warning``. A value that never closes leaves the entry unread (``error``), its key kept."""
    depth = 0
    for m in _BRACES["{"].finditer(body):
        depth += 1 if m.group() == "{" else -1
    head = body.partition(",")[0]
    key = None if "=" in head else head.strip() or None
    if depth:
        return BibEntry(at, kind, key, {}, "unbalanced braces: the entry never closes")
    try:
        key, fields = _fields(body, macros)
    except ValueTooLong as why:
        return BibEntry(at, kind, key, {}, str(why))
    return BibEntry(at, kind, key, fields, warning="the entry never closes: read up to the next entry, as BibTeX does")


def parse_bib(text: str) -> list[BibEntry]:
    """Every entry of a ``.bib`` text in order (``@string`` read, ``@comment``/``@preamble``
    skipped); an entry whose braces never close is kept, with ``warning`` set when only its closing
    brace is missing, else with ``error``."""
    return list(iter_bib(text))


def iter_bib(text: str) -> Iterator[BibEntry]:
    """``parse_bib``'s entries one by one, so a reader keeping a few of a huge file holds only those."""
    macros = dict(_MONTHS)
    pos = 0
    while (at := text.find("@", pos)) >= 0:
        m = _HEAD.match(text, at)
        if not m:
            pos = at + 1
            continue
        kind = m.group(1).lower()
        head = _NEXT_HEAD.search(text, m.end())  # an entry that has not closed by the next one never does
        end = _close(text, m.end(), m.group(2), head.start() if head else len(text))
        if end < 0:
            nxt = re.compile(r"\n\s*@").search(text, m.end())
            pos = nxt.start() + 1 if nxt else len(text)
            if kind not in ("comment", "preamble", "string"):
                yield _unclosed(text[m.end():head.start() if head else len(text)], at, kind, macros)
            continue
        body = text[m.end():end - 1]
        pos = end
        try:
            if kind == "string":
                _, found = _fields("," + body, macros)
                macros.update(found)
            elif kind not in ("comment", "preamble"):
                key, fields = _fields(body, macros)
                yield BibEntry(at, kind, key, fields)
        except ValueTooLong as why:
            yield BibEntry(at, kind, None, {}, str(why))
