"""The metadata agreement check of an identifier hit: does the string's own title or year, or
else its venue, volume, first page, year and first author together (``resolvers.verification.contradiction``),
contradict the work the identifier points to? (``verified_exact`` or ``metadata_mismatch``.)

It runs on every reference an identifier settles, so each text form is made once per check
(the cleaned string is the parser's own ``parsed.text``), and a test that cannot change the
outcome is not run: the title-word and title-similarity tests only when the work's title is
not plainly in the string, the venue words of a parsed title only as far as ``all`` needs.
The evidence is the same as when every test ran (``tests/test_bytes_unchanged.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from rapidfuzz import fuzz

from resolvers.model import Reason, Work
from resolvers.parsing.fields import ParsedReference
from resolvers.parsing.text import (
    ASCII_NON_ALNUM_TO_SPACE,
    STOPWORDS,
    clean_raw,
    content_words,
    norm_text,
    normalise_text,
)
from resolvers.parsing.title_signs import title_cut_short
from resolvers.verification.contradiction import contradicting_fields, names_venue

# A string's title "clearly belongs to another work" only when it is long enough to judge and
# hardly resembles the work's title; the work's title appearing in the string always wins.
TITLE_MIN_CHARS = 20
TITLE_CONTRADICTS_BELOW = 65.0
TITLE_PRESENT_AT = 90.0
# Title words (four letters or more, not function words) of the work that the string must share
# when it is long enough to hold a title: below this share, the string names another work.
WORDS_MIN = 3
WORDS_SHARED_BELOW = 0.3
# Citing a work years before it existed is a contradiction; a later year is not (journal
# versions of preprints, reprints, online-first dates).
YEAR_EARLY_TOLERANCE = 1

# A four-digit year, not part of a longer number or a decimal ("0704.2007" is no year; "2007." is)
_YEAR = re.compile(r"(?<!\d)(?<!\d\.)(1[6-9]\d\d|20\d\d)(?!\d)(?!\.\d)")
_GOES_ON = re.compile(r"[\w-]*\s+(?:[a-z][a-z-]{2,})\b")  # the rest of a word, then a lower-case word
_WORD = re.compile(r"[^\W\d_]{4,}")


def title_presence(title: str, raw: str) -> tuple[float, bool]:
    """How well the work's title stands in the string (``partial_ratio`` of the best span), and
    whether the string carries on past it with more title words: lower-case words with no
    sentence end between ("Deep learning" in "Deep learning for protein structure prediction"),
    which makes the string's title another, longer one. Capitalised text after it (a journal,
    "Vis. Cogn.", a Latin name) does not prolong it, nor a catalog title that itself looks cut
    short ("Courtship behavior in")."""
    return _presence(title, clean_raw(title).lower(), clean_raw(raw))


def _presence(title: str, low_title: str, text: str) -> tuple[float, bool]:
    """``title_presence`` given the cleaned title (lower case) and the cleaned string. A title
    that stands in the string once, letter for letter, is the alignment ``partial_ratio`` finds
    (100 is only an exact copy, and there is one), so rapidfuzz is asked only otherwise."""
    if not low_title or not text:
        return 0.0, False
    if len(low_title) > len(text):
        return fuzz.partial_ratio(text.lower(), low_title), False
    low = text.lower()
    at = low.find(low_title)
    if at >= 0 and low.find(low_title, at + 1) < 0:
        score, end = 100.0, at + len(low_title)
    else:
        al = fuzz.partial_ratio_alignment(low_title, low)
        if al is None:  # (only with a score cutoff, which is not given)
            return 0.0, False
        score, end = al.score, al.dest_end
    goes_on = (score >= TITLE_PRESENT_AT and not _cut_short(title)
               and text[:end].rstrip()[-1:] not in (".", "?", "!")
               and bool(_GOES_ON.match(text, end)))
    return score, goes_on


_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_CUT_WORDS = frozenset({"in", "of", "by", "from", "the", "and", "with", "for", "on", "to", "a", "an", "at", "as",
                        "via"})


def _cut_short(title: str) -> bool:
    """``title_cut_short(title)``, without its regex for a title ending in two ASCII letters
    that end no function word: no ending of ``TRUNCATED_END`` can match there (a letter after
    a letter, no space, separator or non-ASCII character, and the last word no word of its
    list)."""
    if title[-2:-1] in _ASCII_LETTERS and title[-1:] in _ASCII_LETTERS:
        head = title.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        before = head[-1:]
        if before.isascii() and (title[len(head):].lower() not in _CUT_WORDS or before.isalnum() or before == "_"):
            return False
    return title_cut_short(title)


def _title_words(raw: str) -> set[str]:
    """Lower-case words of four letters or more, function words aside: title material."""
    return {w for w in _WORD.findall(raw) if w.islower() and w not in STOPWORDS}


def string_years(raw: str) -> list[int]:
    return [int(y) for y in _YEAR.findall(raw)]


@dataclass(frozen=True, slots=True)
class Agreement:
    contradicts: bool
    reason: Reason | None
    details: dict[str, Any]


def _title_contradicts(details: dict[str, Any], work: Work, parsed_title: str | None, **why: Any) -> Agreement:
    """The evidence of a title contradiction names both sides: the work's title and the string's."""
    details.update(work_title=work.title, **why)
    if parsed_title:
        details["string_title"] = parsed_title
    return Agreement(True, Reason.TITLE_CONTRADICTS, details)


def check_agreement(raw: str, parsed: ParsedReference, work: Work) -> Agreement:
    """Does the string's own title or year, or else its venue, volume, first page, year and first
    author together (``resolvers.verification.contradiction``), contradict the work an identifier points to?"""
    text = parsed.text if parsed.raw == raw else clean_raw(raw or "")  # the string cleaned, once
    _, low_title, work_title = _title_forms(work.title) if work.title else ("", "", "")
    agreement = _title_year_agreement(raw, text, lambda: _string_title(parsed, work), parsed.year, work,
                                      low_title, work_title)
    if agreement.contradicts:
        return agreement
    details = agreement.details
    strong_title = bool(work.title) and len(work_title) >= TITLE_MIN_CHARS and \
        details.get("work_title_in_string", 0.0) >= TITLE_PRESENT_AT
    check = contradicting_fields(raw, parsed, work, strong_title)
    if check is not None:
        details.update(contradicting_fields=check.details, agreeing_fields=check.agrees,
                       work_title=work.title)
        if parsed.title:
            details["string_title"] = parsed.title
        return Agreement(True, Reason.FIELDS_CONTRADICT, details)
    return agreement


@lru_cache(maxsize=1 << 14)  # (some 10 MB at most)
def _title_forms(title: str) -> tuple[str, str, str]:
    """A work's title cleaned, cleaned in lower case, and normalised: made once per title while
    it is cited again (a run cites many works many times; a function of the title alone). An
    ASCII title is normalised here as ``norm_text`` does it (its folding is ``lower``)."""
    clean_title = clean_raw(title)
    low_title = clean_title.lower()
    if clean_title.isascii():
        return clean_title, low_title, " ".join(low_title.translate(ASCII_NON_ALNUM_TO_SPACE).split())
    return clean_title, low_title, norm_text(clean_title) if clean_title else ""


def _string_title(parsed: ParsedReference, work: Work) -> str | None:
    """The string's own title: none when the parser took the work's venue for one (a title-less
    string has no title to contradict). Asked only by the tests that read it, so a string whose
    identifier settles it is parsed no further than those tests need (``lazy_parse``)."""
    return None if names_venue(parsed.title, work.venue) else parsed.title


def _title_year_agreement(raw: str, text: str, string_title: Callable[[], str | None], parsed_year: int | None,
                          work: Work, low_title: str, work_title: str) -> Agreement:
    """Does the string's own title or year contradict the work? (``text``: the cleaned string;
    ``low_title``, ``work_title``: the work's title cleaned in lower case, and normalised.)"""
    details: dict[str, Any] = {}
    if work_title:
        present, goes_on = _presence(work.title or "", low_title, text)
        details["work_title_in_string"] = round(present, 1)
        if goes_on:
            return _title_contradicts(details, work, string_title(),
                                      why="the string's title goes on past the work's title")
        if present < TITLE_PRESENT_AT:  # the tests below can only speak when the title is not plainly there
            contradiction = _title_absent(details, raw, text, string_title(), work, work_title)
            if contradiction is not None:
                return contradiction
    if parsed_year and work.year:
        details["string_year"], details["work_year"] = parsed_year, work.year
        # The parser's year may be a number of the title ("Supernova 1987A", "PNLD 2012"): the
        # string contradicts the work only if no year it gives is possible for the work.
        if parsed_year < work.year - YEAR_EARLY_TOLERANCE and \
                not any(y >= work.year - YEAR_EARLY_TOLERANCE for y in string_years(raw)):
            details["year_tolerance"] = YEAR_EARLY_TOLERANCE
            return Agreement(True, Reason.YEAR_CONTRADICTS, details)
    return Agreement(False, None, details)


def _title_absent(details: dict[str, Any], raw: str, text: str, parsed_title: str | None, work: Work,
                  work_title: str) -> Agreement | None:
    """The title tests of a string that does not plainly hold the work's title: one with title
    words of its own (lower-case words; names and journal abbreviations are capitalised) that
    holds almost none of the work's title words names another work, whatever the parser made of
    it; so does a parsed title of its own that hardly resembles the work's."""
    work_words = content_words(work_title)
    if len(work_words) >= WORDS_MIN and len(_title_words(raw)) >= 2 * WORDS_MIN:
        shared = len(work_words & content_words(norm_text(text))) / len(work_words)
        details["work_title_words_in_string"] = round(shared, 2)
        if shared < WORDS_SHARED_BELOW:
            return _title_contradicts(details, work, parsed_title, threshold_words_shared=WORDS_SHARED_BELOW)
    title = normalise_text(parsed_title)
    if title and len(title) >= TITLE_MIN_CHARS:
        sim = fuzz.token_sort_ratio(title, work_title)
        details["title_similarity"] = round(sim, 1)
        if sim < TITLE_CONTRADICTS_BELOW:
            return _title_contradicts(details, work, parsed_title, threshold=TITLE_CONTRADICTS_BELOW)
    return None
