"""How fast are papers read? References extracted per second and papers per second from the
real e-print fixtures (tests/fixtures/papers/), one process, for each fixture and for the
.bbl-bearing tarballs together (the target: >= 200 papers/s).

    .venv/bin/python benchmarks/bench_papers.py [--seconds S] [--papers N]

Each paper's bytes are read with ``papers.read_paper`` (in memory: decompressing, walking the tar,
choosing the bibliography, turning each entry into a string), repeatedly for about S seconds.
``--papers N`` also times ``read_paper`` over a directory of N papers written to a temporary
folder (the files read from disk, as ``citeledger resolve DIR`` does). Both wall-clock and CPU
time are printed: on a shared machine the CPU figure is the one that says what the code costs.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from papers import read_paper  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "papers"


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


if __name__ == "__main__":
    main()
