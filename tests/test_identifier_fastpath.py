"""The faster identifier extraction (cheap exact gates before each pass, plain DOIs
judged by one regex, and the batch gate in ``resolvers.identifiers.batch``) gives exactly what the
string-by-string extraction gave: its answers are pinned in ``golden/identifier_extraction.jsonl.gz``
(15,132 strings: the golden strings, strings in the identifier path benchmark's spellings, the
tricky cases below, seeded strings of identifier fragments, DOI shapes and odd text) and, as a
digest, over the shared data's 24,679 reference strings. The batch path must also agree with the
string-by-string scan on whatever hypothesis makes."""
from __future__ import annotations

import gzip
import hashlib
import json
import random
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resolvers.identifiers.batch import MIN_BATCH, extract_batch, plain_doi_strings
from resolvers.identifiers.extract import extract_identifiers
from resolvers.model import ExtractedIdentifiers

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
from reference_forms import FORMS  # noqa: E402  (the identifier path benchmark's spellings)

GOLDEN = Path(__file__).parent / "golden"
PINNED = GOLDEN / "identifier_extraction.jsonl.gz"
SHARED_REFS = Path(__file__).resolve().parents[2] / "shared" / "data" / "refs"
# sha256 of the answers over the shared reference strings (``_answers`` of them, in file order), with a DOI
# ending at a "[" that is not a SICI's ended there (7 strings of glutton_unlabeled)
SHARED_DIGEST = "e15345497266f1d4a1804e406b1fb66a5c5d77fd05be5a3a6fff3378c1d2732a"


def _strings(value: object) -> list[str]:
    """Every string inside a decoded JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def golden_strings() -> list[str]:
    found: list[str] = []
    for path in sorted(GOLDEN.rglob("*")):
        if path.suffix == ".jsonl":
            found += [s for line in path.read_text().splitlines() if line.strip() for s in _strings(json.loads(line))]
        elif path.suffix == ".tsv":
            found += [f.replace("\\n", "\n") for line in path.read_text().splitlines() for f in line.split("\t")]
    return found


def shared_strings() -> list[str]:
    found: list[str] = []
    for path in sorted(SHARED_REFS.glob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as fh:
            found += [json.loads(line).get("raw") or "" for line in fh if line.strip()]
    return found


def benchmark_strings(n: int = 3000) -> list[str]:
    """Strings in the identifier path benchmark's spellings, with DOIs and ids of many shapes."""
    rng = random.Random(16)
    dois = ["10.99999/syn.601.{}", "10.1103/PhysRevD.93.{}", "10.1016/j.cell.2009.01.{}", "10.1007/978-3-{}-1",
            "10.5555/ABC_{}-x.", "10.1002/(SICI)1097-{}:1<2::AID>3.0.CO;2-B", "10.48550/arXiv.1706.{}"]
    arxiv = ["1706.{:05d}", "0704.{:04d}", "hep-th/99{:05d}", "math.GT/03{:05d}", "1412.{:05d}", "2301.{:04d}"]
    out = []
    for _ in range(n):
        k = rng.randrange(100000)
        out.append(rng.choice(FORMS).format(
            author=rng.choice(["Smith", "T\u00f8nnesen", "Ng, A., Jordan, M.", "K\u0131l\u0131\u00e7"]),
            title=rng.choice(["Deep learning", "On 1207.7214 and [hep-th]", "Sizes 1234.5678, 2012", "A/B 12.345"]),
            year=rng.choice(["2017", "", "(2012), 1512.05291"]), venue=rng.choice(["Nature", "JHEP 06 [1612.07451]"]),
            arxiv=rng.choice(arxiv).format(k), doi=rng.choice(dois).format(k)))
    return out


def _as_json(ids: ExtractedIdentifiers) -> dict[str, list]:
    return {"dois": list(ids.dois), "arxiv_ids": list(ids.arxiv_ids),
            "malformed": [[m.scheme, m.token, m.why] for m in ids.malformed]}


def _same(raws: list[str]) -> None:
    """The batch path answers as the string-by-string scan does."""
    assert extract_batch(raws) == [extract_identifiers(r) for r in raws]


