"""Main's code (5d9ea9f) of the functions session 9 made faster, kept verbatim as the reference the
new code must equal (``tests/test_identifier_back_equal.py``): the agreement check, its title and
field tests, the volume-and-pages shapes of ``lazy_parse`` and ``observation._plain``."""
# ruff: noqa
from __future__ import annotations

import re
from typing import Any, Callable

from rapidfuzz import fuzz

from resolvers.agreement import (_GOES_ON, _WORD, TITLE_CONTRADICTS_BELOW, TITLE_MIN_CHARS, TITLE_PRESENT_AT,
                                 WORDS_MIN, WORDS_SHARED_BELOW, YEAR_EARLY_TOLERANCE, Agreement,
                                 _title_contradicts, _title_words, string_years)
from resolvers.contradiction import (FieldCheck, StringNumbers, _author_verdict, _number_verdict, _venue_verdict,
                                     _year_verdict, fields_contradict, names_venue, MIN_CONTRADICTIONS,
                                     MIN_CONTRADICTIONS_WITH_TITLE)
from resolvers.journal_ref import number_key
from resolvers.lazy_parse import masked_text
from resolvers.model import Reason, Work
from resolvers.parsing import (_BIB_FIELD, _BIBTEX, _COMMA_OR_DIGIT, _LEADING_YEAR, _QUOTED, _QUOTED_SINGLE,
                               _THREE_LETTERS, _TITLE_LEAD, _VENUE_END, _VENUE_LIKE, _VOL_PAGES, _WORD_THEN_NUMBER,
                               _YEAR_RE, ParsedReference, _author_end, _bibtex, _numbers, _sentence_end, _surnames,
                               reference_body)
from resolvers.text import clean_raw, compact, content_words, norm_text, normalise_text
from resolvers.title_signs import title_cut_short
from resolvers.verify import NUMBER_TOKEN, YEAR_TOKEN, number_agreement


def _presence(title: str, low_title: str, text: str) -> tuple[float, bool]:
    """``title_presence`` given the cleaned title (lower case) and the cleaned string."""
    if not low_title or not text:
        return 0.0, False
    if len(low_title) > len(text):
        return fuzz.partial_ratio(text.lower(), low_title), False
    al = fuzz.partial_ratio_alignment(low_title, text.lower())
    if al is None:  # (only with a score cutoff, which is not given)
        return 0.0, False
    goes_on = (al.score >= TITLE_PRESENT_AT and not title_cut_short(title)
               and text[:al.dest_end].rstrip()[-1:] not in (".", "?", "!")
               and bool(_GOES_ON.match(text, al.dest_end)))
    return al.score, goes_on


def check_agreement(raw: str, parsed: ParsedReference, work: Work) -> Agreement:
    """Does the string's own title or year, or else its venue, volume, first page, year and first
    author together (``resolvers.contradiction``), contradict the work an identifier points to?"""
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


def _title_forms(title: str) -> tuple[str, str, str]:
    """A work's title cleaned, cleaned in lower case, and normalised: made once per title while
    it is cited again (a run cites many works many times; a function of the title alone)."""
    clean_title = clean_raw(title)
    return clean_title, clean_title.lower(), norm_text(clean_title) if clean_title else ""


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
def check_fields(raw: str, parsed: ParsedReference, work: Work) -> FieldCheck:
    """Compare venue, volume, first page, year and first author of the string and the work."""
    text = masked_text(parsed, raw)
    numbers = {number_key(m.group(0)) for m in NUMBER_TOKEN.finditer(text)}
    check = FieldCheck()
    check.record("venue", _venue_verdict(work.venue, text, parsed.venue), parsed.venue, work.venue)
    # numbers compared leading zeros aside, as the locator lookups compare them
    check.record("volume", number_agreement((work.volume or "").strip(), numbers, parsed.volume, number_key),
                 parsed.volume, work.volume)
    check.record("first_page", number_agreement((work.first_page or "").strip(), numbers, parsed.first_page,
                                                number_key), parsed.first_page, work.first_page)
    years = [int(y) for y in YEAR_TOKEN.findall(text)]
    check.record("year", _year_verdict(work, years), years, work.year)
    check.record("first_author", _author_verdict(work, parsed, compact(text)),
                 parsed.authors[:1], list(work.authors[:1]))
    return check


