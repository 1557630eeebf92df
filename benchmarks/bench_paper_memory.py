"""Does one paper's memory grow with its bibliography? ``citeledger resolve PAPER.bbl`` over
papers of N ``\\bibitem``s each (N from a few to ``papers.max_references`` and past it), every one
in a fresh process: its peak RSS, what the paper adds over the smallest one, and that per
reference. A paper over the bound is refused by the reader before its entries are made (a
reject row), so its peak is the smallest paper's.

The entries are references a paper prints (authors, title, journal, volume, pages, year and, for
a third of them, a DOI), each different; the catalog is the embedded default one (built into a
temporary folder first), so every reference is looked up and most find nothing, as most of a
real paper's references do against a small catalog.

    .venv/bin/python benchmarks/bench_paper_memory.py [--sizes 10,1000,2500,5000,10000,10001,500000]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
sys.path.insert(0, str(REPO))  # (the ledger views are read here; each resolve runs in a child)

CHILD = """
import json, resource, sys, time
from citeledger.cli import main
t0 = time.perf_counter()
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": time.perf_counter() - t0}))
"""

SURNAMES = ["Smith", "Garcia", "Chen", "Okafor", "Novak", "Tanaka", "Dubois", "Rossi", "Kowalski", "Silva"]
WORDS = ["spectral", "inference", "galaxies", "turbulent", "networks", "quantum", "sparse", "stellar",
         "bayesian", "lattice", "dynamics", "protein", "entropy", "graphs", "clusters", "waves"]
JOURNALS = ["Phys. Rev. D", "Astrophys. J.", "Mon. Not. R. Astron. Soc.", "J. Mach. Learn. Res.", "Nature"]


def bibitem(i: int) -> str:
    """The ``i``-th entry: its words chosen by ``i`` so that no two entries are the same."""
    a, b = SURNAMES[i % 10], SURNAMES[(i // 10) % 10]
    title = " ".join(WORDS[(i * k + k) % 16] for k in (1, 3, 5, 7, 11))
    doi = f" \\newblock doi:10.5555/bench.{i}" if i % 3 == 0 else ""
    return (f"\\bibitem{{ref{i}}}\n{a}, A. and {b}, B. {title.capitalize()} of case {i}.\n"
            f"{JOURNALS[i % 5]} \\textbf{{{i % 900 + 1}}}, {i % 9000 + 1} ({1950 + i % 75}).{doi}\n")


def write_paper(path: Path, n: int) -> None:
    with path.open("w") as out:
        out.write(f"\\begin{{thebibliography}}{{{n}}}\n")
        for i in range(n):
            out.write(bibitem(i))
        out.write("\\end{thebibliography}\n")


def resolve(paper: Path, catalog: Path, ledger: Path) -> dict:
    done = subprocess.run([PYTHON, "-c", CHILD, "resolve", str(paper), "--catalog", str(catalog),
                           "--ledger", str(ledger), "--citing-paper", paper.stem],
                          cwd=REPO, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"resolve of {paper.name} printed nothing: {done.stderr[-2000:]}")
    return json.loads(lines[-1])


def counts(ledger: Path, catalog: Path) -> tuple[int, int]:
    """Observations and reject rows the run left (the views ``citeledger query`` reads)."""
    from citeledger.ledger.ledger_store import connect_views

    con = connect_views(ledger, catalog)
    try:
        return tuple(int(con.execute(f"select count(*) from {view}").fetchone()[0])  # type: ignore[return-value]
                     for view in ("observations", "rejects"))
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,1000,2500,5000,10000,10001,500000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-paper-memory-") as tmp:
        work = Path(tmp)
        catalog = work / "catalog"
        subprocess.run([PYTHON, "-m", "citeledger.cli", "catalog", "build", "--catalog", str(catalog),
                        *sorted(str(p) for p in (REPO / "data" / "sources").glob("*"))],
                       cwd=REPO, check=True, capture_output=True)
        print(f"{'entries':>8} {'bbl MB':>7} {'exit':>4} {'observations':>12} {'rejects':>7} {'peak MB':>8} "
              f"{'over smallest':>13} {'KB/reference':>12} {'seconds':>8}")
        base = None
        for n in sizes:
            paper = work / f"paper-{n}.bbl"
            write_paper(paper, n)
            ledger = work / f"ledger-{n}"
            t0 = time.perf_counter()
            got = resolve(paper, catalog, ledger)
            obs, rej = counts(ledger, catalog)
            base = got["peak_mb"] if base is None else base
            extra = got["peak_mb"] - base
            per = f"{extra * 1024 / obs:.1f}" if obs and n != sizes[0] else "-"
            print(f"{n:>8} {paper.stat().st_size / 1e6:>7.2f} {got['code']:>4} {obs:>12} {rej:>7} "
                  f"{got['peak_mb']:>8.0f} {extra:>13.0f} {per:>12} {time.perf_counter() - t0:>8.1f}")
            paper.unlink()


if __name__ == "__main__":
    main()
