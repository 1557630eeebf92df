"""The paper corpus (tests/fixtures/papers/corpus.json, PROVENANCE.md there): real papers'
bibliographies in every common form and style, each read by ``papers.reader.read_paper`` and held to an
answer made without the reader (``expected_ids.py``): the reference count the compiled paper
prints, every DOI and arXiv id each entry carries found on its reference, no identifier the entry
does not carry, no LaTeX left in the text and no repeated-author dash left unfilled.

The packed sources are in tests/fixtures/papers/corpus/ (``$CITELEDGER_PAPER_CORPUS`` names
another folder). ``python tests/test_paper_corpus.py`` prints the figures over the whole corpus.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper_answers import assert_matches, compare, passes  # noqa: E402

from papers.reader import read_paper  # noqa: E402

EXPECTED = {k: v for k, v in json.loads((Path(__file__).parent / "fixtures" / "papers" / "corpus.json")
                                        .read_text()).items() if not k.startswith("_")}
CORPUS = Path(os.environ.get("CITELEDGER_PAPER_CORPUS") or Path(__file__).parent / "fixtures" / "papers" / "corpus")


def measure(name: str) -> dict:
    """What the reader gives for one paper, against its expected answer."""
    want = EXPECTED[name]
    refs = read_paper(name, (CORPUS / name).read_bytes()).references
    return compare(refs, want["keys"], want["ids"], want["entries"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_paper_references_match_the_independent_answer(name):
    assert_matches(measure(name))


def test_every_packed_paper_has_its_answer_and_its_provenance():
    provenance = (Path(__file__).parent / "fixtures" / "papers" / "PROVENANCE.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(EXPECTED)
    assert [n for n in EXPECTED if f"| `{n}` |" not in provenance] == []


def _summary() -> None:
    totals = {"exact": 0, "doi": [0, 0], "arxiv": [0, 0], "invented": 0, "latex": 0, "passed": 0}
    for name in sorted(EXPECTED):
        got = measure(name)
        exact = got["count"] == got["want_count"]
        totals["exact"] += exact
        for kind in ("doi", "arxiv"):
            totals[kind] = [a + b for a, b in zip(totals[kind], got[kind])]
        totals["invented"] += len(got["invented"])
        totals["latex"] += len(got["latex"])
        totals["passed"] += passes(got)
        print(f"{name:48s} count {got['count']:4d}/{got['want_count']:<4d} doi {got['doi'][0]:3d}/{got['doi'][1]:<3d} "
              f"arxiv {got['arxiv'][0]:3d}/{got['arxiv'][1]:<3d} invented {len(got['invented']):3d} "
              f"latex {len(got['latex']):4d}")
    print(f"papers {len(EXPECTED)}: all checks pass {totals['passed']}, count exact {totals['exact']}; "
          f"DOIs found {totals['doi'][0]}/{totals['doi'][1]}; arXiv ids found {totals['arxiv'][0]}/{totals['arxiv'][1]}; "
          f"invented {totals['invented']}; strings with LaTeX {totals['latex']}")


if __name__ == "__main__":
    _summary()
