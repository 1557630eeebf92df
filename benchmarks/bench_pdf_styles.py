"""How well does the built-in PDF reader (``pdf_text``) read reference lists it has never seen, in
every common journal style and document class? The corpus's BibTeX papers
(tests/fixtures/papers/corpus/) are formatted by BibTeX in each style and typeset by pdflatex
(``tests/bibtex_styles.py``): as a plain ``article`` with natbib (a style's name), in a document
class as its journal or conference sets it, with body text in its columns and an appendix after
the list (a class's name: ``elsarticle-preprint-lineno``, ``acmart-review``, ``revtex4-2-reprint``
...), or through biber in a biblatex style (``biblatex-numeric``, ``biblatex-apa`` ...). Each PDF is
read back by ``papers.pdf.read.pdf_reference_strings`` and held to the ``.bbl`` it was typeset
from. Prints, per style or class: PDFs typeset, entries found of those printed (and PDFs whose
count is off), identifiers read, printed identifiers found (for classes and biblatex: those the
PDF's text shows), identifiers read that no entry carries (wrong ones), and strings longer than
the longest entry's source.

    .venv/bin/python benchmarks/bench_pdf_styles.py [--papers N] [STYLE | CLASS | biblatex-STYLE ...]
    .venv/bin/python benchmarks/bench_pdf_styles.py --classes      # every class and biblatex style

Needs BibTeX, biber, pdflatex and pdftotext (``.ci/run`` installs them where missing). Takes about
40 s a style for the 59 papers on one core, about 2 min a class, 10 min a biblatex style.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bibtex_styles import (  # noqa: E402
    BIBLATEX_STYLES,
    CLASSES,
    PAPERS,
    STYLES,
    measure_biblatex,
    measure_class,
    measure_pdf,
    style_file,
)


def _measure(kind: str, name: str) -> dict | None:
    if kind in CLASSES:
        return measure_class(name, kind)
    if kind.startswith("biblatex-"):
        return measure_biblatex(name, kind.removeprefix("biblatex-"))
    return measure_pdf(name, kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("styles", nargs="*", help="styles, classes or biblatex-STYLE (default: every style)")
    parser.add_argument("--papers", type=int, default=len(PAPERS), help="the first N papers (default: all)")
    parser.add_argument("--classes", action="store_true", help="every document class and biblatex style")
    args = parser.parse_args()
    papers = PAPERS[:args.papers]
    kinds = args.styles or ([*CLASSES, *(f"biblatex-{s}" for s in BIBLATEX_STYLES)] if args.classes else STYLES)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {len(papers)} papers")
    totals = {"printed": 0, "found": 0, "read": 0, "wrong": 0, "off": 0, "typeset": 0, "ids": 0, "ids_found": 0,
              "long": 0}
    for kind in kinds:
        if kind not in CLASSES and not kind.startswith("biblatex-") and style_file(kind) is None:
            print(f"{kind:26s} not installed")
            continue
        started = time.perf_counter()
        results = {name: _measure(kind, name) for name in papers}
        done = {name: r for name, r in results.items() if r is not None}
        printed = sum(r["printed"] for r in done.values())
        found = sum(min(r["found"], r["printed"]) for r in done.values())
        off = [f"{name} {r['found']}/{r['printed']}" for name, r in done.items() if r["found"] != r["printed"]]
        wrong = [i for r in done.values() for i in r["wrong"]]
        read = sum(r["read"] for r in done.values())
        ids = sum(r.get("ids", 0) for r in done.values())
        ids_found = ids - sum(len(r.get("missed", [])) for r in done.values())
        long = [f"{name} {r['longest']} > {r['longest_source']}" for name, r in done.items()
                if r.get("longest_source") and r["longest"] > r["longest_source"]]
        for key, value in (("printed", printed), ("found", found), ("read", read), ("wrong", len(wrong)),
                           ("off", len(off)), ("typeset", len(done)), ("ids", ids), ("ids_found", ids_found),
                           ("long", len(long))):
            totals[key] += value
        shown = f"  printed ids {ids_found:5d}/{ids:<5d}" if "ids" in next(iter(done.values()), {}) else ""
        print(f"{kind:26s} typeset {len(done):3d}/{len(papers)}  entries {found:5d}/{printed:<5d} "
              f"({100 * found / max(1, printed):5.1f} %)  counts off {len(off):2d}  ids read {read:5d}{shown}  "
              f"wrong {len(wrong):3d}  too long {len(long):2d}  {time.perf_counter() - started:5.1f} s", flush=True)
        for line in off[:4]:
            print(f"    count off: {line}")
        for identifier in wrong[:4]:
            print(f"    wrong id: {identifier}")
        for name, r in list(done.items()):
            for identifier in r.get("missed", [])[:2]:
                print(f"    missed id: {name} {identifier}")
        for line in long[:2]:
            print(f"    too long: {line}")
    exact = totals["typeset"] - totals["off"]
    print(f"all: {totals['typeset']} PDFs, entries {totals['found']:,}/{totals['printed']:,} "
          f"({100 * totals['found'] / max(1, totals['printed']):.2f} %), exact count {exact}/{totals['typeset']} "
          f"({100 * exact / max(1, totals['typeset']):.1f} %), {totals['read']:,} identifiers read, "
          f"printed ids found {totals['ids_found']:,}/{totals['ids']:,}, {totals['wrong']} wrong, "
          f"{totals['long']} strings longer than the longest entry")


if __name__ == "__main__":
    main()
