"""Real bibliographies in every common BibTeX style. The corpus's BibTeX papers
(tests/fixtures/papers/corpus/) are formatted again by BibTeX itself with each style's ``.bst``:
the paper's own ``.bib`` files and the keys it cites go in, and the ``.bbl`` BibTeX writes is put in
the paper's tarball beside its ``.tex``, as an author who ran BibTeX would submit it. The paper is
then read by ``papers.reader.read_paper`` and held to the ``.bbl`` itself, read by ``expected_ids.py``
(which imports nothing of the project): as many references as BibTeX printed entries, each
entry's printed DOIs and arXiv ids found on its reference, none invented, no LaTeX left, no
repeated-author dash unfilled.

So every style's way of printing (``\\bibinfo``, ``\\BibitemOpen``, ``\\doibase``, ``\\eprint``,
``\\natexlab``, ``\\urlprefix``, block and sentence punctuation, names, URLs) meets a few thousand
real entries, not the handful of papers written in it. Needs BibTeX and the styles (TeX Live's
``texlive-base``, ``texlive-latex-base`` and ``texlive-publishers``; ``.ci/run`` installs them where
missing); a style whose ``.bst`` is not found is skipped, saying so.

In the test suite each style reads a quarter of the papers (a different quarter per style, so every
paper meets several styles); ``python tests/test_bibtex_styles.py [STYLE ...]`` reads every paper in
every style and prints the table. Eight styles' bibliographies are also typeset by pdflatex and read
back by ``pdf_text`` (two papers each), four papers in a document class (line numbers in the
margin, two columns, a conference) and one through biber and biblatex: at least 90 % of the
entries, no identifier that no entry carries; ``benchmarks/bench_pdf_styles.py`` does so for every
style, class and paper.
"""
from __future__ import annotations

import shutil
import sys

import pytest
from bibtex_styles import (
    CLASSES,
    PAPERS,
    STYLES,
    measure,
    measure_biblatex,
    measure_class,
    measure_pdf,
    style_file,
)
from paper_answers import assert_matches, passes

SHARE = 4  # in the suite, each style reads one paper in SHARE
# typeset and read back by pdf_text in the suite: one style of each family, two papers each
PDF_STYLES = ["plain", "alpha", "plainnat", "apsrev4-2", "IEEEtran", "ACM-Reference-Format", "mnras", "jasa"]


@pytest.mark.skipif(shutil.which("bibtex") is None, reason="BibTeX is not installed (texlive-binaries)")
@pytest.mark.parametrize("style", STYLES)
def test_a_real_bibliography_formatted_by_bibtex_in_the_style_reads_as_printed(style):
    if style_file(style) is None:
        pytest.skip(f"{style}.bst is not installed")
    share = [name for n, name in enumerate(PAPERS) if (n + STYLES.index(style)) % SHARE == 0]
    results = {name: measure(name, style) for name in share}
    assert sum(got is not None for got in results.values()) >= 0.8 * len(share), "BibTeX failed on most papers"
    for name, got in results.items():
        if got is None:
            continue
        assert got["printed"] > 0, f"{name}: BibTeX printed nothing in {style}"
        try:
            assert_matches(got)
        except AssertionError as failure:
            raise AssertionError(f"{name} in {style}: {failure}") from None


@pytest.mark.skipif(not all(shutil.which(c) for c in ("bibtex", "pdflatex", "pdftotext")),
                    reason="BibTeX, pdflatex or pdftotext is not installed")
