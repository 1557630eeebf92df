"""A directory of N papers (default 1,000) made from the real e-print fixtures, resolved by
``citeledger resolve DIR`` in one run, SIGKILLed once part-way (after its first batches are
written), resumed with the same ``--run-id``, then checked: every paper accounted for (its
references in the observations, or its file in the rejects), no reference lost or duplicated.

    .venv/bin/python benchmarks/soak_papers.py [--papers 1000] [--catalog DIR] [--no-kill]

About 1 % of the papers are broken on purpose (a truncated archive, binary junk named .tex, a
name with no arXiv id). Prints the progress lines the run wrote, the timings and the checks;
exit status 1 when a check fails.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402

from papers.names import citing_paper_from_name  # noqa: E402
from papers.reader import read_paper

FIXTURES = REPO / "tests" / "fixtures" / "papers"


def make_directory(folder: Path, count: int) -> dict[str, int]:
    """``count`` papers under new arXiv-style names; returns each file's expected reference count
    (0 for a broken one)."""
    sources = sorted(p for p in FIXTURES.iterdir() if p.name[0].isdigit())
    expected = {}
    for n in range(count):
        source = sources[n % len(sources)]
        suffix = ".tar.gz" if source.name.endswith(".tar.gz") else source.suffix
        name = f"2601.{n + 1:05d}{suffix}"
        data = source.read_bytes()
        if n % 100 == 37:
            name, data = f"2601.{n + 1:05d}.tar.gz", data[: len(data) // 3]  # truncated
        elif n % 100 == 71:
            name, data = f"2601.{n + 1:05d}.tex", os.urandom(4000)  # binary junk named .tex
        elif n % 100 == 89:
            name = f"paper-{n + 1}{suffix}"  # no arXiv id in the name
        (folder / name).write_bytes(data)
        expected[name] = len(read_paper(name, data).references) if not name.startswith("paper-") else 0
    return expected


def resolve(folder: Path, catalog: Path, ledger: Path, kill_after_parts: int | None) -> tuple[float, str, bool]:
    """Run the CLI; with ``kill_after_parts``, SIGKILL it once that many batches are written."""
    cmd = [sys.executable, "-m", "citeledger.cli", "resolve", str(folder), "--catalog", str(catalog),
           "--ledger", str(ledger), "--run-id", "soak-papers"]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ,
                                                                                          "PYTHONPATH": str(REPO)})
        killed = False
        while proc.poll() is None:
            parts = list((ledger / "observations" / "soak-papers").glob("*.parquet")) if kill_after_parts else []
            if kill_after_parts and len(parts) >= kill_after_parts:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                killed = True
                break
            time.sleep(0.2)
        err.seek(0)
        return time.perf_counter() - started, err.read(), killed


def check(ledger: Path, expected: dict[str, int]) -> list[str]:
    con = duckdb.connect()
    rows = con.sql(f"select citing_paper, reference_index from read_parquet('{ledger}/observations/**/*.parquet')"
                   ).fetchall()
    has_rejects = any(Path(ledger, "rejects").glob("**/*.parquet"))
    rejects = con.sql(f"select file from read_parquet('{ledger}/rejects/**/*.parquet')").fetchall() if has_rejects else []
    rejected = {Path(f.split("!")[0]).name for (f,) in rejects}
    seen = {p for p, _ in rows}
    problems = []
    if len(rows) != len(set(rows)):
        problems.append(f"{len(rows) - len(set(rows))} duplicated observations")
    if len(rows) != sum(expected.values()):
        problems.append(f"{len(rows):,} observations for {sum(expected.values()):,} references")
    lost = [name for name, refs in expected.items()
            if not (refs and citing_paper_from_name(name)[0] in seen) and not (not refs and name in rejected)]
    if lost:
        problems.append(f"{len(lost)} papers neither observed nor rejected: {lost[:5]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--catalog", type=Path, default=REPO / "data" / "catalog",
                        help="a built catalog (default data/catalog; built from data/sources when missing)")
    parser.add_argument("--no-kill", action="store_true", help="one uninterrupted run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, ledger = Path(tmp) / "papers", Path(tmp) / "ledger"
        folder.mkdir()
        expected = make_directory(folder, args.papers)
        if not (args.catalog / "CURRENT").is_file():
            from citeledger.catalog.catalog_store import CatalogStore

            args.catalog = Path(tmp) / "catalog"
            CatalogStore(args.catalog).build(sorted((REPO / "data" / "sources").glob("*")))
        print(f"{args.papers:,} papers, {sum(expected.values()):,} references expected, load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        if not args.no_kill:
            seconds, err, killed = resolve(folder, args.catalog, ledger, kill_after_parts=2)
            print(f"first run: {'SIGKILLed' if killed else 'ended'} after {seconds:.1f} s")
        seconds, err, _ = resolve(folder, args.catalog, ledger, kill_after_parts=None)
        print(f"{'resumed' if not args.no_kill else 'the'} run: {seconds:.1f} s; its progress lines (first and last):")
        lines = err.splitlines()
        print("".join(f"  {line}\n" for line in lines[:4] + ["..."] + lines[-3:]), end="")
        problems = check(ledger, expected)
        print("every paper accounted for, no reference lost or duplicated" if not problems else
              "PROBLEMS: " + "; ".join(problems))
        shutil.rmtree(ledger, ignore_errors=True)
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
