"""The paper corpus (tests/fixtures/papers/corpus.json, PROVENANCE.md there): real papers'
bibliographies in every common form and style, each read by ``papers.read_paper`` and held to an
answer made without the reader (``expected_ids.py``): the reference count the compiled paper
prints, every DOI and arXiv id each entry carries found on its reference, no identifier the entry
does not carry, and no LaTeX left in the text.

The packed sources are in tests/fixtures/papers/corpus/ (``$CITELEDGER_PAPER_CORPUS`` names
another folder). ``python tests/test_paper_corpus.py`` prints the figures over the whole corpus.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from papers import read_paper  # noqa: E402
from resolvers.identifiers.extract import extract_identifiers  # noqa: E402

EXPECTED = {k: v for k, v in json.loads((Path(__file__).parent / "fixtures" / "papers" / "corpus.json")
                                        .read_text()).items() if not k.startswith("_")}
CORPUS = Path(os.environ.get("CITELEDGER_PAPER_CORPUS") or Path(__file__).parent / "fixtures" / "papers" / "corpus")
_LATEX = re.compile(r"\\[A-Za-z@]+|@noop|\\[{}'\"`^~]|[{}]")


def _text(ref) -> str:
    """The string and fields the reader gives, less the entry's title: an id the title names (a
    comment on another paper) is printed but is not the entry's, as the answers count it."""
    title = ref.fields.get("title", "")
    return " ".join(v.replace(title, " ") if title else v for k, v in [("raw", ref.raw), *ref.fields.items()]
                    if k != "title")


def _found(identifier: str, text: str, extracted: set[str]) -> bool:
    return identifier in extracted or identifier in text.lower().replace("\\_", "_")


def measure(name: str) -> dict:
    """What the reader gives for one paper, against its expected answer."""
    want = EXPECTED[name]
    refs = read_paper(name, (CORPUS / name).read_bytes()).references
    by_key = {r.key: r for r in refs if r.key}
    got = {"count": len(refs), "want_count": want["entries"], "doi": [0, 0], "arxiv": [0, 0],
           "invented": [], "latex": [], "missing": []}
    for n, (key, (dois, arxiv)) in enumerate(zip(want["keys"], want["ids"])):
        ref = by_key.get(key) or (refs[n] if n < len(refs) and not by_key else None)
        text = _text(ref) if ref else ""
        ids = extract_identifiers(text)
        extracted = set(ids.dois) | set(ids.arxiv_ids)
        for kind, wanted in (("doi", dois), ("arxiv", arxiv)):
            got[kind][1] += len(wanted)
            hits = [i for i in wanted if _found(i, text, extracted)]
            got[kind][0] += len(hits)
            got["missing"] += [f"{key}: {i}" for i in wanted if i not in hits]
        allowed = set(dois) | set(arxiv) | {f"10.48550/arxiv.{a}" for a in arxiv}
        got["invented"] += [f"{key}: {i}" for i in (*ids.dois, *ids.arxiv_ids) if i not in allowed]
    for r in refs:
        for where, value in (("raw", r.raw), *r.fields.items()):
            if _LATEX.search(value):
                got["latex"].append(f"{r.key or r.order} {where}: {_LATEX.search(value).group(0)!r} in {value[:80]!r}")
    return got


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_paper_references_match_the_independent_answer(name):
    got = measure(name)
    assert got["count"] == got["want_count"], f"{got['count']} references, the paper prints {got['want_count']}"
    assert not got["missing"], f"identifiers not found: {got['missing'][:10]}"
    assert not got["invented"], f"identifiers the entries do not carry: {got['invented'][:10]}"
    assert not got["latex"], f"LaTeX left in the text: {got['latex'][:5]}"


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
        totals["passed"] += exact and not (got["missing"] or got["invented"] or got["latex"])
        print(f"{name:48s} count {got['count']:4d}/{got['want_count']:<4d} doi {got['doi'][0]:3d}/{got['doi'][1]:<3d} "
              f"arxiv {got['arxiv'][0]:3d}/{got['arxiv'][1]:<3d} invented {len(got['invented']):3d} "
              f"latex {len(got['latex']):4d}")
    print(f"papers {len(EXPECTED)}: all checks pass {totals['passed']}, count exact {totals['exact']}; "
          f"DOIs found {totals['doi'][0]}/{totals['doi'][1]}; arXiv ids found {totals['arxiv'][0]}/{totals['arxiv'][1]}; "
          f"invented {totals['invented']}; strings with LaTeX {totals['latex']}")


if __name__ == "__main__":
    _summary()
