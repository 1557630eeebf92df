"""Resolve the glutton dev set with the default runner (threads) and on a local Dask cluster of
N worker processes; print both throughputs and check that both ledgers hold the same
observations (ids, states, works).

    .venv/bin/python benchmarks/bench_dask.py [--workers 2] [--batch-size 1000] [--limit N]

Builds a catalog from data/sources/* into a temporary folder; each run writes its own ledger.
Throughput counts the resolve step only (batches), then the whole flow run.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

REPO = Path(__file__).resolve().parent.parent
GLUTTON = REPO.parent / "shared" / "data" / "refs" / "glutton_dev.jsonl.gz"


def observations(ledger: Path) -> list[tuple]:
    import duckdb

    con = duckdb.connect()
    try:
        return con.execute(f"SELECT citing_paper, reference_index, observation_id, observation_digest, status, work_id "
                           f"FROM read_parquet('{ledger}/observations/**/*.parquet') ORDER BY 1, 2").fetchall()
    finally:
        con.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--input", default=str(GLUTTON))
    parser.add_argument("--limit", type=int, default=None, help="resolve only the first N references")
    args = parser.parse_args()

    from citeledger.catalog import CatalogStore
    from flows.resolve import resolve_references

    tmp = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    catalog = tmp / "catalog"
    t = time.perf_counter()
    report = CatalogStore(catalog).build(sorted((REPO / "data" / "sources").glob("*")))
    print(f"catalog: {report.works} works from data/sources in {time.perf_counter() - t:.1f} s")
    inputs = args.input
    if args.limit:
        import gzip

        inputs = str(tmp / "refs.jsonl")
        with gzip.open(args.input, "rt") as src, open(inputs, "w") as out:
            for i, line in enumerate(src):
                if i >= args.limit:
                    break
                out.write(line)

    results = {}
    for label, runner in (("threads", {"task_runner": "threads"}),
                          (f"dask x{args.workers}", {"task_runner": "dask", "dask_workers": args.workers})):
        ledger = tmp / f"ledger-{runner['task_runner']}"
        t = time.perf_counter()
        summary = resolve_references(inputs=[inputs], catalog=str(catalog), ledger=str(ledger), run_id="bench",
                                     batch_size=args.batch_size, records=False, **runner)
        wall = time.perf_counter() - t
        resolve_s = summary["timings"]["resolve"]
        results[label] = (ledger, summary)
        print(f"{label:>9}: {summary['references']} references; resolve step {resolve_s:.1f} s = "
              f"{summary['references'] / resolve_s:.0f} references/s; whole flow {wall:.1f} s = "
              f"{summary['references'] / wall:.0f} references/s")
    (a_ledger, a), (b_ledger, b) = results.values()
    same = observations(a_ledger) == observations(b_ledger)
    print(f"same observations (ids, digests, states, works): {same}; states {a['states']}")
    return 0 if same and a["states"] == b["states"] else 1


if __name__ == "__main__":
    sys.exit(main())
