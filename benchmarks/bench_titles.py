"""How often a citing paper's own title is read from its source (``papers.titles``), on the real
papers in the repository: the LaTeX corpus (``tests/fixtures/papers/corpus/``: how many e-prints
give a ``\\title``) and the PDF corpus (``tests/fixtures/pdf_corpus/``: each PDF's title, read from
its metadata or its first page, beside the ``\\title`` of the LaTeX source it was typeset from;
agreement is rapidfuzz's ``ratio`` of the lower-cased titles, 90 or more counted as the same
title). Prints each PDF that disagrees, then the counts and the seconds taken.

    PYTHONPATH=. python benchmarks/bench_titles.py
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from rapidfuzz import fuzz

from papers.pdf.read import PdfTextLimits, layout_xhtml
from papers.pdf.title import pdf_title
from papers.reader import read_paper

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
SAME = 90.0


def main() -> None:
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    started = time.perf_counter()
    eprints = sorted((FIXTURES / "papers" / "corpus").glob("*.tar.gz"))
    titled = sum(1 for path in eprints if read_paper(path.name, path.read_bytes()).title)
    print(f"LaTeX corpus: {titled} of {len(eprints)} e-prints give a title ({time.perf_counter() - started:.1f} s)")
    started = time.perf_counter()
    compared = same = found = by_metadata = 0
    pdfs = sorted((FIXTURES / "pdf_corpus").glob("*.pdf"))
    for pdf in pdfs:
        source = FIXTURES / "pdf_corpus" / "sources" / f"{pdf.stem}.tar.gz"
        want = read_paper(source.name, source.read_bytes()).title if source.exists() else None
        got = pdf_title(layout_xhtml(pdf.read_bytes(), PdfTextLimits(max_pages=1)))
        found += got is not None
        by_metadata += got is not None and got[1] == "PDF metadata"
        if want is None:
            continue
        compared += 1
        score = fuzz.ratio((got[0] if got else "").lower(), want.lower())
        same += score >= SAME
        if score < SAME:
            print(f"  {pdf.name}: {score:.0f}\n    source: {want}\n    PDF:    {got}")
    print(f"PDF corpus: a title read from {found} of {len(pdfs)} PDFs ({by_metadata} from their metadata); "
          f"of the {compared} whose source gives a title, {same} agree with it (ratio >= {SAME:.0f}) "
          f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