@pytest.mark.parametrize("style", PDF_STYLES)
def test_the_bibliography_typeset_in_the_style_reads_back_from_its_pdf(style):
    if style_file(style) is None:
        pytest.skip(f"{style}.bst is not installed")
    k = PDF_STYLES.index(style)
    for name in (PAPERS[(7 * k) % len(PAPERS)], PAPERS[(7 * k + 29) % len(PAPERS)]):
        got = measure_pdf(name, style)
        assert got is not None, f"{name}: no PDF in {style}"
        assert got["found"] >= 0.9 * got["printed"], f"{name} in {style}: {got['found']} of {got['printed']}"
        assert got["found"] <= got["printed"] + max(1, got["printed"] // 10), f"{name} in {style}: entries split"
        assert got["wrong"] == [], f"{name} in {style}: identifiers no entry carries"


# typeset in a document class (body text in its columns, an appendix after the list) in the suite:
# line numbers in the margin (lineno, a review mode), two-column physics, a conference; one paper each
PDF_CLASSES = ["elsarticle-preprint-lineno", "acmart-review", "revtex4-2-twocolumn", "IEEEtran-conference"]


def _holds(got: dict | None, where: str) -> None:
    assert got is not None, f"{where}: no PDF"
    assert got["found"] >= 0.9 * got["printed"], f"{where}: {got['found']} of {got['printed']}"
    assert got["found"] <= got["printed"] + max(1, got["printed"] // 10), f"{where}: entries split"
    assert got["wrong"] == [], f"{where}: identifiers no entry carries"
    assert len(got["missed"]) <= got["ids"] // 20, f"{where}: printed identifiers missed {got['missed']}"


@pytest.mark.skipif(not all(shutil.which(c) for c in ("bibtex", "pdflatex", "pdftotext")),
                    reason="BibTeX, pdflatex or pdftotext is not installed")
@pytest.mark.parametrize("klass", PDF_CLASSES)
def test_a_paper_typeset_in_the_document_class_reads_back_from_its_pdf(klass):
    if style_file(CLASSES[klass][2]) is None:
        pytest.skip(f"{CLASSES[klass][2]}.bst is not installed")
    name = PAPERS[(11 * PDF_CLASSES.index(klass) + 5) % len(PAPERS)]
    _holds(measure_class(name, klass), f"{name} in {klass}")


@pytest.mark.skipif(not all(shutil.which(c) for c in ("biber", "pdflatex", "pdftotext")),
                    reason="biber, pdflatex or pdftotext is not installed")
@pytest.mark.parametrize("style", ["authoryear", "alphabetic"])  # alphabetic: labels in a margin of their own
def test_a_bibliography_typeset_by_biblatex_reads_back_from_its_pdf(style):
    name = "ALICE-InRu-linear-dispatch-rules.tar.gz" if style == "alphabetic" else "farr-ExtraDims.tar.gz"
    _holds(measure_biblatex(name if name in PAPERS else PAPERS[0], style), f"biblatex {style}")


def _table(styles: list[str]) -> None:
    entries = dois = arxiv = 0
    for style in styles:
        if style_file(style) is None:
            print(f"{style:22s} not installed")
            continue
        measured = {name: measure(name, style) for name in PAPERS}
        failed = [name for name, r in measured.items() if r is None]
        results = [r for r in measured.values() if r is not None]
        ok = sum(passes(r) for r in results)
        printed = sum(r["printed"] for r in results)
        found = [sum(r[kind][0] for r in results) for kind in ("doi", "arxiv")]
        wanted = [sum(r[kind][1] for r in results) for kind in ("doi", "arxiv")]
        entries, dois, arxiv = entries + printed, dois + wanted[0], arxiv + wanted[1]
        print(f"{style:22s} papers {ok:3d}/{len(results)}  entries {printed:5d}  DOIs {found[0]:4d}/{wanted[0]:<4d} "
              f"arXiv {found[1]:4d}/{wanted[1]:<4d} invented {sum(len(r['invented']) for r in results):3d} "
              f"LaTeX {sum(len(r['latex']) for r in results):3d}"
              + (f"  (BibTeX died on {', '.join(failed)})" if failed else ""))
        for name, r in measured.items():
            if r is not None and not passes(r):
                print(f"    {name}: {r['count']}/{r['printed']} missing {r['missing'][:3]} dash {r['dash'][:2]} invented "
                      f"{r['invented'][:3]} LaTeX {r['latex'][:2]}")
    print(f"{len(styles)} styles x {len(PAPERS)} papers: {entries:,} entries, {dois:,} printed DOIs, "
          f"{arxiv:,} printed arXiv ids")


if __name__ == "__main__":
    _table(sys.argv[1:] or STYLES)
