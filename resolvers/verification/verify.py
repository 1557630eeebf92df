"""Verification: is candidate work W the work this reference string cites?

Features (all on folded text, rapidfuzz):
- ``title``: the best of (a) ``ratio`` of the parsed title against W's title (compact forms, so
  hyphenation and spacing do not count) and (b) W's title aligned inside the whole string
  (``partial_ratio_alignment``), accepted only when W's title is long enough to be specific and
  the aligned span sits between title boundaries (so "X" does not match "X: a longer title");
- ``author``, ``year``, ``volume``, ``page``, ``venue``: +1 corroborates, -1 contradicts, 0 unknown.

The features go through a logistic model whose weights were fitted on glutton_dev candidate pairs
(``benchmarks/bench_fuzzy.py --fit``), then a Platt stage fitted on each reference's top
candidate: its output is the calibrated probability that W is the cited work, and that
probability is ``score`` (reliability table: ``bench_fuzzy.py --calibration``). A link
needs ``score >= LINK_THRESHOLD`` and a margin over the runner-up (``MARGIN``); otherwise the
reference stays unresolved. Notices
(corrections, errata, retractions, replies, comments) that embed the cited title are set aside
unless the string itself names such a notice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Container, Sequence

from rapidfuzz import fuzz

from resolvers.model import Work
from resolvers.parsing.text import VENUE_TOKEN_MIN_CHARS, compact, fold, fold_arrow, norm_arrow, norm_text, ocr_skeleton
from resolvers.parsing.title_parts import names_another_part
from resolvers.parsing.title_signs import NOTICE_RE, NOTICE_WORDS, TRUNCATED_END, TRUNCATED_PATTERN, title_cut_short  # noqa: F401
from resolvers.verification.forms import RefView, WorkForms
from resolvers.verification.title_score import title_score

LINK_THRESHOLD = 0.90
MARGIN = 0.25  # best score minus runner-up score needed to link ...
LOGIT_MARGIN = 4.0  # ... or this much more log-odds (the best is e^4 ~ 55 times likelier by odds)

# Logistic model over ``feature_vector``; fitted on glutton_dev candidate pairs (all top-20
# candidates of every usable reference, label = candidate is the gold work) by Newton's method with
# a small L2 penalty: ``python benchmarks/bench_fuzzy.py --fit``. Refit when features change.
WEIGHTS = {
    "bias": -4.8863,
    "title": 1.1787,
    "title_over_90": -0.0351,
    "title_over_97": -0.6088,
    "title_len": -3.0363,
    "exact_title_len": 1.6872,
    "author": 1.4936,
    "year": 1.0,  # glutton works have no year: a prior, not fitted (same order as page)
    "volume": 0.2917,
    "page": 1.8325,
    "venue": 2.7112,
    "aligned": -0.2469,
    "conflicts": -1.1202,
    "supports": 0.0962,
}
# Second stage (Platt scaling), fitted on the top candidate of each reference: score =
# sigmoid(PLATT[0] * z + PLATT[1]) where z is the pair model's logit. Refit with WEIGHTS.
PLATT = (0.8542, 1.0546)

AUTHOR_SIMILAR_AT = 80.0  # a parsed surname this close (rapidfuzz ratio) to the work's is the same name


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


_FORMS: dict = {}
_FORMS_MAX = 1 << 16  # about 2.5 KB each: 65,536 forms hold a batch of 2,000 references' candidates in 160 MB


def _key(w: Work) -> tuple:
    """Cache key: the fields the forms are made of (cheaper to hash than the whole Work)."""
    return (w.work_id, w.title, w.authors[:1], w.venue, w.volume, w.first_page)


# RE2 (Arrow) spellings of TRUNCATED_END (plus a trailing space) and NOTICE_RE
_TRUNCATED_END_RE2 = TRUNCATED_PATTERN
_NOTICE_RE2 = ("(?i)" + NOTICE_RE.pattern)


def form_columns(titles, venues, surnames) -> dict:
    """The text forms of many works at once, as Arrow arrays (Arrow kernels for the folding: per
    work in Python it is most of verification's cost on a large catalog). ``surnames``: each
    work's first-author family name (``surname``). The catalog's blocking index stores these
    columns for every work (``citeledger.index.blocking``); ``prepare_forms`` makes them for works from
    elsewhere. Either way ``forms_from_columns`` turns them into ``WorkForms`` equal to
    ``work_forms`` one by one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from resolvers.parsing.text_arrow import per_distinct  # (Arrow kernels: loaded by the callers of this only)

    def arrow(values):
        if not isinstance(values, (pa.Array, pa.ChunkedArray)):
            return pa.array(values, pa.string())
        return values if pa.types.is_string(values.type) else values.cast(pa.string())  # e.g. an all-null column

    def folded(values):
        return fold_arrow(arrow(values))

    raw = pc.fill_null(arrow(titles), "")
    soft = folded(raw)
    return {
        "f_soft": soft,
        "f_norm": norm_arrow(soft),
        "f_truncated": pc.match_substring_regex(raw, _TRUNCATED_END_RE2),
        "f_notice": pc.match_substring_regex(raw, _NOTICE_RE2),
        "f_surname": per_distinct(lambda v: pc.replace_substring_regex(folded(v), r"[^a-z0-9]+", ""), arrow(surnames)),
        "f_venue": per_distinct(lambda v: norm_arrow(folded(v)), arrow(venues)),
    }


FORM_COLUMNS = ("f_soft", "f_norm", "f_truncated", "f_notice", "f_surname", "f_venue")


def forms_from_columns(cols: dict, volumes, pages) -> list[WorkForms]:
    """``WorkForms`` from ``form_columns`` output converted to Python lists (plus each work's
    volume and first page)."""
    out = []
    venue_tokens: dict[str, tuple] = {}  # works share venues: each venue's words made once
    for so, no, tr, nt, su, vn, vol, pg in zip(cols["f_soft"], cols["f_norm"], cols["f_truncated"],
                                               cols["f_notice"], cols["f_surname"], cols["f_venue"], volumes, pages):
        ntoks = no.split()
        vtoks = venue_tokens.get(vn)
        if vtoks is None:
            vtoks = venue_tokens[vn] = _venue_tokens(vn)
        out.append(WorkForms(so, no.replace(" ", ""), len(ntoks), frozenset(ntoks), tr, su,
                             vol.strip().lower() if vol else "", pg.strip().lower() if pg else "", vn, vtoks, nt))
    return out


def _venue_tokens(venue_norm: str) -> tuple:
    """A venue's words a verifier compares (all of them when none is long enough)."""
    words = venue_norm.split()
    return tuple(t for t in words if len(t) >= VENUE_TOKEN_MIN_CHARS) or tuple(words)


def prepare_forms(works) -> None:
    """Fill the cache that ``work_forms`` reads for many works at once (``form_columns``)."""
    keyed = {}
    for w in works:
        k = _key(w)
        if k not in _FORMS:
            keyed[k] = w
    if len(keyed) < 64:
        return
    todo = list(keyed.values())
    if len(_FORMS) + len(todo) >= _FORMS_MAX:
        _FORMS.clear()
    arrays = form_columns([w.title or "" for w in todo], [w.venue or "" for w in todo],
                          [surname(w.authors[0]) if w.authors else "" for w in todo])
    forms = forms_from_columns({k: v.to_pylist() for k, v in arrays.items()},
                               [w.volume for w in todo], [w.first_page for w in todo])
    _FORMS.update(zip(keyed, forms))


def work_forms(work: Work) -> WorkForms:
    forms = _FORMS.get(_key(work))
    if forms is None:
        if len(_FORMS) >= _FORMS_MAX:
            _FORMS.clear()
        title = work.title or ""
        ntoks = norm_text(title).split()
        vn = norm_text(work.venue) if work.venue else ""
        forms = _FORMS[_key(work)] = WorkForms(
            fold(title), compact(title), len(ntoks), frozenset(ntoks),
            title_cut_short(title),
            compact(surname(work.authors[0])) if work.authors else "",
            (work.volume or "").strip().lower(), (work.first_page or "").strip().lower(),
            vn, tuple(t for t in vn.split() if len(t) >= VENUE_TOKEN_MIN_CHARS) or tuple(vn.split()),
            bool(NOTICE_RE.search(title)))
    return forms


PREPRINT_TYPES = frozenset({"preprint", "posted-content"})
PREPRINT_YEARS_LATER = 3
_NAME_SUFFIX = frozenset({"jr", "sr", "ii", "iii", "iv"})


def surname(name: str) -> str:
    """The family name of a catalog author: "Ileana Streinu" -> "Streinu", "Curie, Marie" ->
    "Curie", "Classen" -> "Classen" (catalogs give full names, surnames, or "Family, Given")."""
    name = name.strip()
    if "," in name:
        return name.split(",", 1)[0].strip()
    parts = name.split()
    while len(parts) > 1 and parts[-1].rstrip(".").lower() in _NAME_SUFFIX:
        parts.pop()
    return parts[-1] if parts else ""


def number_agreement(value: str | None, numbers: Container[str], parsed: str | None,
                     norm: Callable[[str], str] | None = None) -> int:
    """+1 when the work's volume (or first page) is among the string's numbers, -1 when the
    parser read a different one for that field, 0 when the string says nothing about it. ``norm``
    brings both sides to the form ``numbers`` holds (None: ``value`` is already lower case)."""
    if not value:
        return 0
    v = norm(value) if norm else value
    if v in numbers:
        return 1
    if parsed and (norm(parsed) if norm else parsed.lower()) != v and value.isdigit():
        return -1
    return 0


def year_agreement(work_year: int | None, years: Sequence[int], late: int, early: int = 1) -> int:
    """+1 a year of the string lies from ``early`` years before the work's to ``late`` years
    after it (online before print; a preprint cited by its journal year), -1 the string's years
    all lie outside, 0 either side has none."""
    if not work_year or not years:
        return 0
    return 1 if any(work_year - early <= y <= work_year + late for y in years) else -1


def features(ref: RefView, work: Work, forms: WorkForms | None = None,
             title: tuple[float, int, dict] | None = None) -> Features:
    """Compare one reference with one candidate work (``forms``: its comparison forms, when the
    retriever brought them along; ``title``: ``title_score``'s answer, when already known)."""
    w = forms if forms is not None else work_forms(work)
    detail: dict = {}
    if ref.lead and ref.lead_as_title is not None and w.compact.startswith(ref.lead):
        ref = ref.lead_as_title  # the lone "author" before the colon is the head of this work's title
        detail["title_lead"] = True
    t, aligned = title_score(ref, w, detail) if title is None else (title[0], title[1])
    if title is not None:
        detail.update(title[2])
    if names_another_part(work.title, ref.parsed.text):
        detail["names_another_part"] = True  # "... corals. IV." for a string citing "... corals. III."
    author = author_agreement(ref, w.surname)
    # a preprint is often cited by the year of its journal version, a few years on
    year = year_agreement(work.year, ref.years, PREPRINT_YEARS_LATER if work.type in PREPRINT_TYPES else 1)
    volume = number_agreement(w.volume, ref.numbers, ref.parsed.volume)
    page = number_agreement(w.page, ref.numbers, ref.parsed.first_page)
    venue = 0
    vn = w.venue
    # a venue none of whose words is in the string cannot match at 90 (cheap test first)
    if vn and len(vn) >= 3 and not ref.tokens.isdisjoint(w.venue_tokens) \
            and fuzz.partial_ratio(vn, ref.norm) >= 90:
        venue = 1
    notice = (w.notice and not ref.says_notice) or (ref.cites_notice and not w.notice)
    # A string the parser read as title-less (physics style "Phys. Rev. D 74, 034503 (2006)") says
    # nothing about the title: the work's title length then weighs neither way.
    title_len = 0.0 if (t == 0.0 and ref.parsed.kind.endswith("_no_title")) else math.log1p(w.ntok)
    if title_len == 0.0 and w.ntok:
        detail["title_less_reference"] = True
    return Features(t, title_len, author, year, volume, page, venue, aligned, notice, detail)


def author_agreement(ref: RefView, sur: str) -> int:
    """1: the work's first-author surname is in the author zone as printed; -1: the string's first
    authors are known and none is near it (nor its ``ocr_skeleton``); 0: nothing to say."""
    author = 0
    if sur:
        if (len(sur) >= 4 and sur in ref.author_zone) or (sur in ref.tokens and len(sur) < 4 and
                                                           sur in ref.author_zone):
            author = 1
        elif len(sur) >= 4 and ocr_skeleton(sur) in ref.author_words_ocr:
            # perhaps the surname as OCR misread it ("Alrnawi" for "Almawi", "H0ll" for "Holl"),
            # perhaps another name of the same skeleton (Wang and Wong, Zhang and Zhong): it
            # neither agrees nor contradicts
            author = 0
        elif ref.first_authors:
            # no first author within AUTHOR_SIMILAR_AT (``ratio`` gives 0 below its cutoff)
            if sur not in ref.text_compact and not any(
                    fuzz.ratio(sur, a, score_cutoff=AUTHOR_SIMILAR_AT) for a in ref.first_authors) \
                    and ocr_skeleton(sur) not in ref.first_authors_ocr:  # "Hom" may be "Ham" misread
                author = -1
    return author


def feature_vector(f: Features) -> list[float]:
    """The model's inputs, in WEIGHTS order after the bias. Hinges let the title count more
    as it nears identity; conflicts/supports count the corroborating fields that disagree/agree."""
    corro = (f.author, f.year, f.volume, f.page)
    return [f.title * 10, max(0.0, f.title - 0.9) * 100, max(0.0, f.title - 0.97) * 100, f.title_len,
            f.title_len * (f.title >= 0.97),
            f.author, f.year, f.volume, f.page, f.venue, f.aligned,
            sum(c < 0 for c in corro), sum(c > 0 for c in (*corro, f.venue))]


_W = list(WEIGHTS.values())


TITLE_CONFLICT_BELOW = 0.85


def title_names_another_work(ref: RefView, f: Features) -> bool:
    """The candidate's title is not the string's: it matches below TITLE_CONFLICT_BELOW (as
    parsed, aligned or as a cut-short prefix), or it only aligns *inside* a longer title
    ("Instance-based learning algorithms" in "Noise-tolerant instance-based learning
    algorithms"). Author, year and venue agreeing do not make such a candidate the cited work (an
    author's next paper in the same venue series); only volume *and* first page agreeing do (the
    locator names one article whatever its title looks like: garbled, markup-stripped or absent)."""
    if f.volume == 1 and f.page == 1:
        return False
    if f.detail.get("names_another_part"):
        return True  # another numbered part of a title series (``title_parts``)
    inside_longer = bool(f.aligned and f.detail.get("align_boundary") is False)
    return f.title < TITLE_CONFLICT_BELOW or inside_longer


def logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def clear_margin(best: float, runner: float, margin: float = MARGIN, logit_margin: float = LOGIT_MARGIN) -> bool:
    """Is the best candidate clearly ahead of the runner-up (by probability or by log-odds)?"""
    return best - runner >= margin or logit(best) - logit(runner) >= logit_margin


def probability(f: Features) -> float:
    """Calibrated probability that the candidate is the cited work (logistic model).
    Same sum as ``WEIGHTS . feature_vector(f)``, unrolled (it runs for every candidate);
    tests/test_probability.py holds the two together on random features."""
    return probability_of(f.title, f.title_len, f.author, f.year, f.volume, f.page, f.venue, f.aligned)


def probability_of(t: float, title_len: float, a: int, y: int, v: int, p: int, ven: int, aligned: int) -> float:
    """``probability`` of the features given one by one (``verify_bound`` scores every candidate
    this way without making a ``Features``)."""
    (b, w_t, w_90, w_97, w_len, w_elen, w_a, w_y, w_v, w_p, w_ven, w_al, w_conf, w_sup) = _W
    z = (b + w_t * t * 10 + (w_90 * (t - 0.9) * 100 if t > 0.9 else 0.0)
         + (w_97 * (t - 0.97) * 100 if t > 0.97 else 0.0) + w_len * title_len
         + (w_elen * title_len if t >= 0.97 else 0.0) + w_a * a + w_y * y + w_v * v + w_p * p + w_ven * ven
         + w_al * aligned + w_conf * ((a < 0) + (y < 0) + (v < 0) + (p < 0))
         + w_sup * ((a > 0) + (y > 0) + (v > 0) + (p > 0) + (ven > 0)))
    z = PLATT[0] * z + PLATT[1]
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
