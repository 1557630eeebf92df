"""Verification: is candidate work W the work this reference string cites?

Features (all on folded text, rapidfuzz):
- ``title``: the best of (a) ``ratio`` of the parsed title against W's title (compact forms, so
  hyphenation and spacing do not count) and (b) W's title aligned inside the whole string
  (``partial_ratio_alignment``), accepted only when W's title is long enough to be specific and
  the aligned span sits between title boundaries (so "X" does not match "X: a longer title");
- ``author``, ``year``, ``volume``, ``page``, ``venue``: +1 corroborates, -1 contradicts, 0 unknown.

The features go through a logistic model whose weights were fitted on glutton_dev candidate pairs
(``benchmarks/bench_fuzzy.py --fit``): its output is the calibrated probability that W is the
cited work, and that probability is ``score``. A link needs ``score >= LINK_THRESHOLD`` and a
margin over the runner-up (``MARGIN``); otherwise the reference stays unresolved. Notices
(corrections, errata, retractions, replies, comments) that embed the cited title are set aside
unless the string itself names such a notice.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel  # noqa: F401  (documented dependency of fuzz.ratio)

from .model import Work
from .parsing import ParsedReference, compact, fold, norm_text

LINK_THRESHOLD = 0.90
MARGIN = 0.25  # best score minus runner-up score needed to link
MIN_ALIGN_CHARS = 25  # a title aligned inside the raw string must be at least this long
MIN_ALIGN_TOKENS = 4

# Logistic model over ``feature_vector``; fitted on glutton_dev candidate pairs (all top-20
# candidates of every usable reference, label = candidate is the gold work) by Newton's method with
# a small L2 penalty: ``python benchmarks/bench_fuzzy.py --fit``. Refit when features change.
WEIGHTS = {
    "bias": -4.1847,
    "title": 1.1749,
    "title_over_90": -0.2241,
    "title_over_97": -0.5102,
    "title_len": -2.7588,
    "exact_title_len": 1.7094,
    "author": 0.4542,
    "year": 1.0,  # glutton works have no year: a prior, not fitted (same order as page)
    "volume": 0.2978,
    "page": 1.2675,
    "venue": 0.0249,
    "aligned": -1.1580,
    "conflicts": -0.9661,
    "supports": 0.8330,
}

NOTICE_RE = re.compile(
    r"^\s*(?:\[?\s*)?(?:correction|corrigendum|corrigenda|erratum|errata|retraction|retracted|"
    r"expression of concern|notice of retraction|retraction note|reply|response|comment|"
    r"commentary on|author correction|publisher correction|addendum|withdrawn|withdrawal)\b",
    re.I)
NOTICE_WORDS = re.compile(r"\b(?:correction|corrigend\w*|errat\w*|retract\w*|expression of concern|"
                          r"reply|response|comment\w*|addendum|withdraw\w*)\b", re.I)

_TRUNCATED_END = re.compile(r"\b(?:in|of|by|from|the|and|with|for|on|to|a|an)\s*$", re.I)
_NUM = re.compile(r"[A-Za-z]?\d+[A-Za-z]?")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20[0-4]\d)(?!\d)")


@dataclass
class RefView:
    """Everything about one reference string that verification reuses across candidates."""

    parsed: ParsedReference
    soft: str  # folded, whitespace collapsed, punctuation kept
    norm: str  # folded, alphanumerics and single spaces
    tokens: frozenset
    numbers: frozenset
    years: tuple
    title_compact: str
    author_zone: str  # compact text where the authors are
    says_notice: bool

    @classmethod
    def of(cls, parsed: ParsedReference) -> "RefView":
        soft = fold(parsed.text)
        norm = norm_text(parsed.text)
        toks = norm.split()
        title_c = compact(parsed.title) if parsed.title else ""
        if parsed.author_block:
            zone = compact(parsed.author_block)
        else:
            zone = compact(parsed.text[: max(40, len(parsed.text) // 3)])
        return cls(parsed, soft, norm, frozenset(toks),
                   frozenset(m.group(0).lower() for m in _NUM.finditer(parsed.text)),
                   tuple(int(y) for y in _YEAR.findall(parsed.text)), title_c, zone,
                   bool(NOTICE_WORDS.search(parsed.text)))


@dataclass
class Features:
    title: float
    title_len: float
    author: int
    year: int
    volume: int
    page: int
    venue: int
    aligned: int
    notice: bool = False
    detail: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"title": round(self.title, 4), "title_len": round(self.title_len, 3), "author": self.author,
                "year": self.year, "volume": self.volume, "page": self.page, "venue": self.venue,
                "aligned": self.aligned, "notice": self.notice, **self.detail}


@lru_cache(maxsize=1 << 16)
def _work_title_forms(title: str) -> tuple[str, str, int]:
    return fold(title), compact(title), len(norm_text(title).split())


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


def features(ref: RefView, work: Work) -> Features:
    """Compare one reference with one candidate work."""
    title = work.title or ""
    w_soft, w_compact, w_ntok = _work_title_forms(title)
    detail: dict = {}
    t_parse = 0.0
    if ref.title_compact and w_compact:
        t_parse = fuzz.ratio(ref.title_compact, w_compact) / 100.0
    t_align = 0.0
    aligned = 0
    if w_compact and (len(w_compact) >= MIN_ALIGN_CHARS or w_ntok >= MIN_ALIGN_TOKENS):
        al = fuzz.partial_ratio_alignment(w_soft, ref.soft)
        if al is not None:
            t_align = al.score / 100.0
            if not _boundary_ok(ref.soft, al.dest_start, al.dest_end):
                t_align *= 0.85
                detail["align_boundary"] = False
    # a catalog title cut short (markup dropped: "Courtship behavior in "): compare prefixes
    t_prefix = 0.0
    if (title.endswith(" ") or _TRUNCATED_END.search(title)) and ref.title_compact and len(w_compact) >= 8:
        t_prefix = 0.9 * fuzz.ratio(w_compact, ref.title_compact[: len(w_compact)]) / 100.0
        detail["title_prefix"] = round(t_prefix, 4)
    t = max(t_parse, t_prefix)
    if t_align > t:
        t, aligned = t_align, 1
    detail["title_parse"] = round(t_parse, 4)
    detail["title_align"] = round(t_align, 4)

    author = 0
    if work.authors:
        sur = compact(work.authors[0])
        if sur:
            if (len(sur) >= 4 and sur in ref.author_zone) or (sur in ref.tokens and len(sur) < 4 and
                                                               sur in ref.author_zone):
                author = 1
            elif ref.parsed.authors:
                firsts = [compact(a) for a in ref.parsed.authors[:3]]
                if not any(fuzz.ratio(sur, f) >= 80 for f in firsts if f) and sur not in compact(ref.parsed.text):
                    author = -1
    year = 0
    if work.year and ref.years:
        year = 1 if any(abs(work.year - y) <= 1 for y in ref.years) else -1
    volume = 0
    if work.volume:
        v = work.volume.strip().lower()
        if v in ref.numbers:
            volume = 1
        elif ref.parsed.volume and ref.parsed.volume.lower() != v and v.isdigit():
            volume = -1
    page = 0
    if work.first_page:
        p = work.first_page.strip().lower()
        if p in ref.numbers:
            page = 1
        elif ref.parsed.first_page and ref.parsed.first_page.lower() != p and p.isdigit():
            page = -1
    venue = 0
    if work.venue:
        vn = norm_text(work.venue)
        if vn and len(vn) >= 3 and fuzz.partial_ratio(vn, ref.norm) >= 90:
            venue = 1
    notice = bool(NOTICE_RE.search(title)) and not ref.says_notice
    return Features(t, math.log1p(w_ntok), author, year, volume, page, venue, aligned, notice, detail)


def feature_vector(f: Features) -> list[float]:
    """The model's inputs, in WEIGHTS order after the bias. Hinges let the title count more
    as it nears identity; conflicts/supports count the corroborating fields that disagree/agree."""
    corro = (f.author, f.year, f.volume, f.page)
    return [f.title * 10, max(0.0, f.title - 0.9) * 100, max(0.0, f.title - 0.97) * 100, f.title_len,
            f.title_len * (f.title >= 0.97),
            f.author, f.year, f.volume, f.page, f.venue, f.aligned,
            sum(c < 0 for c in corro), sum(c > 0 for c in (*corro, f.venue))]


_W = list(WEIGHTS.values())


def probability(f: Features) -> float:
    """Calibrated probability that the candidate is the cited work (logistic model)."""
    z = _W[0] + sum(w * x for w, x in zip(_W[1:], feature_vector(f)))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
