"""The fuzzy matcher compares in full only the candidates that can decide its outcome
(``resolvers.verification.verify_bound``): the same outcomes and evidence as comparing every candidate, on
glutton dev strings against the shared works."""
import dataclasses
import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from resolvers.candidates import fuzzy
from resolvers.candidates.fuzzy import FuzzyResolver
from resolvers.candidates.retrieval import InMemoryRetriever
from resolvers.model import Work
from resolvers.parsing.fields import parse_reference
from resolvers.parsing.quality import parse_uncertain_reason
from resolvers.verification import verify
from resolvers.verification.forms import RefView
from resolvers.verification.verify import features, probability
from resolvers.verification.verify_bound import TITLE_PEAK, Bound, _align_most, cheap_bound, is_notice, refined_bound

SOURCES = Path(__file__).resolve().parent.parent / "data" / "sources"
GLUTTON_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "refs" / "glutton_dev.jsonl.gz"


@pytest.fixture(scope="module")
def matcher_and_strings():
    if not GLUTTON_DEV.exists():
        pytest.skip("glutton dev strings not available")
    with gzip.open(SOURCES / "glutton_works.jsonl.gz", "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    works = [Work(f"doi:{r['doi']}", doi=r["doi"], title=r.get("title"), authors=tuple(r.get("authors") or ()),
                  year=r.get("year"), venue=r.get("venue"), volume=r.get("volume"), first_page=r.get("first_page"))
             for r in rows if r.get("doi")]
    with gzip.open(GLUTTON_DEV, "rt", encoding="utf-8") as fh:
        raws = [json.loads(line)["raw"] for _, line in zip(range(600), fh)]
    parsed = [p for p in map(parse_reference, raws) if parse_uncertain_reason(p.text, p, False) is None]
    return FuzzyResolver(InMemoryRetriever(works), cache_size=0), parsed


def _every_candidate_compared(monkeypatch):
    """The matcher as it was: every candidate's bounds at 1, so each is compared in full."""
    monkeypatch.setattr(fuzzy, "cheap_bound", lambda ref, work, w: Bound(1.0, None, ()))
    monkeypatch.setattr(fuzzy, "refined_bound", lambda ref, work, w, cheap=None: (1.0, None))


def _counting_features(monkeypatch):
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return verify.features(*args, **kwargs)
    monkeypatch.setattr(fuzzy, "features", counted)
    return calls


def test_outcomes_are_those_of_comparing_every_candidate(matcher_and_strings, monkeypatch):
    matcher, parsed = matcher_and_strings
    calls = _counting_features(monkeypatch)
    pruned = [dataclasses.astuple(o) for o in matcher.match_batch(parsed)]
    compared = len(calls)
    _every_candidate_compared(monkeypatch)
    calls.clear()
    assert [dataclasses.astuple(o) for o in matcher.match_batch(parsed)] == pruned
    assert compared < 0.5 * len(calls)  # most candidates are never compared in full


def test_no_candidate_scores_above_its_bound(matcher_and_strings):
    matcher, parsed = matcher_and_strings
    seen = 0
    for p, cands in zip(parsed, matcher.retriever.candidates_batch([fuzzy.string_queries(p)[1] for p in parsed])):
        ref = RefView.of(p)
        for c in cands:
            w = verify.work_forms(c.work)
            cheap = cheap_bound(ref, c.work, w)
            bound, title = refined_bound(ref, c.work, w)
            assert refined_bound(ref, c.work, w, cheap) == (bound, title)
            f = features(ref, c.work, w)
            assert probability(f) <= bound <= cheap.bound
            assert features(ref, c.work, w, title) == f and f.notice == is_notice(ref, w)
            seen += 1
    assert seen > 5000


def test_the_bound_takes_the_venue_at_its_best():
    """The bound sets the venue feature to 1 where its cheap test passes: that must not lower the
    score, so the venue's weight and the calibration's slope must both be positive (a refit that
    made either negative would turn the bound into a lower bound)."""
    assert verify.WEIGHTS["venue"] > 0 and verify.WEIGHTS["supports"] >= 0 and verify.PLATT[0] > 0


def test_the_cheap_bound_takes_the_title_where_it_scores_best():
    """``cheap_bound`` knows the title only within [lo, hi] and takes it at ``TITLE_PEAK`` (or the
    end nearest it), with ``aligned`` at 0 and the full title length: the weights must give that
    shape (the score rises to the peak and falls after it; the alignment and the title length
    only lower it), or the bound would not be one."""
    rest = (1, 1, 0, 1, 1)  # author, year, volume, page, venue
    for title_len in (0.0, 1.5, 3.0):
        ts = [i / 200 for i in range(201)]
        scores = [verify.probability_of(t, title_len, *rest, 0) for t in ts]
        peak = scores[ts.index(TITLE_PEAK)]
        assert max(scores) == peak
        assert all(a <= b for a, b in zip(scores, scores[1:ts.index(TITLE_PEAK) + 1]))
        assert all(a >= b for a, b in zip(scores[ts.index(TITLE_PEAK):], scores[ts.index(TITLE_PEAK) + 1:]))
    assert verify.WEIGHTS["aligned"] <= 0 and verify.WEIGHTS["title_len"] + verify.WEIGHTS["exact_title_len"] <= 0


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcde fg:.-", max_size=90), st.text(alphabet="abcde fg:.-", max_size=160))
def test_the_alignment_bound_is_never_below_the_alignment(title, string):
    """``_align_most`` (from the longest common subsequence) bounds ``partial_ratio`` from above,
    whichever text is the longer, for any texts (few letters: many near alignments)."""
    assert fuzz.partial_ratio(title, string) / 100.0 <= _align_most(title, string) + 1e-12
