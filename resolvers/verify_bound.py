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

from .model import Work
from .verify import (PREPRINT_TYPES, PREPRINT_YEARS_LATER, Features, RefView, WorkForms, _author_agreement,
                     _title_score, number_agreement, probability, year_agreement)


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
    """``verify._title_score``'s answer for one candidate, for ``verify.features`` (``title``)."""

    title: float
    aligned: int
    detail: dict


def refined_bound(ref: RefView, work: Work, w: WorkForms) -> tuple[float, TitleScore]:
    """A score ``verify.probability(verify.features(ref, work, w))`` never exceeds: every feature
    as ``features`` makes it but the venue, taken at its best; and the title score, which
    ``features`` takes instead of computing it again."""
    view = view_for(ref, w)
    detail: dict = {}
    t, aligned = _title_score(view, w, detail)
    year = year_agreement(work.year, view.years, PREPRINT_YEARS_LATER if work.type in PREPRINT_TYPES else 1)
    volume = number_agreement(w.volume, view.numbers, view.parsed.volume)
    page = number_agreement(w.page, view.numbers, view.parsed.first_page)
    title_len = 0.0 if (t == 0.0 and view.parsed.kind.endswith("_no_title")) else math.log1p(w.ntok)
    f = Features(t, title_len, _author_agreement(view, w.surname), year, volume, page, _venue_bound(view, w), aligned)
    return probability(f), TitleScore(t, aligned, detail)
