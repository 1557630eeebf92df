"""How fast does the built-in PDF reader (``papers.pdf.read``) read papers' references? Prints,
in one process, per PDF and in total: references found, milliseconds, then PDFs/second and
references/second, split into pdftotext's time (the subprocess) and the Python time (parsing the
word boxes, reading order, section, entries, identifier joins).

    .venv/bin/python benchmarks/bench_pdf_text.py [FOLDER_OR_PDF ...] [--rounds N]

Default PDFs: tests/fixtures/grobid/N18-3011.pdf and the corpus PDFs of tests/fixtures/pdfs/
(or those of $CITELEDGER_PAPER_PDFS, another folder of them). Needs
pdftotext (poppler-utils). Each PDF is read ``--rounds`` times (default 3); the best round
counts, so a busy shared machine inflates the figures less.

Figures: benchmarks/RESULTS.md, "PDFs without GROBID".
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from papers.pdf.entries import reference_strings  # noqa: E402
from papers.pdf.layout import reading_order  # noqa: E402
from papers.pdf.read import layout_xhtml, pdftotext_path  # noqa: E402

PDFS = REPO / "tests" / "fixtures" / "pdfs"
PLACES = [os.environ.get("CITELEDGER_PAPER_PDFS", ""), str(PDFS)]


def default_pdfs() -> list[Path]:
    found = [REPO / "tests" / "fixtures" / "grobid" / "N18-3011.pdf"]
    manifest = PDFS / "expected_pdfs.json"
    names = [k for k in json.loads(manifest.read_text()) if not k.startswith("_")] if manifest.is_file() else []
    for name in names:
        path = next((Path(p) / name for p in PLACES if p and (Path(p) / name).is_file()), None)
        if path is not None:
            found.append(path)
    return found


def given_pdfs(args: list[str]) -> list[Path]:
    out: list[Path] = []
    for arg in args:
        path = Path(arg)
        out += sorted(path.glob("*.pdf")) if path.is_dir() else [path]
    return out


def measure(pdf: Path, rounds: int) -> tuple[int, float, float]:
    """(references, best pdftotext seconds, best Python seconds) over ``rounds`` readings."""
    data = pdf.read_bytes()
    best_tool = best_py = float("inf")
    count = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        xhtml = layout_xhtml(data)
        t1 = time.perf_counter()
        count = len(reference_strings(reading_order(xhtml)))
        t2 = time.perf_counter()
        best_tool, best_py = min(best_tool, t1 - t0), min(best_py, t2 - t1)
    return count, best_tool, best_py


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pdfs", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if pdftotext_path() is None:
        sys.exit("pdftotext is not installed (apt-get install poppler-utils)")
    pdfs = given_pdfs(args.pdfs) if args.pdfs else default_pdfs()
    total_refs, total_tool, total_py = 0, 0.0, 0.0
    for pdf in pdfs:
        refs, tool, py = measure(pdf, args.rounds)
        total_refs, total_tool, total_py = total_refs + refs, total_tool + tool, total_py + py
        print(f"{pdf.name:45s} {refs:4d} refs  pdftotext {tool * 1000:7.1f} ms  python {py * 1000:7.1f} ms")
    total = total_tool + total_py
    print(f"{len(pdfs)} PDFs, {total_refs} references in {total:.3f} s (pdftotext {total_tool:.3f} s, "
          f"python {total_py:.3f} s): {len(pdfs) / total:.1f} PDFs/s, {total_refs / total:.0f} references/s")


if __name__ == "__main__":
    main()
