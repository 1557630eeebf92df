"""The identifier path's back made faster in session 9 gives exactly main's answers: the agreement
check (verdict, reason and every evidence value) and the pieces it was rebuilt from, against main's
code kept verbatim in ``tests/identifier_back_reference.py``, over the golden strings, the shared
data's reference strings and generated ones."""
from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

import identifier_back_reference as ref
from resolvers import agreement, contradiction, lazy_parse, observation
from resolvers.lazy_parse import _VOL_PAGES_ANYWHERE
from resolvers.model import Work
from resolvers.parsing import parse_reference
from resolvers.text import clean_raw
from resolvers.title_signs import title_cut_short
from resolvers.verify import YEAR_TOKEN

GOLDEN = Path(__file__).parent / "golden"
SHARED = Path("/work/shared/data")


def _shared_strings(limit: int = 150) -> list[str]:
    """Real reference strings: a sample of each file of the shared data (when it is there)."""
    raws: list[str] = []
    for name in ("refs/glutton_dev.jsonl.gz", "refs/unarxive_sample.jsonl.gz", "refs/glutton_unlabeled.jsonl.gz",
                 "refs/anystyle_tagged.jsonl", "refs/cora_records.jsonl", "refs/refextract_cases.jsonl"):
        path = SHARED / name
        if not path.exists():
            continue
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt") as fh:
            rows = [json.loads(line) for line in fh]
        rng = random.Random(name)
        raws += [r["raw"] for r in rng.sample(rows, min(limit, len(rows))) if isinstance(r.get("raw"), str)]
    return raws


