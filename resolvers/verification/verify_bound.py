"""An upper bound of a candidate's score, to leave out the full comparison of candidates that
cannot change the fuzzy outcome.

A reference brings 20 or 40 candidates, most of them nowhere near its best two, and the fuzzy
matcher needs exact scores only for those that decide the outcome and its evidence: the best
eligible one, its runner-up, the best of all. ``refined_bound`` computes the costly title score
(the alignment of the work's title inside the whole string) and the author exactly, takes the
venue at its best (its fuzzy comparison is left out) and scores that with
``verify.probability``; ``verify.features`` then reuses the title score. A candidate's real
score is never above its bound (tests/test_verify_bound.py checks it on glutton dev strings),
so ``fuzzy`` compares in full only the candidates whose bound reaches the scores that decide:
on glutton dev against 1M works about one candidate in nine, with the same outcomes and evidence.

The bound relies on the fitted model's shape: the score rises with the venue feature (its own
weight and the ``supports`` count; ``verify.WEIGHTS``, checked by the test).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from rapidfuzz.distance import LCSseq

from resolvers.model import Work
from resolvers.parsing.title_order import SORTED_SCALE
from resolvers.verification.forms import RefView, WorkForms
from resolvers.verification.title_score import (
    TitleScores,
    align_possible,
    parsed_title_scores,
    title_score,
    title_segment,
    window_possible,
)
from resolvers.verification.verify import (
    PREPRINT_TYPES,
    PREPRINT_YEARS_LATER,
    author_agreement,
    number_agreement,
    probability_of,
    year_agreement,
)


def view_for(ref: RefView, w: WorkForms) -> RefView:
    """The view ``verify.features`` compares with this work: the string read with its lone lead
    "author" as the head of the title when the work's title starts with it."""
    if ref.lead and ref.lead_as_title is not None and w.compact.startswith(ref.lead):
        return ref.lead_as_title
    return ref


def is_notice(ref: RefView, w: WorkForms) -> bool:
    """``verify.features(...).notice``, without the rest of the comparison."""
    ref = view_for(ref, w)
    return (w.notice and not ref.says_notice) or (ref.cites_notice and not w.notice)


def _venue_bound(ref: RefView, w: WorkForms) -> int:
    """1 when ``verify.features`` may find the venue (its cheap pre-test passes), else 0."""
    vn = w.venue
    return 1 if vn and len(vn) >= 3 and not ref.tokens.isdisjoint(w.venue_tokens) else 0


class TitleScore(NamedTuple):
    """``title_score.title_score``'s answer for one candidate, for ``verify.features`` (``title``)."""

    title: float
    aligned: int
    detail: dict


def _others(view: RefView, work: Work, w: WorkForms) -> tuple[int, int, int, int, int]:
    """The features but the title's, as ``verify.features`` makes them (the venue at its best)."""
    parsed = view.parsed
    year = year_agreement(work.year, view.years, PREPRINT_YEARS_LATER if work.type in PREPRINT_TYPES else 1)
    return (author_agreement(view, w.surname), year, number_agreement(w.volume, view.numbers, parsed.volume),
            number_agreement(w.page, view.numbers, parsed.first_page), _venue_bound(view, w))


TITLE_PEAK = 0.97  # the title score at which a candidate's score is highest (``_best_title``)


class Bound(NamedTuple):
    """``cheap_bound``'s answer: the bound, and what ``refined_bound`` goes on from."""

    bound: float
    parts: TitleScores  # the parsed title's scores (``title_score.parsed_title_scores``)
    others: tuple[int, int, int, int, int]


def cheap_bound(ref: RefView, work: Work, w: WorkForms) -> Bound:
    """A bound of ``refined_bound`` without its costly comparisons: the parsed title's scores
    exact, the order-free score over the string's words at its best (``SORTED_SCALE``), and the
    alignment of the work's title inside the string at most what their longest common
    subsequence allows (``_align_most``). The title is then taken where the score is highest
    within those bounds (``_best_title``)."""
    view = view_for(ref, w)
    parts = parsed_title_scores(view, w)
    lo = hi = max(parts.parse, parts.prefix, parts.sorted)
    if window_possible(parts, w):
        hi = max(hi, SORTED_SCALE)
    if hi < 1.0 and title_segment(view, w):
        lo = hi = 1.0
    if lo < 1.0 and hi < TITLE_PEAK and align_possible(parts, w):  # (past the peak a higher end changes nothing)
        hi = max(hi, _align_most(w.soft, view.soft))
    others = _others(view, work, w)
    title_len = math.log1p(w.ntok)
    bound = probability_of(_best_title(lo, hi), title_len, *others, 0)  # aligned=0: its weight is negative
    if lo == 0.0 and view.parsed.kind.endswith("_no_title"):  # the title length may not count
        bound = max(bound, probability_of(0.0, 0.0, *others, 0))
    return Bound(bound, parts, others)


def _best_title(lo: float, hi: float) -> float:
    """Where in [lo, hi] the title gives the highest score: the score rises with the title up to
    0.97 (where the exact-title weight adds on) and falls after (``verify.WEIGHTS``; the test
    checks this shape)."""
    return min(max(TITLE_PEAK, lo), hi)


def _align_most(title: str, string: str) -> float:
    """At most ``fuzz.partial_ratio(title, string) / 100``: the shorter text (length m) is
    compared with substrings of the longer, each of length at most m, and a substring has no more
    in common with it than the whole longer text (L, their longest common subsequence), so
    ``2 min(l, L) / (m + l)`` over the lengths l is at most ``2 L / (m + L)``."""
    m = min(len(title), len(string))
    common = LCSseq.similarity(title, string)
    return 2 * common / (m + common) if m + common else 1.0


def refined_bound(ref: RefView, work: Work, w: WorkForms, cheap: Bound | None = None) -> tuple[float, TitleScore]:
    """A score ``verify.probability(verify.features(ref, work, w))`` never exceeds: every feature
    as ``features`` makes it but the venue, taken at its best; and the title score, which
    ``features`` takes instead of computing it again. ``cheap``: ``cheap_bound``'s answer."""
    view = view_for(ref, w)
    detail: dict = {}
    t, aligned = title_score(view, w, detail, cheap.parts if cheap else None)
    others = cheap.others if cheap else _others(view, work, w)
    title_len = 0.0 if (t == 0.0 and view.parsed.kind.endswith("_no_title")) else math.log1p(w.ntok)
    return probability_of(t, title_len, *others, aligned), TitleScore(t, aligned, detail)
