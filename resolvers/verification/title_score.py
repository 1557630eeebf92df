"""The title score of a candidate work: how well its title stands in a reference string.

The best of: the parsed title against the work's (``ratio`` of compact forms), a cut-short catalog
title's prefix, the same words in another order (``title_order``), a short title standing as a
segment of its own, and the work's title aligned inside the whole string
(``partial_ratio_alignment``), accepted only when the title is long enough to be specific and the
aligned span sits between title boundaries. The first three are cheap (``parsed_title_scores``);
``verify_bound`` bounds the rest before ``title_score`` completes them for the candidates that
can matter.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from rapidfuzz import fuzz

from resolvers.parsing.title_order import SORTED_MIN_WORDS, SORTED_SCALE, window_sorted_score

if TYPE_CHECKING:
    from resolvers.verification.forms import RefView, WorkForms

MIN_ALIGN_CHARS = 25  # a title aligned inside the raw string must be at least this long
MIN_ALIGN_TOKENS = 4


class TitleScores(NamedTuple):
    """The cheap parts of a candidate's title score (``parsed_title_scores``), which ``verify_bound``
    bounds the rest with before ``title_score`` completes them."""

    parse: float  # the parsed title against the work's (``ratio``)
    prefix: float  # a cut-short catalog title's prefix
    sorted: float  # the parsed title's words against the work's, order-free
    common: int  # the work's title words that the string holds


def parsed_title_scores(ref: RefView, w: WorkForms) -> TitleScores:
    """The title score's comparisons of the parsed title (each one ``rapidfuzz`` call)."""
    w_compact = w.compact
    t_parse = 0.0
    if ref.title_compact and w_compact:
        t_parse = fuzz.ratio(ref.title_compact, w_compact) / 100.0
    # a catalog title cut short (markup dropped: "Courtship behavior in "): compare prefixes
    t_prefix = 0.0
    if w.truncated and ref.title_compact and len(w_compact) >= 8:
        t_prefix = 0.9 * fuzz.ratio(w_compact, ref.title_compact[: len(w_compact)]) / 100.0
    # the same title words in another order (a scrambled or re-ordered title): order-free, a
    # little below an identical title so it never counts as one
    t_sorted = 0.0
    if ref.title_sorted and len(w.tokens) >= SORTED_MIN_WORDS and t_parse < SORTED_SCALE:
        t_sorted = SORTED_SCALE * fuzz.ratio(ref.title_sorted, " ".join(sorted(w.tokens))) / 100.0
    return TitleScores(t_parse, t_prefix, t_sorted, len(w.tokens & ref.tokens))


def window_possible(parts: TitleScores, w: WorkForms) -> bool:
    """May the order-free score over the string's runs of words count (``title_score``)?"""
    return parts.sorted < SORTED_SCALE and parts.parse < SORTED_SCALE and w.ntok >= SORTED_MIN_WORDS \
        and len(w.tokens) - parts.common <= 1


def title_segment(ref: RefView, w: WorkForms) -> bool:
    """A title too short to align, a segment of its own where a title stands (APS: "A, Title, Venue 5 (1992)")."""
    return len(w.compact) < MIN_ALIGN_CHARS and w.ntok < MIN_ALIGN_TOKENS and w.compact in ref.title_segments


def align_possible(parts: TitleScores, w: WorkForms) -> bool:
    """Is the work's title long enough to align, with at least half of its words in the string?"""
    return bool(w.compact) and (len(w.compact) >= MIN_ALIGN_CHARS or w.ntok >= MIN_ALIGN_TOKENS) \
        and 2 * parts.common >= len(w.tokens)


def title_score(ref: RefView, w: WorkForms, detail: dict, parts: TitleScores | None = None) -> tuple[float, int]:
    """The title score (the best of the parsed title, a cut-short catalog title's prefix and the
    alignment inside the whole string) and whether the alignment gave it; ``detail`` says which.
    ``parts``: ``parsed_title_scores``, when made already."""
    w_compact = w.compact
    t_parse, t_prefix, t_sorted, _ = parts = parts or parsed_title_scores(ref, w)
    if w.truncated and ref.title_compact and len(w_compact) >= 8:
        detail["title_prefix"] = round(t_prefix, 4)
    if t_sorted > t_parse:
        detail["title_sorted"] = round(t_sorted, 4)
    # the parser could not isolate the title (unquoted, its words shuffled between commas): the
    # same order-free score over the string's runs of as many words as the work's title
    if window_possible(parts, w):
        t_window = window_sorted_score(ref.norm_words, w.tokens, w.ntok, w.soft)
        if t_window > max(t_parse, t_sorted):
            t_sorted = t_window
            detail["title_sorted"] = round(t_sorted, 4)
            detail["title_sorted_window"] = True
    t = max(t_parse, t_prefix, t_sorted)
    if t < 1.0 and title_segment(ref, w):
        t, detail["title_segment"] = 1.0, True
    t_align = 0.0
    aligned = 0
    # The alignment of the work's title inside the whole string is the costly comparison: skipped
    # when the parsed title already equals it, or when under half of its words are in the string
    # (the aligned score could not come near a link then); and it only counts when it beats the
    # title score so far, so rapidfuzz may stop as soon as it cannot (``score_cutoff``: 13 % less
    # alignment time on glutton_dev at 1M works). ``title_align`` is in the evidence when it beat it.
    if t < 1.0 and align_possible(parts, w):
        al = fuzz.partial_ratio_alignment(w.soft, ref.soft, score_cutoff=t * 100)
        if al is not None and al.score > t * 100:
            t_align = al.score / 100.0
            if not _boundary_ok(ref.soft, al.dest_start, al.dest_end):
                t_align *= 0.85
                detail["align_boundary"] = False
            detail["title_align"] = round(t_align, 4)
    if t_align > t:
        t, aligned = t_align, 1
    detail["title_parse"] = round(t_parse, 4)
    return t, aligned


def _boundary_ok(soft: str, start: int, end: int) -> bool:
    """Does the aligned span [start, end) of the raw string start and end where a title does?"""
    # extend to whole words: the alignment may stop a character short
    while end < len(soft) and soft[end].isalnum():
        end += 1
    while start > 0 and soft[start - 1].isalnum():
        start -= 1
    after = soft[end:].lstrip()
    before = soft[:start].rstrip()
    if after[:1] == ":" or re.match(r"-\s*\w", after) or re.match(r"[a-z]{3,}", after):
        return False  # the cited title goes on: "X: subtitle" / "X and more words"
    if before and before[-1].isalnum() and not re.search(r"(?:^|\s)(?:19|20)\d\d[a-z]?$", before):
        return False  # the cited title starts earlier: "Molecular X" for a work titled "X"
    return True
