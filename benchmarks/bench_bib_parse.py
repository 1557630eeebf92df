"""How fast are ``.bib`` and ``.bbl`` inputs read? Prints seconds for N BibTeX entries and
M ``\\bibitem``s (default 8,000 and 40,000; doubling them should about double the time).

    .venv/bin/python benchmarks/bench_bib_parse.py [N_BIB] [N_BBL]

Figures: benchmarks/RESULTS.md, "Reading .bib and .bbl inputs".
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import InputLimits


def bib_text(n: int) -> str:
    return "".join(f"@article{{key{i},\n  author = {{Smith, J. and Doe, A.}},\n  title = {{A {{Study}} of "
                   f"things number {i}}},\n  journal = {{J. Stuff}},\n  year = {{2001}},\n  pages = {{1--9}}\n}}\n\n"
                   for i in range(n))


def bbl_text(n: int) -> str:
    items = "".join(f"\\bibitem[Smith(2001)]{{key{i}}}\nJ.~Smith and A.~Doe.\n\\newblock {{\\em A study of things "
                    f"number {i}}}.\n\\newblock {{\\em J. Stuff}}, 3:1--9, 2001.\n\n" for i in range(n))
    return "\\begin{thebibliography}{99}\n" + items + "\\end{thebibliography}\n"


def timed(path: Path) -> tuple[int, float]:
    t0 = time.perf_counter()
    count = sum(1 for _ in read_references(path, InputLimits(), "2101.00001"))
    return count, time.perf_counter() - t0


def main() -> None:
    n_bib = int(sys.argv[1]) if len(sys.argv) > 1 else 8_000
    n_bbl = int(sys.argv[2]) if len(sys.argv) > 2 else 40_000
    work = Path(tempfile.mkdtemp(prefix="bench-bib-"))
    (work / "refs.bib").write_text(bib_text(n_bib))
    (work / "refs.bbl").write_text(bbl_text(n_bbl))
    for name in ("refs.bib", "refs.bbl"):
        count, seconds = timed(work / name)
        print(f"{name}: {count:,} entries read in {seconds:.2f} s")


if __name__ == "__main__":
    main()
