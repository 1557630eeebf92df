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

A string of the most common DOI shape, a reference ending ``doi:10.NNNN/suffix`` or
``https://doi.org/10.NNNN/suffix`` (``PLAIN_DOI_STRING``) where nothing else can be read as an
identifier (``plain_doi_strings``), is answered by that DOI lower-cased, again without its scan.
"""
from __future__ import annotations

from functools import cache
from typing import Sequence

import pyarrow as pa

from resolvers.identifiers.extract import MAX_TOKEN, NO_IDENTIFIERS, extract_identifiers
from resolvers.model import ExtractedIdentifiers
from resolvers.parsing.text_arrow import python_class

__all__ = ["extract_batch"]


@cache
def gate() -> str:
    """What a string that may hold an identifier has: "10.", "doi", "arxiv", digits around a dot,
    a digit after "/", a backslash (Python's digits, RE2's class made on first use)."""
    digit = python_class("digit")
    return "(?s)" + "|".join([r"10\.", "[dD][oO][iI\u0130]", "[aA][rR][xX][iI\u0130][vV]",
                              digit + r"[ \t\r\n]{0,2}\.[ \t\r\n]{0,2}" + digit, "/.{0,2}" + digit, r"\\"])


MIN_BATCH = 64  # below this, the Arrow calls cost more than they save

# The DOI (``PLAIN_DOI``'s shape: a 4-9 digit registrant, a suffix of letters, digits and "-._"
# not ending with ".", running to the end of the string) after ``doi:`` or a doi.org URL.
PLAIN_DOI_STRING = r"(?:[dD][oO][iI]: ?|https?://(?:dx\.)?doi\.org/)10\.[0-9]{4,9}/[-._0-9A-Za-z]*[-_0-9A-Za-z]$"
# Why each pass of the scan finds only that DOI in such a string: no backslash (LaTeX), no split
# URL, no "arx" (no ``arXiv:`` token, no arXiv word before a number). Before the DOI: no "/"
# followed by a digit (no old-style id, split or not), no "10." (no other DOI by shape), no "doi"
# (none by context; the one before the DOI ends where the DOI starts), no "ddd.ddd" and no
# PDF-split number (so no new-style number at all). In the DOI: no "doi" (a context inside it),
# no second "/"; a number in it stands after a DOI character (never after "[", ",", ";", an
# archive's "/", an arXiv word or "abs/"), before DOI characters or the end (never a category),
# so it is no id. (The text before the DOI is what is left when the leftmost match is cut off;
# a second "doi" anywhere, in the DOI too, is loud.)
@cache
def _loud() -> tuple[str, str]:
    """The loud text and the loud prefix (above), with Python's spaces and digits as RE2 classes."""
    space, digit = python_class("space"), python_class("digit")
    text = r"\\|[aA][rR][xX]|[:.]" + space + r"{1,3}(?://|[oO][rR][gG])" + r"|[dD][oO][iI](?s:.*)[dD][oO][iI]"
    prefix = ("/(?s:.{0,2})" + digit + "|10\\.|[dD][oO][iI\u0130\u0131]|" + digit + r"{3}\." + digit + "{3}|"
              + digit + r"{4}[ \t\r\n]{1,2}\.|" + digit + r"{4}\.[ \t\r\n]{1,2}" + digit)
    return text, prefix


def plain_doi_strings(raws: pa.Array) -> list[str | None]:
    """For each string, its DOI when it is a plain DOI string (see above), else None. (RE2 finds
    where a match is without Python; a capture group would cost it ten times more.)"""
    import pyarrow.compute as pc  # (loaded by a batch of ``MIN_BATCH`` strings or more only: 0.06 s)

    shaped = pc.match_substring_regex(raws, PLAIN_DOI_STRING)
    prefix = pc.replace_substring_regex(raws, PLAIN_DOI_STRING, "", max_replacements=1)
    loud_text, loud_prefix = _loud()
    quiet = pc.and_not(shaped, pc.or_(pc.match_substring_regex(raws, loud_text),
                                      pc.match_substring_regex(prefix, loud_prefix)))
    out: list[str | None] = []
    for raw, before, ok in zip(raws.to_pylist(), prefix.to_pylist(), quiet.to_pylist()):
        doi = raw[raw.index("10.", len(before)):] if ok else None  # (what follows "doi:" / doi.org/)
        out.append(doi if doi is None or len(doi) <= MAX_TOKEN else None)
    return out


def extract_batch(raws: Sequence[str]) -> list[ExtractedIdentifiers]:
    """``[extract_identifiers(r) for r in raws]``: plain DOI strings and the strings that cannot
    hold an identifier answered without their scan."""
    if len(raws) < MIN_BATCH or not all(type(r) is str for r in raws):
        return [extract_identifiers(r) for r in raws]
    try:
        column = pa.array(raws, pa.large_string())
    except UnicodeEncodeError:  # a lone surrogate (no input route should let one in): Arrow holds UTF-8 only
        return [extract_identifiers(r) for r in raws]
    import pyarrow.compute as pc

    maybe = pc.match_substring_regex(column, gate()).to_pylist()
    plain = plain_doi_strings(column)
    return [(ExtractedIdentifiers((d.lower(),)) if d is not None else extract_identifiers(r)) if m else NO_IDENTIFIERS
            for r, m, d in zip(raws, maybe, plain)]
