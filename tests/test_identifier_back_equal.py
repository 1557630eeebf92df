"""The identifier path's back's fast form gives exactly the plain form's answers: the
agreement check (verdict, reason and every evidence value), the parse and the title forms, pinned
in ``golden/agreement_answers.jsonl.gz`` (made by main 5d9ea9f's code over the golden strings and
1,500 seeded generated ones, each against a work made from the string and a catalog work) and, as a
digest, over a sample of the shared data's strings; the rebuilt pieces against what they stand
for (rapidfuzz's alignment, ``title_cut_short``, ``verify.YEAR_TOKEN``, the parser's volume and
page patterns, ``canonical_json``)."""
from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import random
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from resolvers import observation
from resolvers.canonical import canonical_json
from resolvers.model import Work
from resolvers.parsing import lazy as lazy_parse
from resolvers.parsing.fields import VOL_PAGES, parse_reference
from resolvers.parsing.lazy import _VOL_PAGES_ANYWHERE
from resolvers.parsing.text import clean_raw
from resolvers.parsing.title_signs import title_cut_short
from resolvers.verification import agreement, contradiction
from resolvers.verification.forms import YEAR_TOKEN

GOLDEN = Path(__file__).parent / "golden"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
PINNED = GOLDEN / "agreement_answers.jsonl.gz"
# sha256 of the plain form's answers over the shared sample (``_shared_answers``)
SHARED_DIGEST = "cd2d37d469a50bcafc0ace5348fae16ef047badf0ae893603a4ce7578316893a"


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


def _answer(a: agreement.Agreement) -> dict:
    return {"contradicts": a.contradicts, "reason": a.reason.value if a.reason else None, "details": a.details}


def _json(value: object) -> object:
    """As the pins hold it (tuples as lists)."""
    return json.loads(json.dumps(value))


def _checks(raws: list[str], rng: random.Random, catalog: list[Work]) -> list[dict]:
    """The check of each string against the works ``_works_for`` gives it: on its lazy parse, and
    for every fifth string on its full parse and on the full parse of the string with " x" added."""
    out = []
    for n, raw in enumerate(raws):
        for work in _works_for(raw, catalog, rng):
            row = {"raw": raw, "work": {k: getattr(work, k) for k in WORK_FIELDS},
                   "lazy": _answer(agreement.check_agreement(raw, lazy_parse.lazy_parse(raw), work))}
            if n % 5 == 0:
                row["full"] = _answer(agreement.check_agreement(raw, parse_reference(raw), work))
                row["full_x"] = _answer(agreement.check_agreement(raw, parse_reference(raw + " x"), work))
            out.append(row)
    return out


WORK_FIELDS = ("work_id", "doi", "title", "authors", "year", "venue", "volume", "first_page", "type")


def pinned(kind: str) -> list[dict]:
    with gzip.open(PINNED, "rt", encoding="ascii") as fh:
        return [row for line in fh if (row := json.loads(line))["kind"] == kind]


@pytest.fixture(autouse=True)
def _no_parse_memory(monkeypatch):
    monkeypatch.setattr(lazy_parse, "PARSES_KEPT", 0)  # each parse made afresh: nothing carried over


def test_agreement_is_the_plain_forms_on_pinned_pairs():
    rows = pinned("check")
    assert len(rows) > 3000
    for row in rows:
        raw, fields = row["raw"], row["work"]
        work = Work(**{**fields, "authors": tuple(fields["authors"])})
        assert _json(_answer(agreement.check_agreement(raw, lazy_parse.lazy_parse(raw), work))) == row["lazy"], raw
        if "full" in row:
            assert _json(_answer(agreement.check_agreement(raw, parse_reference(raw), work))) == row["full"], raw
            full_x = agreement.check_agreement(raw, parse_reference(raw + " x"), work)
            assert _json(_answer(full_x)) == row["full_x"], raw


@pytest.mark.skipif(not (SHARED / "catalog" / "glutton_works.jsonl.gz").exists(), reason="shared data not here")
def test_agreement_and_parse_are_the_plain_forms_on_shared_strings():
    answers = _checks(_shared_strings(), random.Random(17), _catalog_works())
    answers += [dataclasses.asdict(parse_reference(r)) for r in _shared_strings(60)]
    assert hashlib.sha256(json.dumps(answers, sort_keys=True).encode()).hexdigest() == SHARED_DIGEST


_WORDS = ["deep", "learning", "of", "the", "in", "and", "Study", "on", "protein", "Nature", "Phys.", "Rev.", "Lett.",
          "J.", "Smith", "et", "al.", "Über", "straße", "ıd", "ſpace", "\u212aelvin", "İst", "for", "via", "a", "an"]
