"""Speed of `citeledger query` over a ledger: each query's best of three runs, in process.

    PYTHONPATH=. python benchmarks/bench_query.py --ledger /tmp/q-ledger --catalog /tmp/q-cat

A ledger to try: `citeledger catalog build --catalog /tmp/q-cat data/sources/*`, then
`citeledger resolve /work/shared/data/refs/glutton_dev.jsonl.gz --catalog /tmp/q-cat --ledger /tmp/q-ledger`
(12,485 references); copy its observations folder 80 times under other run names for a 1M-row one.
"""
from __future__ import annotations

import argparse
import time

QUERIES = {
    "count observations": "select count(*) from observations",
    "status counts (current)": "select status, count(*) from current group by 1 order by 1",
    "one paper, two columns": "select reference_index, status from observations "
                              "where citing_paper = (select min(citing_paper) from observations)",
    "transitions": "select count(*) from transitions",
    "links joined to works": "select count(*) from current c join works w using (work_id)",
    "notices": "select count(*) from notices",
    "works by year": "select year, count(*) from works group by 1 order by 2 desc limit 5",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--catalog", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from citeledger.ledger.query import run_query

    for name, sql in QUERIES.items():
        best, rows = float("inf"), None
        for _ in range(args.repeat):
            started = time.perf_counter()
            rows = run_query(sql, args.ledger, args.catalog).fetchall()
            best = min(best, time.perf_counter() - started)
        print(f"{name:<26} {best * 1000:8.1f} ms  {str(rows[:2])[:60]}")


if __name__ == "__main__":
    main()