def contradicting_fields(raw: str, parsed: ParsedReference, work: Work, strong_title: bool) -> FieldCheck | None:
    """``check_fields`` when its fields contradict the work (``fields_contradict``), else None.
    Most identifier hits agree, so the fields are judged cheapest first (numbers, year, then venue
    and author) and the judging stops as soon as the fields left could no longer make enough
    contradictions; only a string that may contradict is checked in full, for its evidence."""
    needed = MIN_CONTRADICTIONS_WITH_TITLE if strong_title else MIN_CONTRADICTIONS
    text = masked_text(parsed, raw)
    numbers = StringNumbers(text)
    verdicts = (lambda: _number_verdict((work.volume or "").strip(), numbers, lambda: parsed.volume),
                lambda: _number_verdict((work.first_page or "").strip(), numbers, lambda: parsed.first_page),
                lambda: _year_verdict(work, [int(y) for y in YEAR_TOKEN.findall(text)]),
                lambda: _venue_verdict(work.venue, text, parsed.venue),
                lambda: _author_verdict(work, parsed, compact(text)))
    contradicts = agrees = 0
    for judged, verdict in enumerate(verdicts, 1):
        v = verdict()
        contradicts, agrees = contradicts + (v < 0), agrees + (v > 0)
        left = len(verdicts) - judged
        if contradicts + left < needed or contradicts + left <= agrees:
            return None
    check = check_fields(raw, parsed, work)
    return check if fields_contradict(check, strong_title) else None


def _anywhere(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """A volume-and-pages shape of the parser that also matches wherever the parser's own match
    in the tail of the body would be, seen in the whole body: no look-behind (the tail starts
    later), and the end it may meet is any character the tail's ends are stripped of."""
    text = pattern.pattern.replace(r"(?<![\d.])", "").replace(r"(?:\(|$|,|\.)", r"(?:\(|$|[,.;:\s])")
    assert "(?<" not in text and "$|,|" not in text, "parsing._VOL_PAGES changed: revisit lazy_parse"
    return re.compile(text, pattern.flags)


def _plain(value: Any) -> bool:
    """Does orjson write ``value`` as ``canonical_json`` does? Yes for str, int, bool and None,
    and dicts with str keys, lists and tuples of them, and floats that Python's ``repr`` writes
    without an exponent (0, and 1e-4 <= |x| < 1e16: orjson writes 1e-05 as 0.00001); strictly
    these types (a subclass, an Enum, a datetime go to ``default=str``). Its escapes, key order
    (code points) and integers are the encoder's; a lone surrogate or an int past 64 bits makes
    orjson raise, and then the encoder writes it."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if t is float:
        return value == 0.0 or 1e-4 <= abs(value) < 1e16  # (NaN and the infinities: neither)
    if t is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if t is list or t is tuple:
        return all(_plain(v) for v in value)
    return False


VOL_PAGES_ANYWHERE = tuple(_anywhere(p) for p in _VOL_PAGES)


def parse_reference(raw: str) -> ParsedReference:
    """Fields of one reference string. Never raises; missing fields stay None."""
    text = clean_raw(raw or "")
    parsed = ParsedReference(raw=raw, text=text)
    if not text:
        parsed.kind = "empty"
        return parsed
    if _BIBTEX.search(text) or len(_BIB_FIELD.findall(text)) >= 2:
        return _bibtex(text, parsed)
    body = reference_body(text)
    if not body:
        parsed.kind = "identifiers_only"
        return parsed
    years = [(m.start(), int(m.group(1))) for m in _YEAR_RE.finditer(body)]
    rest = body
    start = 0
    q = _QUOTED.search(body) or _QUOTED_SINGLE.search(body)
    if q and len(q.group(1).split()) >= 2:
        parsed.title = q.group(1).strip(" ,.")
        parsed.kind = "quoted"
        parsed.author_block = body[: q.start()].strip(" ,.:") or None
        rest = body[q.end():]
        start = q.end()
    else:
        ends = _author_end(body)
        if ends is not None:
            parsed.author_block = body[: ends[0]].strip(" ,.:")
            if body[ends[0]:ends[1]].startswith(":") and _TITLE_LEAD.fullmatch(parsed.author_block):
                parsed.title_lead = parsed.author_block
            rest = body[ends[1]:]
            start = ends[1]
            rest2 = _LEADING_YEAR.sub("", rest)
            start += len(rest) - len(rest2)
            rest = rest2
            parsed.kind = "after_authors"
        else:
            parsed.kind = "no_authors"
        # a title ends at the first sentence end; a venue abbreviation + numbers is no title
        cut = _sentence_end(rest)
        candidate = rest[:cut].strip(" ,.;:")
        if _VENUE_LIKE.match(candidate) or _VENUE_LIKE.match(rest.strip(" ,.;:")) or not _THREE_LETTERS.search(candidate) or (  # noqa: E501
                parsed.kind == "no_authors" and _WORD_THEN_NUMBER.match(candidate)):
            parsed.kind += "_no_title"
            parsed.venue = _COMMA_OR_DIGIT.split(candidate)[0].strip(" .") or None
        else:
            parsed.title = candidate
            rest = rest[cut:]
            start += cut
    if parsed.author_block:
        parsed.authors = _surnames(parsed.author_block)
    after = [y for pos, y in years if pos >= start - 8] or [y for _, y in years]
    if after:
        parsed.year = after[0]
    tail = rest.strip(" .,;:")
    if tail and parsed.venue is None:
        v = _VENUE_END.split(tail)[0].strip(" ,.;:")
        parsed.venue = v or None
    _numbers(parsed, tail)
    return parsed