_PIECES = ["doi:10.1103/PhysRevD.76.013009", "arXiv:1810.04805", "https://doi.org/10.1/x", "abs/0704.0001v2",
           "CoRR", "URL", "urn:nbn:1", "(2019)", "2019.", "1999a", "12(3):45-67", "76, 013009", "vol. 12, no. 3, pp. 45-67",
           "2004;127(5):1291-9", "74 034503", "pp. 1-9", "1810.1999", "0704.2007", "/2019", "-2019-", ",", ".", ":", ";",
           "\"", "\u201c", "\u201d", "\n", "  ", "\u2013", "_", "1", "2"]
_TOKENS = st.sampled_from(_WORDS + _PIECES) | st.text(alphabet="abcXYZ0129 .,:;-/()\u00e9\u0131", max_size=6)
_RAWS = st.lists(_TOKENS, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_RAWS, seed=st.integers(0, 10**6))
def test_agreement_on_the_lazy_parse_is_the_full_parses(raw, seed):
    """(The lazy parse stands for the full one wherever the check reads it.)"""
    rng = random.Random(seed)
    for work in _works_for(raw, _catalog_works(50), rng):
        lazy = agreement.check_agreement(raw, lazy_parse.lazy_parse(raw), work)
        assert lazy == agreement.check_agreement(raw, parse_reference(raw), work), (raw, work)


_TEXTS = st.text(alphabet="abcAB ijklı.-_xyzé\u0130\u212a\n", max_size=40)


@settings(max_examples=300, deadline=None)
@given(title=_TEXTS, before=_TEXTS, after=_TEXTS, copies=st.integers(0, 2))
def test_title_presence_is_rapidfuzz_alignment(title, before, after, copies):
    text = clean_raw(before + (" " + title + " ") * copies + after)
    low_title = clean_raw(title).lower()
    score, goes_on = agreement._presence(title, low_title, text)
    if not (low_title and text):
        assert (score, goes_on) == (0.0, False)
    elif len(low_title) > len(text):
        assert (score, goes_on) == (fuzz.partial_ratio(text.lower(), low_title), False)
    else:
        al = fuzz.partial_ratio_alignment(low_title, text.lower())
        assert score == al.score
        if goes_on:  # the string goes on past the title where rapidfuzz puts it
            assert score >= agreement.TITLE_PRESENT_AT and al.dest_end < len(text)


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
    """``\\d\\d*`` in place of the parser's ``\\d+``: the same matches, spans and groups."""
    assert len(_VOL_PAGES_ANYWHERE) == len(VOL_PAGES)
    for new in _VOL_PAGES_ANYWHERE:
        old = re.compile(new.pattern.replace(r"(?P<vol>\d\d*)", r"(?P<vol>\d+)"), new.flags)
        m, n = new.search(body), old.search(body)
        assert (m and (m.span(), m.groupdict())) == (n and (n.span(), n.groupdict()))


def test_title_forms_are_the_plain_forms():
    rows = pinned("title_forms")
    assert len(rows) > 250
    for row in rows:
        assert list(agreement._title_forms.__wrapped__(row["title"])) == row["forms"], row["title"]


_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
                       lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner) |
                       st.dictionaries(st.text(max_size=2) | st.integers(), inner, max_size=3), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_plain_values_are_written_by_orjson_as_by_the_encoder(value):
    """What ``_plain`` lets through, orjson writes as ``canonical_json`` does (``canonical_bytes``)."""
    if observation._plain(value):
        try:
            fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # (an int past 64 bits: canonical_bytes falls back)
            return
        assert fast == canonical_json(value).encode("utf-8", errors="surrogatepass")


def test_values_orjson_writes_otherwise_are_not_plain():
    class Text(str):
        pass
    for value in (1e-05, 1e16, float("nan"), Text("x"), {1: "a"}, [0.5, 2.5e-7], {"a": {"b": 1e20}}, b"x", {1, 2}):
        assert not observation._plain(value), value
    for value in ("x", 0.0, 0.5, 1e-4, 123456.75, [1, "a", None, True], {"a": (1, [2.5])}):
        assert observation._plain(value), value


def test_parse_is_the_plain_forms():
    """``parse_reference`` scans for BibTeX only in strings with an "@" or "=": the same parse."""
    rows = pinned("parse")
    assert len(rows) > 700
    for row in rows:
        assert dataclasses.asdict(parse_reference(row["raw"])) == row["parsed"], row["raw"]
