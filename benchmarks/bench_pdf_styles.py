"""How well does the built-in PDF reader (``pdf_text``) read reference lists it has never seen, in
every common journal style? The corpus's BibTeX papers (tests/fixtures/papers/corpus/) are
formatted by BibTeX in each style and typeset by pdflatex (``tests/bibtex_styles.py``: a plain
``article`` with natbib, author-year or numbers as the style is meant for); each PDF is read back by
``papers.pdf.read.pdf_reference_strings`` and held to the ``.bbl`` it was typeset from. Prints, per
style: papers typeset, entries found of those printed (and papers whose count is off), identifiers
read, and identifiers read that no entry of the ``.bbl`` carries (wrong ones).

    .venv/bin/python benchmarks/bench_pdf_styles.py [--papers N] [STYLE ...]

Needs BibTeX, pdflatex and pdftotext (``.ci/run`` installs them where missing). Takes about 40 s
a style for the 59 papers on one core.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bibtex_styles import PAPERS, STYLES, measure_pdf, style_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("styles", nargs="*", help="styles to typeset (default: every style of the matrix)")
    parser.add_argument("--papers", type=int, default=len(PAPERS), help="the first N papers (default: all)")
    args = parser.parse_args()
    papers = PAPERS[:args.papers]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {len(papers)} papers")
    totals = {"printed": 0, "found": 0, "read": 0, "wrong": 0, "off": 0, "typeset": 0}
    for style in args.styles or STYLES:
        if style_file(style) is None:
            print(f"{style:22s} not installed")
            continue
        started = time.perf_counter()
        results = {name: measure_pdf(name, style) for name in papers}
        done = {name: r for name, r in results.items() if r is not None}
        printed = sum(r["printed"] for r in done.values())
        found = sum(min(r["found"], r["printed"]) for r in done.values())
        off = [f"{name} {r['found']}/{r['printed']}" for name, r in done.items() if r["found"] != r["printed"]]
        wrong = [i for r in done.values() for i in r["wrong"]]
        read = sum(r["read"] for r in done.values())
        for key, value in (("printed", printed), ("found", found), ("read", read), ("wrong", len(wrong)),
                           ("off", len(off)), ("typeset", len(done))):
            totals[key] += value
        print(f"{style:22s} typeset {len(done):3d}/{len(papers)}  entries {found:5d}/{printed:<5d} "
              f"({100 * found / max(1, printed):5.1f} %)  counts off {len(off):2d}  ids read {read:5d}  "
              f"wrong {len(wrong):3d}  {time.perf_counter() - started:5.1f} s")
        for line in off[:4]:
            print(f"    count off: {line}")
        for identifier in wrong[:4]:
            print(f"    wrong id: {identifier}")
    print(f"all: {totals['typeset']} PDFs, entries {totals['found']:,}/{totals['printed']:,} "
          f"({100 * totals['found'] / max(1, totals['printed']):.2f} %), {totals['off']} with the count off, "
          f"{totals['read']:,} identifiers read, {totals['wrong']} wrong")


if __name__ == "__main__":
    main()
