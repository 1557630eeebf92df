"""How physics and CS reference lists print arXiv ids besides ``arXiv:ID``, and when such a
print may be read as an id.

Two habits need more than the grammar in ``identifiers``:

* PDF text extraction inserts spaces inside ids: ``hep -th/9711200``, ``gr - qc/9310026``,
  ``cond -mat/ 0410550``, ``hep-ph /0101001``, ``1207 .7214``, ``arXiv:1207. 7214``.
  ``rejoin_splits`` removes those spaces (only where the joined token is an archive name followed
  by an old-style number, or a plausible ``YYMM.NNNN(N)``), on a copy used for arXiv scanning.
* INSPIRE/HEP and JHEP styles print a new-style id bare after the journal reference:
  ``Phys. Lett. B 716, 1 (2012), 1207.7214`` or ``JHEP 06 (2017) 047 [1612.07451]``.
  ``bare_new_style_plausible`` accepts a bare number only in those two slots, with a date arXiv
  has issued, and never where a page, volume, ISBN, phone number or a decimal would stand.
"""
from __future__ import annotations

import re
import time

__all__ = ["OLD_STYLE_ARCHIVES", "ARXIV_ARCHIVES", "rejoin_splits", "archive_before",
           "bare_new_style_plausible"]

# Archives that had old-style ids (arXiv taxonomy, arxiv-base ``ARCHIVES`` started before 2007-04).
OLD_STYLE_ARCHIVES = frozenset({
    "acc-phys", "adap-org", "alg-geom", "ao-sci", "astro-ph", "atom-ph", "bayes-an", "chao-dyn",
    "chem-ph", "cmp-lg", "comp-gas", "cond-mat", "cs", "dg-ga", "funct-an", "gr-qc", "hep-ex",
    "hep-lat", "hep-ph", "hep-th", "math", "math-ph", "mtrl-th", "nlin", "nucl-ex", "nucl-th",
    "patt-sol", "physics", "plasm-ph", "q-alg", "q-bio", "quant-ph", "solv-int", "supr-con",
})
# Every archive a category suffix (``[stat.ML]``, ``[cs, stat]``) may name.
ARXIV_ARCHIVES = OLD_STYLE_ARCHIVES | {"stat", "q-fin", "eess", "econ"}

# A bare id's year may not be later than this one (two digits; read once, at import).
_THIS_YY = time.gmtime().tm_year % 100


def _archive_alternatives() -> str:
    """Every archive name as a regex alternative whose hyphen may carry PDF spaces, longest first
    (``math-ph`` before ``math``)."""
    names = sorted(ARXIV_ARCHIVES, key=len, reverse=True)
    return "|".join(r"\s{0,2}-\s{0,2}".join(map(re.escape, n.split("-"))) for n in names)


# archive(.SC) "/" then an old-style number or a new-style one (astro-ph/0710.3113).
_SPLIT_OLD = re.compile(
    r"(?<![A-Za-z])(?i:(" + _archive_alternatives() + r"))((?:\.[A-Z]{2})?)(\s{0,2}/\s{0,2})"
    r"(?=\d{4}(?:\d{3}(?!\d)|\.\d{4,5}(?!\d)))")
# YYMM . NNNN(N) with a space on at least one side of the dot.
_SPLIT_NEW = re.compile(
    r"(?<![\d.])(\d{4})(?:[ \t\r\n]{1,2}\.[ \t\r\n]{0,2}|\.[ \t\r\n]{1,2})(\d{4,5})(?!\d)(?!\.\d)")


def _join_old(m: re.Match[str]) -> str:
    archive = re.sub(r"\s+", "", m.group(1))
    if archive.lower() not in ARXIV_ARCHIVES:
        return m.group(0)
    return archive + m.group(2) + "/"


def _join_new(m: re.Match[str]) -> str:
    yymm, seq = m.group(1), m.group(2)
    plausible = 1 <= int(yymm[2:]) <= 12 and (
        704 <= int(yymm) <= 1412 if len(seq) == 4 else int(yymm) >= 1501)
    return f"{yymm}.{seq}" if plausible else m.group(0)


