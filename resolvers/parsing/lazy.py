"""A reference string parsed only as far as the tests of it ask.

The identifier path settles most strings by their identifier, and the agreement check of a hit
reads few fields of the parse: the year (for the evidence), and the volume, first page and
``Name:`` lead only to see that the string has none. The full parse (author block, sentence
ends, title) is most of a hit's time, so ``lazy_parse`` answers those fields from the parser's
own body of the string when the answer is certain without the rest, and parses the whole
string the first time any other field is read. The answers are the parser's: a body whose
years are all one year has that year whatever the title's place; a volume or first page needs
two numbers in the body, a ``Name:`` lead a colon. Once parsed, the object is a plain
``ParsedReference`` with the parser's fields.
"""
from __future__ import annotations

import copy
import dataclasses
import re
import threading
from collections import OrderedDict
from typing import Any, Callable

from resolvers.parsing.fields import (
    VOL_PAGES,
    YEAR_RE,
    ParsedReference,
    mask_identifiers,
    parse_reference,
    reference_body,
)
from resolvers.parsing.text import clean_raw

_MASKED = "_masked"  # the cleaned string with identifiers blanked, kept on the object once made


# The last PARSES_KEPT full parses by raw string, per process: a string cited again (by another
# paper, in a re-run) is parsed once; its outcome is then a lookup too (``fuzzy.OUTCOME_CACHE``).
PARSES_KEPT = 16384
_PARSES: OrderedDict[str, ParsedReference] = OrderedDict()
_PARSES_LOCK = threading.Lock()


def parse_once(raw: str) -> ParsedReference:
    """``parse_reference(raw)``, remembered (``PARSES_KEPT``): a new object each call, its lists
    its own (a caller may change them)."""
    with _PARSES_LOCK:
        known = _PARSES.get(raw)
        if known is not None:
            _PARSES.move_to_end(raw)
    if known is None:
        known = parse_reference(raw)
        with _PARSES_LOCK:
            _PARSES[raw] = known
            while len(_PARSES) > PARSES_KEPT:
                _PARSES.popitem(last=False)
    fresh = copy.copy(known)
    fresh.authors, fresh.notes = list(known.authors), list(known.notes)
    return fresh


def _anywhere(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """A volume-and-pages shape of the parser that also matches wherever the parser's own match
    in the tail of the body would be, seen in the whole body: no look-behind (the tail starts
    later), and the end it may meet is any character the tail's ends are stripped of."""
    text = pattern.pattern.replace(r"(?<![\d.])", "").replace(r"(?:\(|$|,|\.)", r"(?:\(|$|[,.;:\s])")
    # (the same digits as ``\d+``, but a pattern that starts with one digit is searched by
    # skipping to the digits of the body, not by trying the pattern at every character)
    text = text.replace(r"(?P<vol>\d+)", r"(?P<vol>\d\d*)")
    assert "(?<" not in text and "$|,|" not in text, "parsing.VOL_PAGES changed: revisit lazy_parse"
    return re.compile(text, pattern.flags)


_VOL_PAGES_ANYWHERE = tuple(_anywhere(p) for p in VOL_PAGES)


def _may_hold_numbers(body: str) -> bool:
    """Could the parser read a volume and first page in this body? (They are two numbers, in one
    of its shapes: no shape anywhere in the body, no volume.) Each shape is searched only when
    the body has what it cannot do without: ";", ":", ",", ",", "vol", a dash."""
    p0, p1, p2, p3, p4, p5 = _VOL_PAGES_ANYWHERE
    return bool((";" in body and p0.search(body)) or (":" in body and p1.search(body))
                or ("," in body and (p2.search(body) or p3.search(body)))
                or ("vol" in body.lower() and p4.search(body))
                or (("-" in body or "\u2013" in body) and p5.search(body)))


class LazyParsed(ParsedReference):
    """``parse_reference(raw)``, run on first need (see the module). ``raw`` and ``text`` are
    set; every other field is a property that parses, but for the few answered from the body."""

    def __init__(self, raw: str, text: str) -> None:  # the dataclass fields come with the parse
        self.__dict__.update(raw=raw, text=text)

    def materialise(self) -> ParsedReference:
        """Parse the whole string; from now on this object is a plain ``ParsedReference``."""
        masked = self.__dict__.get(_MASKED)
        full = parse_once(self.raw)
        self.__dict__.clear()
        self.__dict__.update(full.__dict__)
        if masked is not None:
            self.__dict__[_MASKED] = masked
        object.__setattr__(self, "__class__", ParsedReference)
        return self

    def _body(self) -> str:
        body = self.__dict__.get("_body_text")
        if body is None:
            body = self.__dict__["_body_text"] = reference_body(self.text, masked_text(self, self.raw))
        return body

    def _year(self) -> int | None:
        years = {int(m.group(1)) for m in YEAR_RE.finditer(self._body())}
        if len(years) > 1:  # which one is the year depends on where the title starts
            return self.materialise().year
        return years.pop() if years else None

    def _number(self, name: str) -> str | None:
        numbers = self.__dict__.get("_has_numbers")
        if numbers is None:
            numbers = self.__dict__["_has_numbers"] = _may_hold_numbers(self._body())
        return getattr(self.materialise(), name) if numbers else None

    def _title_lead(self) -> str | None:
        return self.materialise().title_lead if ":" in self._body() else None


def _parsed_field(name: str) -> property:
    def get(self: LazyParsed) -> Any:
        return getattr(self.materialise(), name)

    def put(self: LazyParsed, value: Any) -> None:
        setattr(self.materialise(), name, value)

    return property(get, put)


def _quick_field(name: str, answer: Any) -> property:
    def put(self: LazyParsed, value: Any) -> None:
        setattr(self.materialise(), name, value)

    return property(answer, put)


_QUICK: dict[str, Callable[[LazyParsed], Any]] = {
    "year": LazyParsed._year, "title_lead": LazyParsed._title_lead, "volume": lambda p: p._number("volume"),
    "first_page": lambda p: p._number("first_page"), "pages": lambda p: p._number("pages")}
for _name in (f.name for f in dataclasses.fields(ParsedReference)):
    if _name not in ("raw", "text"):
        setattr(LazyParsed, _name, _quick_field(_name, _QUICK[_name]) if _name in _QUICK else _parsed_field(_name))


def lazy_parse(raw: str) -> ParsedReference:
    """``parse_reference(raw)``, parsed on first need. BibTeX-like strings (an ``@`` or ``=``)
    and empty ones are parsed at once: their fields come another way."""
    text = clean_raw(raw or "")
    if not text or "@" in text or "=" in text:
        return parse_reference(raw)
    return LazyParsed(raw, text)


def masked_text(parsed: ParsedReference, raw: str) -> str:
    """``mask_identifiers(parsed.text or raw)``, made once per parsed string."""
    if not parsed.text:
        return mask_identifiers(raw)
    masked = parsed.__dict__.get(_MASKED)
    if masked is None:
        masked = parsed.__dict__[_MASKED] = mask_identifiers(parsed.text)
    return masked
