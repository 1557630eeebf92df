"""``extract_identifiers`` over a batch of strings, with one pass of RE2 (Arrow's kernels, in C++)
telling which strings cannot hold any identifier: most strings of a reference list carry none,
and each of those otherwise costs the per-string scan's Python (some 30 µs here).

The gate is a necessary condition of every pass of ``identifiers.extract_identifiers`` finding
anything, read on the raw string (so a superset of what the passes can see after they rejoin
PDF-split URLs and ids):

* ``10.`` (DOIs by shape; a 10.48550 DOI's arXiv id); ``doi`` in the lower-case text (DOIs by
  context; ``İ`` lower-cases to ``i`` + a combining dot); ``arxiv`` likewise (``arXiv:`` tokens);
* a digit, up to two spaces, ``.``, up to two spaces, a digit (new-style numbers, also split
  ones: ``1207 .7214``);
* ``/`` then a digit within two characters (old-style ids, also ``hep-th/ 9901001``);
* a backslash (LaTeX escapes are undone first: such strings take the full scan).

Digits are Python's ``\\d`` (Unicode decimal digits), written out as ranges from this Python's
Unicode tables, so RE2's own tables cannot disagree with ``re``.
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from .identifiers import _NONE, extract_identifiers
from .model import ExtractedIdentifiers

__all__ = ["extract_batch"]


def _digit_class() -> str:
    """An RE2 class of every character Python's ``re`` reads as ``\\d`` (category Nd)."""
    codes = [c for c in range(0x110000) if unicodedata.category(chr(c)) == "Nd"]
    ranges: list[list[int]] = []
    for c in codes:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return "[" + "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in ranges) + "]"


_D = _digit_class()
GATE = ("(?s)" + "|".join([
    r"10\.", "[dD][oO][iI\u0130]", "[aA][rR][xX][iI\u0130][vV]",
    _D + r"[ \t\r\n]{0,2}\.[ \t\r\n]{0,2}" + _D, "/.{0,2}" + _D, r"\\",
]))
MIN_BATCH = 64  # below this, the Arrow call costs more than it saves


def extract_batch(raws: Sequence[str]) -> list[ExtractedIdentifiers]:
    """``[extract_identifiers(r) for r in raws]``, the strings that cannot hold an identifier
    answered without their scan."""
    if len(raws) < MIN_BATCH or not all(type(r) is str for r in raws):
        return [extract_identifiers(r) for r in raws]
    maybe = pc.match_substring_regex(pa.array(raws, pa.large_string()), GATE).to_pylist()
    return [extract_identifiers(r) if m else _NONE for r, m in zip(raws, maybe)]