def pinned() -> list[dict]:
    with gzip.open(PINNED, "rt", encoding="ascii") as fh:
        return [json.loads(line) for line in fh]


def test_pinned_strings_extract_as_before():
    rows = pinned()
    assert len(rows) > 15000
    raws = [row.pop("raw") for row in rows]
    assert [_as_json(extract_identifiers(r)) for r in raws] == rows
    assert [_as_json(ids) for ids in extract_batch(raws)] == rows


def test_pinned_strings_hold_the_cases_below():
    """(Regenerated pins must keep covering what the tests here name.)"""
    raws = {row["raw"] for row in pinned()}
    assert set(TRICKY) | set(PLAIN) | set(benchmark_strings()) <= raws


def test_golden_strings_extract_alike_by_batch():
    raws = golden_strings()
    assert len(raws) > 1000
    _same(raws)


@pytest.mark.skipif(not SHARED_REFS.exists(), reason="shared data not on this machine")
def test_shared_reference_strings_extract_as_before():
    raws = shared_strings()
    assert len(raws) > 20000
    answers = [extract_identifiers(r) for r in raws]
    assert extract_batch(raws) == answers
    assert hashlib.sha256(json.dumps([_as_json(a) for a in answers]).encode()).hexdigest() == SHARED_DIGEST


# Each where a gate of the faster scan decides: the arXiv words (``abſ/`` too), "[" before or
# after a number, "/" right before one, YYMM.N tokens, "doı", split and escaped spellings.
TRICKY = ["ab\u017f/ 123.4567", "abs/ 12345.678", "eprint = {123.4567} arXiv", "ARX 1234.567", "x 123.4567 [hep-th]",
          "hep-th/1234.5678", "a/1234.5678", "(2012), 1207.7214", "x, 1207.72145.", "[1512.05291]",
          "do\u0131: 10.1/x", "DOI 10.1234/ABC.", "doi:10.1234/abc_d-e/f", "doi: 5/x", "doi:10.12/x 10.1234/y",
          "https: //doi. org/10.1234/x", "10.1162/tacl\\_a\\_00276", "hep -th/ 9901001", "1207 .7214 arXiv",
          "10.48550/arXiv.1706.03762", "10.1000/ARXIV:00000", "arXiv:170603762", "K\u0130 doi\u0130 10.1234/\u0663",
          "10.1234/x%2Fy", "10.1234/a<b>", "doi:10.1234/x;doi:10.5678/y", "10.1234/abc.", "10.1234/(a)b)"]


@pytest.mark.parametrize("raw", TRICKY)
def test_tricky_strings_extract_alike_by_batch(raw):
    _same([raw] * MIN_BATCH)


FRAGMENTS = ["10.", "10.1234/", "10.48550/arXiv.", "doi", "DOI", "do\u0131", ":", " ", "  ", "\n", "\t", "/",
             "arXiv", "arxiv", "abs/", "ab\u017f/", "eprint = {", "[", "]", "[hep-th]", "(", ")", "<", ">", ",", ";",
             ".", "-", "v2", "1207", "7214", "1512.05291", "0704.0001", "9901001", "hep-th", "hep -th", "math.GT",
             "cond-mat", "2012", "(2012)", "123", "45678", "\\", "\\_", "%2F", "&amp;", "org", "http://", "https: //",
             "dx.", "doi.org/", "arxiv.org/abs/", ".pdf", "ISBN", "pp.", "\u212a", "\u0130", "\u00a0", "x", "Q", "\u0663", "123.4567", "12345.678", "ab\u017f/ "]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=24))
def test_generated_strings_extract_alike_by_batch(parts):
    _same(["".join(parts)] * MIN_BATCH)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_any_text_extracts_alike_by_batch(raw):
    _same([raw] * MIN_BATCH)


