"""Wall time of the everyday commands as a user meets them, beside the duckdb shell on the same
ledger: ``citeledger query``, ``runs``, ``record`` and a one-reference ``resolve`` against the
embedded catalog and the sample's ledger (a new run of it each time; and into a new ledger, whose
first run writes ``ledger.duckdb`` twice), with ``--help`` and a resolve against a missing catalog
(its exit code and how many lines it printed on stderr).

Each command runs in a fresh process (the ``citeledger`` and ``duckdb`` scripts beside this Python, a
temporary PREFECT_HOME, no PREFECT_API_URL, no CITELEDGER_* settings), ``--repeat`` times (default
5), with the project's bytecode compiled first and PYTHONDONTWRITEBYTECODE unset, as an installed
package runs (pip compiles a wheel's modules when it installs it; without them every command
compiles some 120 modules again, 0.15 s); the best and the median wall times are printed with each command's target, and the machine's
load average before and after: on a loaded machine the wall times are the load's, not the commands';
the CPU seconds each command used (its median) are printed beside, less sensitive to the load.
The catalog is built from ``data/sources/*`` into ``--catalog`` unless it is there, and the ledger
is the sample's (``data/sample_references.jsonl``), resolved once into a temporary folder.

Usage: python benchmarks/bench_cli.py [--catalog /tmp/citeledger-bench-cli/catalog] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ONE_REFERENCE = ('{"citing_paper": "bench", "reference_index": 1, "raw": "J. Devlin, M. Chang, K. Lee, '
                 'K. Toutanova. BERT: Pre-training of deep bidirectional transformers for language '
                 'understanding. arXiv:1810.04805, 2018."}\n')
QUERY = "select status, count(*) as n from current group by 1 order by 1"
# the targets of the everyday commands (seconds, median on a quiet machine)
TARGETS = {"query": 0.25, "runs": 0.3, "record": 0.5, "resolve, 1 reference": 0.8}


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    """Wall seconds, exit code and stderr of one command."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, done.returncode, done.stderr


def cpu_seconds() -> float:
    """User + system CPU seconds of the finished child processes so far (with their own children)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, argv_of, env: dict[str, str], cwd: Path, repeat: int) -> float:
    walls, cpus, codes, errs = [], [], set(), ""
    for i in range(repeat):
        before = cpu_seconds()
        wall, code, errs = run(argv_of(i), env, cwd)
        walls.append(wall)
        cpus.append(cpu_seconds() - before)
        codes.add(code)
    lines = len([x for x in errs.splitlines() if x.strip()])
    median = statistics.median(walls)
    target = TARGETS.get(name)
    verdict = "" if target is None else f"  target {target:.2f} s: {'met' if median <= target else 'NOT met'}"
    print(f"{name:<24} best {min(walls):6.3f} s  median {median:6.3f} s  (CPU median {statistics.median(cpus):6.3f} s)"
          f"  exit {sorted(codes)}  stderr lines {lines}{verdict}", flush=True)
    return median


def compile_bytecode(env: dict[str, str]) -> None:
    """The bytecode of the packages the ``citeledger`` script imports (where this Python finds them)."""
    found = subprocess.run([sys.executable, "-c", "import importlib.util; print('\\n'.join(importlib.util.find_spec(p)"
                            ".submodule_search_locations[0] for p in ('citeledger', 'resolvers', 'papers', 'flows')))"],
                           env=env, capture_output=True, text=True, check=True).stdout.split()
    subprocess.run([sys.executable, "-m", "compileall", "-q", *found], env=env, capture_output=True, check=True)
    print(f"bytecode compiled: {', '.join(found)}")


def bench_env(work: Path) -> dict[str, str]:
    """The commands' environment: no PREFECT_API_URL, no CITELEDGER_* settings, a temporary
    PREFECT_HOME under ``work``, bytecode written (and the project's compiled now)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PREFECT_API_URL", "PYTHONDONTWRITEBYTECODE") and not k.startswith("CITELEDGER_")}
    env.update(PREFECT_HOME=str(work / "prefect"), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90")
    compile_bytecode(env)
    return env


def ensure_catalog(folder: str, env: dict[str, str], work: Path) -> str:
    """The catalog folder (absolute), built from ``data/sources/*`` unless it holds a catalog."""
    catalog = str(Path(folder).resolve())
    if not (Path(catalog) / "CURRENT").exists():
        sources = sorted(str(p) for p in (REPO / "data" / "sources").glob("*"))
        wall, code, err = run([str(BIN / "citeledger"), "catalog", "build", "--catalog", catalog, *sources], env, work)
        print(f"catalog build: {wall:.1f} s, exit {code}{(': ' + err[-300:]) if code else ''}")
    return catalog


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog", default="/tmp/citeledger-bench-cli/catalog")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="citeledger-bench-cli-"))
    env = bench_env(work)
    cli, shell = str(BIN / "citeledger"), str(BIN / "duckdb")
    catalog, ledger = ensure_catalog(args.catalog, env, work), work / "ledger"
    wall, code, err = run([cli, "resolve", str(REPO / "data" / "sample_references.jsonl"), "--catalog", catalog,
                           "--ledger", str(ledger)], env, work)
    print(f"the sample's ledger: {wall:.1f} s, exit {code}{(': ' + err[-300:]) if code else ''}")
    refs = work / "one.jsonl"
    refs.write_text(ONE_REFERENCE)
    places = ["--ledger", str(ledger), "--catalog", catalog]
    print(f"{sys.executable}, {args.repeat} runs each; before: {load()}", flush=True)
    measure("duckdb shell, query", lambda i: [shell, str(ledger / "ledger.duckdb"), "-c", QUERY], env, work, args.repeat)
    measure("query", lambda i: [cli, "query", QUERY, *places], env, work, args.repeat)
    measure("runs", lambda i: [cli, "runs", "--ledger", str(ledger)], env, work, args.repeat)
    measure("record", lambda i: [cli, "record", "2212.11766", *places], env, work, args.repeat)
    measure("resolve, 1 reference", lambda i: [cli, "resolve", str(refs), *places], env, work, args.repeat)
    measure("resolve, new ledger", lambda i: [cli, "resolve", str(refs), "--catalog", catalog,
                                              "--ledger", str(work / f"ledger{i}")], env, work, args.repeat)
    measure("--help", lambda i: [cli, "--help"], env, work, args.repeat)
    measure("resolve, no catalog", lambda i: [cli, "resolve", str(refs), "--catalog", str(work / "no-catalog"),
                                              "--ledger", str(work / f"nl{i}")], env, work, args.repeat)
    print(f"after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
