"""Build time and peak RSS of ``citeledger catalog build`` on N synthetic works in each catalog
source's own shape (OpenAlex snapshot folder, Crossref public data folder, arXiv snapshot, DBLP
XML), as a user runs it: one CLI process per shape, peak RSS from that process's rusage.

    python benchmarks/bench_catalog_readers.py [N] [--shapes openalex,crossref,arxiv,dblp] [--work DIR]

The source files are generated once into DIR (default /tmp/citeledger-shapes-N) and reused.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def generate(shape: str, n: int, out: Path) -> float:
    if out.exists():
        return 0.0
    started = time.monotonic()
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "synthetic_catalog.py"), str(n), str(out),
                    "--shape", shape], check=True)
    return time.monotonic() - started


def build(source: Path, catalog: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in bytes, the CLI's output) of one catalog build process."""
    shutil.rmtree(catalog, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "citeledger.cli", "catalog", "build", "--catalog", str(catalog),
                             str(source)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"build of {source} failed ({proc.returncode}):\n{out}")
    return time.monotonic() - started, usage.ru_maxrss * 1024, out


def summary(out: str) -> dict[str, int]:
    rows = rejects = skipped = 0
    for line in out.splitlines():
        if " rows, " in line and not line.startswith("  "):
            parts = line.rsplit(": ", 1)[1].split(", ")
            rows += int(parts[1].split()[0])
            rejects += int(parts[2].split()[0])
            skipped += int(parts[3].split()[0]) if len(parts) > 3 else 0
    works = int(out.strip().splitlines()[-1].split(": ", 1)[1].split()[0])
    return {"rows": rows, "rejects": rejects, "skipped": skipped, "works": works}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, nargs="?", default=1_000_000)
    parser.add_argument("--shapes", default="openalex,crossref,arxiv,dblp")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args(argv)
    work = args.work or Path(f"/tmp/citeledger-shapes-{args.n}")
    work.mkdir(parents=True, exist_ok=True)
    print("| shape | source size | generate s | build s | peak RSS | rows | rejects | not works | works |")
    print("|---|---|---|---|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        source = work / shape
        gen_s = generate(shape, args.n, source)
        size = sum(p.stat().st_size for p in source.rglob("*")) if source.is_dir() else source.stat().st_size
        seconds, rss, out = build(source, work / f"catalog-{shape}")
        s = summary(out)
        print(f"| {shape} | {size / 1e6:,.0f} MB | {gen_s:,.0f} | {seconds:,.1f} | {rss / 2**30:.2f} GiB | "
              f"{s['rows']:,} | {s['rejects']:,} | {s['skipped']:,} | {s['works']:,} |", flush=True)
        shutil.rmtree(work / f"catalog-{shape}", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