# Strings around the plain DOI shape (``identifier_batch.PLAIN_DOI_STRING``): each thing that
# could make the scan find more or other than the DOI, in the text before it or inside it.
PLAIN = ["Title. doi:10.1234/abc", "BALB/c mice doi:10.1234/x", "x/ 1234 doi:10.1234/x", "eprint = {x} doi:10.1234/x",
         "[1512.05291] doi:10.1234/x", "x [hep-th] doi:10.1234/1512.05291", "x abs/ doi:10.1234/1207.7214",
         "x, doi:10.1234/1207.7214", "astro-ph/ doi:10.1234/0710.3113", "x hep-th/\u0663 doi:10.1234/x", "x hep-th/ \u0663 doi:10.1234/x", "x, 1207. 7214, doi:10.1234/x", "x, 1207 .7214, doi:10.1234/x", "x, 1207.7214, doi:10.1234/x", "T doi:10.1234/doiabc", "T doi:10.1234/doi10.5555", "T doi:10.1234/Doi10.5555.1", "T 1234.5678 doi:10.1234/x", "T, 1207.7214 doi:10.1234/x",
         "T/hep-th doi:10.1234/x", "T doi:10.1234/x.", "T. https://doi.org/10.1234/123.4567",
         "T. https://doi.org/10.1234/hep-th.1207.7214", "x DOI: 10.1234/ABC", "x doi:10.1234567890/x",
         "hep-th/9901001 doi:10.1234/x", "Title [1] doi:10.1234/x", "arXiv doi:10.1234/x", "ePrint doi:10.1234/x",
         "doi:10.48550/arXiv.1234.5678", "x 10.5555/y doi:10.1234/x", "x doi:10.1234/x doi:10.1234/y",
         "Naturedoi:10.1234/x", "x http://dx.doi.org/10.1234/a_b-c", "x 1207 .7214 doi:10.1234/x", "x: //doi:10.1234/x",
         "x 2017. https://doi.org/10.1234/x", "x \u0663\u0663\u0663.\u0663\u0663\u0663 doi:10.1234/x",
         "x 1234.\n5678 doi:10.1234/x", "x\n doi: 10.1234/x", "\\x doi:10.1234/x", "x doi:10.1234/" + "a" * 1000,
         "x DO\u0130 doi:10.1234/x", "x do\u0131 doi:10.1234/x", "K\u212a doi:10.1234/x", "x doi:10.1234/abc\n"]


@pytest.mark.parametrize("raw", PLAIN)
def test_strings_around_the_plain_doi_shape_extract_alike_by_batch(raw):
    _same([raw] * MIN_BATCH)


PREFIXES = st.lists(st.sampled_from(FRAGMENTS + ["Title", "2017", "(2012)", "1234.5678", "H3.1"]), max_size=8)
TOKENS = st.text(alphabet="-._/0123456789abcDOIXzv", min_size=1, max_size=14)


@settings(max_examples=200, deadline=None)
@given(PREFIXES, st.sampled_from(["doi:", "doi: ", "DOI:", "https://doi.org/", "http://dx.doi.org/", " doi:"]),
       st.sampled_from(["10.1234/", "10.99999/", "10.123/", "10.48550/"]), TOKENS)
def test_generated_doi_strings_extract_alike_by_batch(prefix, announce, registrant, suffix):
    _same(["".join(prefix) + announce + registrant + suffix] * MIN_BATCH)


def test_the_plain_doi_shape_is_recognised_where_it_should_be():
    """(So the comparisons above exercise the shortcut, not only the scan.)"""
    raws = ["Smith (2017) Deep learning. doi:10.99999/syn.601.4732", "Ng. T. Nature 2012. https://doi.org/10.1038/Nat_1-2",
            "T doi:10.1234/doi10.5555", "x, 1207. 7214, doi:10.1234/x", "T doi:10.1234/x.", "arXiv doi:10.1234/x"]
    assert plain_doi_strings(pa.array(raws, pa.large_string())) == ["10.99999/syn.601.4732", "10.1038/Nat_1-2",
                                                                     None, None, None, None]
    shares = plain_doi_strings(pa.array(benchmark_strings(), pa.large_string()))
    assert sum(d is not None for d in shares) > 50  # (81 of these 3,000 seeded ones)