# Cheap necessary conditions (each starts with a literal, so the regex engine scans fast): most
# strings hold no split id and skip the full patterns above.
_HINT_OLD = re.compile(r"/[ \t\r\n]{0,2}\d{4}")
_HINT_NEW = re.compile(
    r"\.(?:(?<=\d{4}\.)[ \t\r\n]{1,2}\d{4}|(?<=\d[ \t\r\n]\.)|(?<=\d[ \t\r\n]{2}\.))")


def rejoin_splits(text: str) -> str:
    """``text`` with the spaces PDF extraction put inside arXiv ids removed (a copy for the
    arXiv passes: DOIs are scanned on the text as printed)."""
    if "/" in text and _HINT_OLD.search(text):
        text = _SPLIT_OLD.sub(_join_old, text)
    if "." in text and _HINT_NEW.search(text):
        text = _SPLIT_NEW.sub(_join_new, text)
    return text


_ARCHIVE_BEFORE = re.compile(r"(?<![\w-])([a-z]+(?:-[a-z]+)?)(?:\.[a-z]{2})?/\Z", re.I)


def archive_before(text: str, start: int) -> bool:
    """True when a new-style number at ``start`` follows an archive name: ``astro-ph/0710.3113``."""
    if text[start - 1:start] != "/":
        return False  # (the pattern ends with "/" right before the number)
    m = _ARCHIVE_BEFORE.search(text, max(0, start - 16), start)
    return bool(m and m.group(1).lower() in ARXIV_ARCHIVES)


# What may follow a bare id: the end, a closing bracket, a separator, a full stop, a category.
_AFTER_OK = re.compile(r"\s{0,2}(?:\Z|[\]),;\[]|\.(?!\d))")
# A number right before the comma is a volume or page slot; a year is not.
_NUMBER_END = re.compile(r"\d\Z")
# ... but a year, or a page range (``pp. 423- 515, 0912.4042``), ends the journal reference.
_YEAR_END = re.compile(r"(?<!\d)(?:19|20)\d\d\Z|\(\s?(?:19|20)\d\d[a-z]?\s?\)\Z"
                       r"|\d\s?[-\u2013]\s?\d{1,6}\Z")
_OTHER_PAREN_END = re.compile(r"\)\Z")
# ... and so does a DOI (``..., doi:10.1016/j.physletb.2012.08.020, 1207.7214``).
_DOI_END = re.compile(r"(?<!\S)(?:doi:?\s?|https?://(?:dx\.)?doi\.org/)?10\.\d{4,9}/\S+\Z", re.I)
# Words after which a number is not an arXiv id.
_NOT_ARXIV_WORDS = re.compile(
    r"(?<![a-z])(?:isbn|issn|tel|phone|fax|vol|volume|no|pp|p|pages|doi|report|ref)\.?:?\s{0,2}\Z",
    re.I)


def bare_new_style_plausible(text: str, start: int, end: int) -> bool:
    """May the bare, well-formed new-style number ``text[start:end]`` be read as an arXiv id?

    Only in the slots INSPIRE/HEP and JHEP styles give it: after ``[`` (``[1512.05291]``), or
    after a comma that ends the journal reference (``(2012), 1207.7214``, ``2012, 1207.7214``,
    ``..., title, 2206.02681.``); then followed by an end, bracket, separator or full stop. Not in
    a page slot (``D 93, 1512.05291 (2016)``), after ISBN/tel./vol./pp., and not for a year
    arXiv has not reached."""
    if not 7 <= int(text[start:start + 2]) <= _THIS_YY:
        return False
    if not _AFTER_OK.match(text, end):
        return False
    before = text[max(0, start - 48):start].rstrip()
    if before.endswith("["):
        return True
    if not before.endswith((",", ";")):
        return False
    head = before[:-1].rstrip()
    if _NUMBER_END.search(head) or _OTHER_PAREN_END.search(head):
        return bool(_YEAR_END.search(head) or _DOI_END.search(head))
    return not _NOT_ARXIV_WORDS.search(head)