def _golden_strings() -> list[str]:
    raws = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if isinstance(row, dict) and isinstance(row.get("raw"), str):
                raws.append(row["raw"])
    tsv = GOLDEN / "real_reference_strings.tsv"
    raws += [line.split("\t")[-1].replace("\\n", "\n") for line in tsv.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    return raws


def _catalog_works(limit: int = 3000) -> list[Work]:
    path = SHARED / "catalog" / "glutton_works.jsonl.gz"
    if not path.exists():
        return [Work("doi:10.1/x", doi="10.1/x", title="A study of things", authors=("Smith",), year=2001,
                     venue="J Things", volume="12", first_page="34")]
    with gzip.open(path, "rt") as fh:
        rows = [json.loads(line) for _, line in zip(range(limit), fh)]
    return [Work("doi:" + r["doi"], doi=r["doi"], title=r.get("title"), authors=tuple(r.get("authors") or ()),
                 year=r.get("year"), venue=r.get("venue"), volume=r.get("volume"), first_page=r.get("first_page"))
            for r in rows]


_NUMBER = re.compile(r"\d+")


def _works_for(raw: str, catalog: list[Work], rng: random.Random) -> list[Work]:
    """Works an identifier could name for this string: one made from the string itself (its title
    a span of it, its year and numbers the string's or others), and one of the catalog."""
    text = clean_raw(raw)
    words = text.split(" ")
    i = rng.randrange(len(words))
    j = rng.randrange(i, min(len(words), i + rng.choice([2, 4, 8, 16])) + 1)
    title = " ".join(words[i:j]) or None
    if title and rng.random() < 0.3:
        title = title.upper() if rng.random() < 0.5 else title + rng.choice([" of", " in the", ":", " (", "  "])
    years = [int(y) for y in re.findall(r"(?:1[6-9]|20)\d\d", text)] or [None]
    year = rng.choice(years)
    if year and rng.random() < 0.4:
        year += rng.choice([-5, -2, -1, 1, 3])
    numbers = _NUMBER.findall(text) or ["7"]
    other = rng.choice(catalog)
    own = Work("w:own", doi="10.1/own", title=title, authors=(rng.choice(words[:3]),) if rng.random() < 0.8 else (),
               year=year, venue=rng.choice([None, other.venue, " ".join(words[-4:-1])]),
               volume=rng.choice([None, rng.choice(numbers), "999"]),
               first_page=rng.choice([None, rng.choice(numbers), "4242"]),
               type=rng.choice([None, "preprint", "journal-article"]))
    return [own, other]


def _same_check(raw: str, work: Work, parsed_too: bool = True) -> None:
    new = agreement.check_agreement(raw, lazy_parse.lazy_parse(raw), work)
    old = ref.check_agreement(raw, lazy_parse.lazy_parse(raw), work)
    assert new == old, (raw, work)
    if not parsed_too:
        return
    assert agreement.check_agreement(raw, parse_reference(raw), work) == old
    assert agreement.check_agreement(raw, parse_reference(raw + " x"), work) == \
        ref.check_agreement(raw, parse_reference(raw + " x"), work)


@pytest.fixture(autouse=True)
def _no_parse_memory(monkeypatch):
    monkeypatch.setattr(lazy_parse, "PARSES_KEPT", 0)  # each parse made afresh: nothing carried over


def test_agreement_is_mains_on_golden_and_shared_strings():
    rng = random.Random(16)
    catalog = _catalog_works()
    raws = _golden_strings() + _shared_strings()
    assert len(raws) > 500
    for n, raw in enumerate(raws):
        for work in _works_for(raw, catalog, rng):
            _same_check(raw, work, n % 5 == 0)


_WORDS = ["deep", "learning", "of", "the", "in", "and", "Study", "on", "protein", "Nature", "Phys.", "Rev.", "Lett.",
          "J.", "Smith", "et", "al.", "Über", "straße", "ıd", "ſpace", "\u212aelvin", "İst", "for", "via", "a", "an"]
_PIECES = ["doi:10.1103/PhysRevD.76.013009", "arXiv:1810.04805", "https://doi.org/10.1/x", "abs/0704.0001v2",
           "CoRR", "URL", "urn:nbn:1", "(2019)", "2019.", "1999a", "12(3):45-67", "76, 013009", "vol. 12, no. 3, pp. 45-67",
           "2004;127(5):1291-9", "74 034503", "pp. 1-9", "1810.1999", "0704.2007", "/2019", "-2019-", ",", ".", ":", ";",
           "\"", "\u201c", "\u201d", "\n", "  ", "\u2013", "_", "1", "2"]
_TOKENS = st.sampled_from(_WORDS + _PIECES) | st.text(alphabet="abcXYZ0129 .,:;-/()\u00e9\u0131", max_size=6)
_RAWS = st.lists(_TOKENS, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_RAWS, seed=st.integers(0, 10**6))
def test_agreement_is_mains_on_generated_strings(raw, seed):
    rng = random.Random(seed)
    for work in _works_for(raw, _catalog_works(50), rng):
        _same_check(raw, work)


_TEXTS = st.text(alphabet="abcAB ijklı.-_xyzé\u0130\u212a\n", max_size=40)


@settings(max_examples=300, deadline=None)
@given(title=_TEXTS, before=_TEXTS, after=_TEXTS, copies=st.integers(0, 2))
def test_title_presence_is_rapidfuzz_alignment(title, before, after, copies):
    text = clean_raw(before + (" " + title + " ") * copies + after)
    low_title = clean_raw(title).lower()
    assert agreement._presence(title, low_title, text) == ref._presence(title, low_title, text)
    if low_title and text and len(low_title) <= len(text):
        al = fuzz.partial_ratio_alignment(low_title, text.lower())
        score, _ = agreement._presence(title, low_title, text)
        assert score == al.score


@settings(max_examples=500, deadline=None)
@given(title=st.text(alphabet="abinoftheANDIN _3.,(-\u0131\u017f\u212a\u0130\u00e9 \n\t", max_size=12))
def test_cut_short_is_title_cut_short(title):
    assert agreement._cut_short(title) == title_cut_short(title)


def test_cut_short_on_the_function_words():
    for word in ref_words():
        for head in ("", "x ", "x_", "x3", "x\u0131", "(", "é"):
            for title in (head + word, head + word.upper(), head + "re" + word, head + word + " "):
                assert agreement._cut_short(title) == title_cut_short(title), title


def ref_words() -> list[str]:
    return ["in", "of", "by", "from", "the", "and", "with", "for", "on", "to", "a", "an", "at", "as", "via", "ab"]


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="0123456789 .-/a", max_size=30))
def test_year_tokens_are_verifys(text):
    assert contradiction._YEAR_TOKEN.findall(text) == YEAR_TOKEN.findall(text)


@settings(max_examples=300, deadline=None)
@given(body=st.lists(st.sampled_from(["12", "3", "(4)", ":", ";", ",", " ", "-", "\u2013", "pp.", "vol.", "x", "A5",
                                      "2004", "."]), max_size=14).map("".join))
def test_volume_page_shapes_match_as_before(body):
    for new, old in zip(_VOL_PAGES_ANYWHERE, ref.VOL_PAGES_ANYWHERE):
        m, n = new.search(body), old.search(body)
        assert (m and (m.span(), m.groupdict())) == (n and (n.span(), n.groupdict()))


def test_title_forms_are_mains():
    for title in _golden_strings()[:300] + ["Über ﬁnite ﬁelds", "C++ / Java", " a\nb ", "İstanbul"]:
        assert agreement._title_forms.__wrapped__(title) == ref._title_forms(title)


_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
                       lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner) |
                       st.dictionaries(st.text(max_size=2) | st.integers(), inner, max_size=3), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(value=_VALUES)
def test_plain_is_mains(value):
    assert observation._plain(value) == ref._plain(value)


def test_parse_is_mains_without_bibtex_scans():
    """``parse_reference`` scans for BibTeX only in strings with an "@" or "=": the same parse."""
    for raw in _golden_strings() + _shared_strings(60) + ["@article{k, title={A b c}}", "title = {A}, year = 2001",
                                                             "x @ y", "a = b"]:
        assert parse_reference(raw) == ref.parse_reference(raw)
