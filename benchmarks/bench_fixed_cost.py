"""A run's fixed cost against the size of the ledger it goes into: a one-reference ``citeledger
resolve`` (start-up, plan, one batch, finishing: notices, ledger.duckdb, the records of its paper, the
summary) into ledgers of the sample's references copied under ``--copies`` distinct sets of citing
papers (default 1 and 100: 323 and 32,300 references, 5 and 500 papers). Finishing that grows with the
ledger rather than with the run shows as a cost growing with the copies.

Each ledger is built first (one ``resolve`` of its references; not timed), then the one-reference run
is timed ``--repeat`` times (default 5) in fresh processes, each a new run into the same ledger; the
median wall and CPU seconds are printed with the machine's load before and after (``bench_cli``'s
environment: no PREFECT_API_URL, no CITELEDGER_*, the project's bytecode compiled). On a loaded
machine the CPU seconds are the comparable figures.

Usage: python benchmarks/bench_fixed_cost.py [--catalog /tmp/citeledger-bench-cli/catalog] [--copies 1,100]
       [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import BIN, ONE_REFERENCE, REPO, bench_env, ensure_catalog, load, measure, run  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog", default="/tmp/citeledger-bench-cli/catalog")
    ap.add_argument("--copies", default="1,100", help="comma-separated: ledgers of the sample copied this many times")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="citeledger-bench-fixed-"))
    env = bench_env(work)
    cli = str(BIN / "citeledger")
    catalog = ensure_catalog(args.catalog, env, work)
    sample = [json.loads(line) for line in (REPO / "data" / "sample_references.jsonl").read_text().splitlines()
              if line.strip()]
    one = work / "one.jsonl"
    one.write_text(ONE_REFERENCE)
    ledgers = []
    for copies in (int(c) for c in args.copies.split(",")):
        refs = work / f"refs-{copies}.jsonl"
        with refs.open("w") as out:
            for k in range(copies):
                for row in sample:
                    out.write(json.dumps(dict(row, citing_paper=f"copy-{k:05d}-{row['citing_paper']}")) + "\n")
        ledger = work / f"ledger-{copies}"
        wall, code, err = run([cli, "resolve", str(refs), "--catalog", catalog, "--ledger", str(ledger)], env, work)
        print(f"ledger of {copies * len(sample):,} references ({copies} copies): built in {wall:.1f} s, exit {code}"
              + (f": {err[-300:]}" if code else ""), flush=True)
        ledgers.append((copies, ledger))
    print(f"{sys.executable}, {args.repeat} runs each; before: {load()}", flush=True)
    for copies, ledger in ledgers:
        measure(f"1 ref into {copies * len(sample):,}", lambda i, ledger=ledger: [
            cli, "resolve", str(one), "--catalog", catalog, "--ledger", str(ledger)], env, work, args.repeat)
    print(f"after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
