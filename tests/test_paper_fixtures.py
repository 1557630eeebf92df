"""Real arXiv paper sources (tests/fixtures/papers/, PROVENANCE.md there): every entry of each
bibliography becomes exactly one reference, in order, counted against a hand count."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from papers.reader import read_paper

FIXTURES = Path(__file__).parent / "fixtures" / "papers"
EXPECTED = {k: v for k, v in json.loads((FIXTURES / "expected.json").read_text()).items() if not k.startswith("_")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_entry_becomes_one_reference_in_order(name):
    want = EXPECTED[name]
    paper = read_paper(name, (FIXTURES / name).read_bytes())
    assert (paper.citing_paper, paper.form) == (want["citing_paper"], want["form"])
    assert paper.rejects == []
    refs = paper.references
    assert len(refs) == want["entries"]
    assert [r.order for r in refs] == list(range(1, want["entries"] + 1))
    assert [r.key for r in refs[:3]] == want["first"] and refs[-1].key == want["last"]
    assert len({r.key for r in refs}) == len(refs)  # no entry read twice
    assert {r.kind for r in refs} == {want["kind"]} and {r.source for r in refs} == {"arxiv_source"}
    assert all(len(r.raw) > 20 and "\\" not in r.raw for r in refs)  # text, not LaTeX


def test_the_fixtures_cover_bbl_bib_only_and_inline_bibliographies():
    kinds = [want["kind"] for want in EXPECTED.values()]
    assert kinds.count("bbl") >= 1 and kinds.count("bib") >= 1 and kinds.count("tex") >= 1 and len(kinds) >= 5


def test_macros_and_journal_abbreviations_are_expanded():
    emcee = read_paper("1202.3665.gz", (FIXTURES / "1202.3665.gz").read_bytes()).references
    assert emcee[0].raw.endswith("2012, arXiv:1212.1721")  # \arxiv{1212.1721}, the author's macro
    assert emcee[1].raw == "Bovy, J., Rix, H.-W., Liu, C., et al. 2012, ApJ, 753, 148"  # \apj
    mpc = read_paper("1911.13021.tar.gz", (FIXTURES / "1911.13021.tar.gz").read_bytes()).references
    assert "Automatica, 38 (1): 3–20, 2002." in mpc[2].raw  # \penalty0 gone
    assert "imtlucca.it/~bemporad/glis/" in mpc[1].raw  # a URL keeps its ~


def test_a_bib_entry_keeps_its_fields_as_text():
    peerless = read_paper("1607.08237.tar.gz", (FIXTURES / "1607.08237.tar.gz").read_bytes()).references
    ballard = next(r for r in peerless if r.key == "Ballard:2016")
    assert ballard.fields["journal"] == "ApJ" and ballard.fields["volume"] == "816"
    assert ballard.raw.startswith("S. Ballard and J. A. Johnson. The Kepler Dichotomy")
