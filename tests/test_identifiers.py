"""Identifier extraction against three golden files, plus property checks.

Every line of each golden file is its own test case, so a failure names the string that broke.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from resolvers.identifiers.extract import canonical_arxiv_id, extract_identifiers, normalize_doi

GOLDEN = Path(__file__).parent / "golden"
DELIM = "#---8<--- payload below ---8<---\n"


# --------------------------------------------------------------------------------------------
# real_reference_strings.tsv: every line yields exactly its expected identifiers
# --------------------------------------------------------------------------------------------
def _tsv_cases():
    payload = (GOLDEN / "real_reference_strings.tsv").read_text(encoding="utf-8").split(DELIM, 1)[1]
    for n, line in enumerate(payload.splitlines(), 1):
        if not line.strip():
            continue
        expected, source, raw = line.split("\t", 2)
        ids = [] if expected == "-" else expected.split()
        yield pytest.param(raw.replace("\\n", "\n"),
                           [i[4:] for i in ids if i.startswith("doi:")],
                           [i[6:] for i in ids if i.startswith("arxiv:")],
                           id=f"line{n}:{source[:50]}")


@pytest.mark.parametrize("raw, dois, arxiv_ids", list(_tsv_cases()))
def test_real_reference_strings(raw, dois, arxiv_ids):
    got = extract_identifiers(raw)
    assert list(got.dois) == dois
    assert list(got.arxiv_ids) == arxiv_ids


def test_real_reference_strings_file_is_complete():
    """Guard against a parser change silently skipping lines of the golden file."""
    assert len(list(_tsv_cases())) == 31


# --------------------------------------------------------------------------------------------
# refextract_cases.jsonl: refextract's expectations, except where refextract is wrong
# --------------------------------------------------------------------------------------------
# test name -> (arxiv ids, malformed tokens "scheme:token", why citeledger differs from gold).
# A "refextract-wrong" reason contradicts arXiv's scheme or the no-bare-number rule; a
# "gold-incomplete" reason is a case whose refextract test does not check identifiers at all,
# so its empty gold is not a negative.
_FIVE_BEFORE_1501 = "refextract-wrong: 5-digit numbers are only valid from 1501 on"
_BARE = ("refextract-wrong: a bare number outside the slots a reference gives an id (after the "
         "journal reference, in brackets) is never read as arXiv")
_BEFORE_0704 = "refextract-wrong: 9910 is not a new-style month (0704-1412 for 4 digits)"
REFEXTRACT_OVERRIDES: dict[str, tuple[list[str], list[str], str]] = {
    "test_5_digits": ([], ["arxiv:1303.33333"], _FIVE_BEFORE_1501),
    "test_5_digits_version": ([], ["arxiv:1303.33333v9"], _FIVE_BEFORE_1501),
    "test_5_digits_suffix": ([], ["arxiv:1304.44444"], _FIVE_BEFORE_1501),
    "test_5_digits_suffix_version": ([], ["arxiv:1304.44444v9"], _FIVE_BEFORE_1501),
    "test_4_digits_new": ([], [], _BARE + "; and " + _BEFORE_0704[17:]),
    "test_4_digits_version_new": ([], [], _BARE + "; and " + _BEFORE_0704[17:]),
    "test_4_digits_suffix_new": ([], ["arxiv:9910.1234"], _BEFORE_0704),
    "test_4_digits_suffix_version_new": ([], ["arxiv:9910.1234v9"], _BEFORE_0704),
    "test_5_digits_new": ([], [], _BARE + "; and " + _FIVE_BEFORE_1501[17:]),
    "test_5_digits_version_new": ([], [], _BARE + "; and " + _FIVE_BEFORE_1501[17:]),
    "test_5_digits_suffix_new": ([], ["arxiv:1310.12345"], _FIVE_BEFORE_1501),
    "test_5_digits_suffix_version_new": ([], ["arxiv:1310.12345v9"], _FIVE_BEFORE_1501),
    # agreed negatives, and citeledger also reports the malformed token
    "test_5_digits_2012": ([], ["arxiv:1203.33333"], "agrees: not arXiv; reported malformed"),
    "test_5_digits_suffix_version_new_2012": (
        [], ["arxiv:1210.12345v9"], "agrees: not arXiv; reported malformed"),
    # refextract's tests check reference splitting here, not identifiers
    "test_reference_split_ibid": (
        ["hep-ph/9512396"], [], "gold-incomplete: '(Preprint hep-ph/9512396)' is an old-style id"),
    "test_reference_split_handles_repeated_fields": (
        ["hep-th/0011146", "hep-th/0102105"], [],
        "gold-incomplete: refextract itself tags both as report numbers"),
    "test_reference_split_handles_semicolon": (
        ["1601.07692"], [], "gold-incomplete: 'arXiv:1601.07692 [hep-ph]'"),
    "test_extract_references_from_string": (
        ["hep-th/9906022"], [], "gold-incomplete: bare old-style id"),
}


def _gold_arxiv(gold: list[str]) -> list[str]:
    """refextract writes 'arXiv:1104.2222 [physics.ins-det]'; keep the canonical id."""
    return [canonical_arxiv_id(g.split()[0]) for g in gold]


def _refextract_cases():
    for line in (GOLDEN / "refextract_cases.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        name = case["test"]
        dois = [normalize_doi(d) for d in case["gold_doi"]]
        if name in REFEXTRACT_OVERRIDES:
            arxiv, malformed, why = REFEXTRACT_OVERRIDES[name]
            label = f"{name}[{why.split(':')[0]}]"
        else:
            arxiv, malformed, why = _gold_arxiv(case["gold_arxiv"]), [], "agrees with refextract"
            label = name
        yield pytest.param(case["raw"], dois, arxiv, malformed, id=label)


@pytest.mark.parametrize("raw, dois, arxiv_ids, malformed", list(_refextract_cases()))
def test_refextract_cases(raw, dois, arxiv_ids, malformed):
    got = extract_identifiers(raw)
    assert list(got.dois) == dois
    assert list(got.arxiv_ids) == arxiv_ids
    assert [f"{m.scheme}:{m.token}" for m in got.malformed] == malformed


def test_refextract_overrides_name_real_cases():
    """An override for a test that no longer exists in the golden file is a silent no-op."""
    names = {json.loads(line)["test"] for line in
             (GOLDEN / "refextract_cases.jsonl").read_text(encoding="utf-8").splitlines()}
    assert set(REFEXTRACT_OVERRIDES) <= names
    assert len(names) == 50


# --------------------------------------------------------------------------------------------
# identifier_cases.jsonl: citeledger's own cases
# --------------------------------------------------------------------------------------------
def _own_cases():
    for n, line in enumerate((GOLDEN / "identifier_cases.jsonl").read_text(encoding="utf-8")
                             .splitlines(), 1):
        c = json.loads(line)
        yield pytest.param(c["raw"], c["dois"], c["arxiv_ids"], c["malformed"],
                           id=f"{n}:{c['why'][:60] or c['raw'][:40]}")


@pytest.mark.parametrize("raw, dois, arxiv_ids, malformed", list(_own_cases()))
def test_identifier_cases(raw, dois, arxiv_ids, malformed):
    got = extract_identifiers(raw)
    assert list(got.dois) == dois
    assert list(got.arxiv_ids) == arxiv_ids
    assert [f"{m.scheme}:{m.token}" for m in got.malformed] == malformed
    assert all(m.why for m in got.malformed), "every malformed token says why"


# --------------------------------------------------------------------------------------------
# the single-token functions
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("arXiv:1706.03762v5", "1706.03762"),
    ("1706.03762", "1706.03762"),
    ("math.GT/0309136", "math/0309136"),
    ("hep-th/9901001v2", "hep-th/9901001"),
    ("https://arxiv.org/abs/hep-th/9711200", "hep-th/9711200"),
    ("https://arxiv.org/pdf/2302.13971v1.pdf", "2302.13971"),
    ("10.48550/arXiv.2211.10986", "2211.10986"),
    ("arXiv:1501.1234", None),
    ("1303.33333", None),
    ("9910.1234", None),
    ("1713.00001", None),
    ("hep-foo/9901001", None),
    ("cond—mat/0709123", None),
    ("", None),
])
def test_canonical_arxiv_id(text, expected):
    assert canonical_arxiv_id(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("10.1021/AM300292V", "10.1021/am300292v"),
    ("doi:10.1021/AM300292V.", "10.1021/am300292v"),
    ("DOI: 10.1021/am300292v", "10.1021/am300292v"),
    ("https://doi.org/10.1016/S0140-6736(97)11096-0", "10.1016/s0140-6736(97)11096-0"),
    ("http://dx.doi.org/10.1000/abc)", "10.1000/abc"),
    ("10.1002/1096-9098(200007)74:3%3C201::AID-JSO8%3E3.0.CO;2-5",
     "10.1002/1096-9098(200007)74:3<201::aid-jso8>3.0.co;2-5"),
    ("10.1162/tacl\\_a\\_00276", "10.1162/tacl_a_00276"),
    ("10.1016/", None),
    ("doi:10.123", None),
    ("10.1000/a b", None),
    ("10.3389/ neuro.01.002.2008", "10.3389/neuro.01.002.2008"),  # shared/data/catalog/glutton_works
    ("doi:10.1371/\n journal.pone.0007665", "10.1371/journal.pone.0007665"),
    ("10.1007/s10714-007-0472-9 10.1142/S0218271808012449", None),  # two DOIs: neither is the field's
    ("not a doi", None),
    ("", None),
])
def test_normalize_doi(text, expected):
    assert normalize_doi(text) == expected


# --------------------------------------------------------------------------------------------
# robustness and properties
# --------------------------------------------------------------------------------------------
def test_one_megabyte_adversarial_string_is_handled_correctly():
    """Long runs of digits/dots/slashes, NULs and near-miss prefixes; correctness, not timing
    (timing is benchmarks/bench_identifiers.py)."""
    rng = random.Random(7)
    pieces = ["1" * 5000, "." * 5000, "10." * 3000, "1234.5678." * 2000, "\x00" * 1000,
              "doi:" * 2000, "arXiv:" * 2000, "hep-th/" * 2000, "%3C" * 2000, "(" * 3000,
              "10.1000/" + "a" * 5000, "abs/" * 2000, "&lt;" * 2000, "[hep-th]" * 1000]
    junk = "".join(rng.choice(pieces) for _ in range(400))
    text = ("arXiv:1706.03762 " + junk[: 1_000_000] + " doi:10.1038/nature14539 "
            + "hep-th/9711200")
    assert len(text) > 1_000_000
    got = extract_identifiers(text)
    assert got.arxiv_ids[0] == "1706.03762"
    assert "hep-th/9711200" in got.arxiv_ids
    assert "10.1038/nature14539" in got.dois


def test_pathological_runs_do_not_invent_identifiers():
    for text in ["1" * 1_000_000, "1." * 500_000, "10.1" * 250_000, "\x00" * 1_000_000,
                 "/" * 1_000_000]:
        got = extract_identifiers(text)
        assert got.dois == () and got.arxiv_ids == ()


_ID_ALPHABET = st.sampled_from(
    list("0123456789./-:()[]<>;% v\n") + ["arXiv:", "doi:", "10.", "hep-th/", "math.GT/",
                                          "abs/", "[cs.CL]", "https://doi.org/", "&lt;",
                                          "%3C", "\\_", "1706.03762", "1501.00001", "9711200"])
_ID_TEXT = st.lists(_ID_ALPHABET, max_size=60).map("".join)


def _rejoined(extracted) -> str:
    return " ".join([f"doi:{d}" for d in extracted.dois]
                    + [f"arXiv:{a}" for a in extracted.arxiv_ids])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), _ID_TEXT))
@example("10.0000/ARXIV:00000")  # an arXiv-like piece inside a DOI's suffix (found by hypothesis)
@example("10.0000/ARXIV000.000")
def test_random_text_never_raises_and_extraction_is_idempotent(text):
    got = extract_identifiers(text)
    again = extract_identifiers(_rejoined(got))
    assert again.dois == got.dois
    assert again.arxiv_ids == got.arxiv_ids
    assert again.malformed == ()


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=120), _ID_TEXT))
def test_normalisers_are_idempotent(text):
    doi = normalize_doi(text)
    if doi is not None:
        assert normalize_doi(doi) == doi
        assert doi == doi.lower()
    aid = canonical_arxiv_id(text)
    if aid is not None:
        assert canonical_arxiv_id(aid) == aid


@pytest.mark.parametrize("raw", [
    "https://doi.org/10.1038/nature12345%5Cnhttp://www.nature.com/articles/nature12345",
    "https://doi.org/10.1038/nature12345%0Ahttp://www.nature.com/articles/nature12345",
    "url: 10.1038/nature12345\\nhttp://www.nature.com/articles/nature12345",
    "doi:10.1038/nature12345\\n",
])
def test_a_doi_ends_at_a_url_encoded_or_literal_line_break(raw):
    """A .bib field holding two URLs joined by a newline, written literally or URL-encoded."""
    assert extract_identifiers(raw).dois == ("10.1038/nature12345",)
