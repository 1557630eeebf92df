"""Numbered parts of a title series ("The larva and post-larval development of the reef-building
corals. III." and its "IV."): the same words, another work. The verifier's title score sees one
numeral's difference as a near-perfect match, so a work whose title names a part the string does
not, while the string names another part, is a title naming another work (see
``verify.title_names_another_work``: only volume and first page agreeing override it)."""
from __future__ import annotations

import re
from functools import lru_cache

# upper-case Roman numerals of two letters or more, standing alone (I, V, X alone are initials)
_PART = re.compile(r"(?<![\w'’-])(?=[IVX]{2,5}(?![\w'’-]))X{0,3}(?:IX|IV|V?I{0,3})(?![\w'’-])")


@lru_cache(maxsize=65536)
def title_parts(text: str | None) -> frozenset[str]:
    """The part numerals a text names (``"... corals. III. A. brueggemmanni"`` -> {"III"})."""
    if not text:
        return frozenset()
    return frozenset(m.group(0) for m in _PART.finditer(text) if len(m.group(0)) >= 2)


def names_another_part(work_title: str | None, reference_text: str) -> bool:
    """The work's title names a part (II, III, IV, ...) the string does not, and the string names
    another one: a sibling in the series, not the cited work."""
    string_parts = title_parts(reference_text)  # asked first: the same string for every candidate
    if not string_parts:
        return False
    work_parts = title_parts(work_title)
    return bool(work_parts) and work_parts.isdisjoint(string_parts)
