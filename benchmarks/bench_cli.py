"""Wall time of the command line as a user meets it: ``citeledger --help``, a
one-reference ``citeledger resolve`` with the embedded catalog, and a resolve against a missing
catalog (its exit code and how many lines it printed on stderr).

Each command runs in a subprocess (a fresh interpreter, a temporary PREFECT_HOME, no
PREFECT_API_URL), ``--repeat`` times; the best and the median wall times are printed.
The catalog is built first from ``data/sources/*`` into ``--catalog`` unless it is there.

Usage: python benchmarks/bench_cli.py [--catalog /tmp/citeledger-bench-cli/catalog] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ONE_REFERENCE = ('{"citing_paper": "bench", "reference_index": 1, "raw": "J. Devlin, M. Chang, K. Lee, '
                 'K. Toutanova. BERT: Pre-training of deep bidirectional transformers for language '
                 'understanding. arXiv:1810.04805, 2018."}\n')


def run(argv: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds, exit code and stderr of ``python -m citeledger.cli ARGV``."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "citeledger.cli", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True)
    return time.perf_counter() - t0, done.returncode, done.stderr


def measure(name: str, argv_of, env: dict[str, str], repeat: int) -> None:
    walls, codes, errs = [], set(), ""
    for i in range(repeat):
        wall, code, errs = run(argv_of(i), env)
        walls.append(wall)
        codes.add(code)
    lines = len([x for x in errs.splitlines() if x.strip()])
    print(f"{name:<24} best {min(walls):6.2f} s  median {statistics.median(walls):6.2f} s  "
          f"exit {sorted(codes)}  stderr lines {lines}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog", default="/tmp/citeledger-bench-cli/catalog")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="citeledger-bench-cli-"))
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PYTHONPATH=str(REPO), PREFECT_HOME=str(work / "prefect"), DO_NOT_TRACK="1",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90")
    if not (Path(args.catalog) / "CURRENT").exists():
        sources = sorted(str(p) for p in (REPO / "data" / "sources").glob("*"))
        wall, code, err = run(["catalog", "build", "--catalog", args.catalog, *sources], env)
        print(f"catalog build: {wall:.1f} s, exit {code}{(': ' + err[-300:]) if code else ''}")
    refs = work / "one.jsonl"
    refs.write_text(ONE_REFERENCE)
    measure("--help", lambda i: ["--help"], env, args.repeat)
    measure("resolve, 1 reference", lambda i: ["resolve", str(refs), "--catalog", args.catalog,
                                               "--ledger", str(work / f"ledger{i}")], env, args.repeat)
    measure("resolve, no catalog", lambda i: ["resolve", str(refs), "--catalog", str(work / "no-catalog"),
                                              "--ledger", str(work / f"nl{i}")], env, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
