"""How fast are papers read? References extracted per second and papers per second from the
real e-print fixtures (tests/fixtures/papers/), one process, for each fixture and for the
.bbl-bearing tarballs together (the target: >= 200 papers/s).

    .venv/bin/python benchmarks/bench_papers.py [--seconds S] [--papers N]

Each paper's bytes are read with ``papers.reader.read_paper`` (in memory: decompressing, walking the tar,
choosing the bibliography, turning each entry into a string), repeatedly for about S seconds.
``--papers N`` also times ``read_paper`` over a directory of N papers written to a temporary
folder (the files read from disk, as ``citeledger resolve DIR`` does). ``--corpus DIR`` (default
tests/fixtures/papers/corpus/, or ``$CITELEDGER_PAPER_CORPUS``) times the real paper corpus
(tests/fixtures/papers/corpus.json) by form: BibTeX ``.bbl`` tarballs, biblatex papers,
``.bib``-only tarballs, inline bibliographies; ``--pdfs DIR`` (default tests/fixtures/pdfs/, or
``$CITELEDGER_PAPER_PDFS``) times ``papers.pdf.read.read_pdf_text`` over its PDFs (poppler's
``pdftotext`` included: CPU figures count this process and its children). Both wall-clock and CPU
time are printed: on a shared machine the CPU figure is the one that says what the code costs.

    .venv/bin/python benchmarks/bench_papers.py [--corpus DIR] [--pdfs DIR] [--seconds S]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from step_timer import cpu_with_children  # noqa: E402

from papers.reader import read_paper  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "papers"


def corpus_groups(corpus: Path) -> dict[str, list[tuple[str, bytes]]]:
    """The corpus papers present in ``corpus``, by form: biblatex (any form), else the answer's kind."""
    answers = json.loads((FIXTURES / "corpus.json").read_text())
    specs = json.loads((FIXTURES / "corpus_papers.json").read_text())
    groups: dict[str, list[tuple[str, bytes]]] = {}
    for name, answer in sorted(answers.items()):
        if name.startswith("_") or not (corpus / name).is_file():
            continue
        form = "biblatex" if "biblatex" in specs.get(name, {}).get("style", "") else FORMS.get(answer["kind"], answer["kind"])
        groups.setdefault(form, []).append((name, (corpus / name).read_bytes()))
    return groups


FORMS = {"bbl": "BibTeX .bbl tarballs", "bib": ".bib-only tarballs", "tex": "inline thebibliography"}


def timed_pdfs(pdfs: list[Path], seconds: float) -> tuple[int, int, float, float]:
    """(PDFs read, references found, wall seconds, CPU seconds with pdftotext) over about ``seconds``."""
    from papers.pdf.read import read_pdf_text

    data = [(f"2601.{i + 1:05d}.pdf", p.read_bytes()) for i, p in enumerate(pdfs)]
    count = refs = 0
    wall, cpu = time.perf_counter(), cpu_with_children()
    while time.perf_counter() - wall < seconds or count == 0:
        for name, pdf in data:
            refs += len(read_pdf_text(name, pdf).references)
            count += 1
    return count, refs, time.perf_counter() - wall, cpu_with_children() - cpu


def fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.name[0].isdigit())


def timed(papers: list[tuple[str, bytes]], seconds: float) -> tuple[int, int, float, float]:
    """(papers read, references extracted, wall seconds, CPU seconds) over about ``seconds``."""
    count = refs = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds or count == 0:
        for name, data in papers:
            refs += len(read_paper(name, data).references)
            count += 1
    return count, refs, time.perf_counter() - wall, time.process_time() - cpu


def line(label: str, count: int, refs: int, wall: float, cpu: float) -> str:
    return (f"{label:<34} {count / wall:>8,.0f} papers/s {refs / wall:>9,.0f} refs/s (wall)   "
            f"{count / cpu:>8,.0f} papers/s {refs / cpu:>9,.0f} refs/s (CPU)")


def directory_run(n: int) -> str:
    """Read N papers from files in a folder, as a resolve over a directory does."""
    sources = fixtures()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            source = sources[i % len(sources)]
            suffix = ".tar.gz" if source.name.endswith(".tar.gz") else source.suffix
            shutil.copy(source, Path(tmp) / f"2601.{i + 1:05d}{suffix}")
        files = sorted(Path(tmp).iterdir())
        wall, cpu = time.perf_counter(), time.process_time()
        refs = sum(len(read_paper(p.name, p.read_bytes()).references) for p in files)
        return line(f"directory of {n:,} papers", n, refs, time.perf_counter() - wall, time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    parser.add_argument("--papers", type=int, default=0, help="also read a directory of this many papers")
    parser.add_argument("--corpus", default=os.environ.get("CITELEDGER_PAPER_CORPUS") or str(FIXTURES / "corpus"),
                        help="folder of the packed paper corpus: papers/s by form")
    parser.add_argument("--pdfs", default=os.environ.get("CITELEDGER_PAPER_PDFS") or str(FIXTURES.parent / "pdfs"),
                        help="folder of PDFs: papers/s through pdf_text")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    bbl = []
    for path in fixtures():
        data = path.read_bytes()
        paper = read_paper(path.name, data)
        kind = paper.references[0].kind if paper.references else "-"
        if kind == "bbl":
            bbl.append((path.name, data))
        print(line(f"{path.name} ({kind}, {len(paper.references)} refs)", *timed([(path.name, data)], args.seconds)))
    if bbl:
        count, refs, wall, cpu = timed(bbl, args.seconds)
        print(line(".bbl-bearing tarballs", count, refs, wall, cpu))
        print(f"target >= 200 papers/s for .bbl-bearing tarballs: {'met' if count / cpu >= 200 else 'NOT met'} "
              f"by CPU time ({count / cpu:,.0f}/s), {'met' if count / wall >= 200 else 'not met'} by wall clock "
              f"({count / wall:,.0f}/s)")
    if args.papers:
        print(directory_run(args.papers))
    if args.corpus:
        for form, papers in sorted(corpus_groups(Path(args.corpus)).items()):
            print(line(f"corpus: {form} ({len(papers)})", *timed(papers, args.seconds)))
    if args.pdfs:
        pdfs = sorted(Path(args.pdfs).glob("*.pdf"))
        if pdfs:
            print(line(f"PDFs, pdf_text ({len(pdfs)})", *timed_pdfs(pdfs, args.seconds)))


if __name__ == "__main__":
    main()
