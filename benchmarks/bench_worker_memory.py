"""How much memory does each resolving worker hold of its own, and does it grow with the catalog?

The fuzzy index is memory-mapped from files of the catalog generation (``citeledger.index.blocking``),
its touched pages handed back to the page cache past a budget (``citeledger.storage.mapped_files``); the
works and their comparison forms are read by positional reads of the row files
(``citeledger.works.work_rows``). So worker processes share the catalog's pages through the OS page
cache and a worker's RSS stays about its own heap plus that budget. This starts N worker processes on a built catalog, has each load the matcher and resolve
a share of real reference strings on the fuzzy path, and prints per worker (from
``/proc/PID/smaps_rollup``):
- private memory (USS: Private_Clean + Private_Dirty): what the worker alone holds;
- PSS (its own pages plus its share of pages it maps with others);
- RSS (every page it touches, shared ones counted in full);
after loading and after resolving, plus references per second.

Run it on catalogs of two sizes: if the private memory stays about the same, it does not grow
with the catalog. Linux only.

    .venv/bin/python benchmarks/bench_worker_memory.py CATALOG_DIR [--workers 2] [--refs FILE] [--limit N]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_REFS = REPO.parent / "shared" / "data" / "refs" / "glutton_dev.jsonl.gz"
_RESOLVER = None


def smaps() -> dict[str, int]:
    """This process's memory in MB, from smaps_rollup."""
    fields = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0]) // 1024
    return {"rss": fields["Rss"], "pss": fields["Pss"], "private": fields["Private_Clean"] + fields["Private_Dirty"]}


def _load(catalog_dir: str) -> None:
    global _RESOLVER
    from citeledger.engine import process_cache as workers

    t0 = time.perf_counter()
    _RESOLVER = workers.get_fuzzy(workers.get_catalog(catalog_dir))
    _LOADED.update(smaps(), seconds=round(time.perf_counter() - t0, 2))


_LOADED: dict = {}


def _resolve(raws: list[str]) -> dict:
    from resolvers.resolution import fuzzy_verdicts

    t0 = time.perf_counter()
    verdicts = fuzzy_verdicts(_RESOLVER, raws)
    seconds = time.perf_counter() - t0
    links = sum(1 for v in verdicts if v.work is not None)
    return {"pid": os.getpid(), "loaded": dict(_LOADED), "after": smaps(), "refs": len(raws),
            "links": links, "seconds": seconds}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("catalog")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--refs", default=str(DEFAULT_REFS))
    ap.add_argument("--limit", type=int, default=4000)
    args = ap.parse_args(argv)
    opener = gzip.open if args.refs.endswith(".gz") else open
    with opener(args.refs, "rt", encoding="utf-8") as fh:
        raws = [row["raw"] for row in map(json.loads, fh) if row.get("raw")][: args.limit]
    shares = [raws[i::args.workers] for i in range(args.workers)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers, initializer=_load, initargs=(args.catalog,)) as pool:
        results = list(pool.map(_resolve, shares))
    wall = time.perf_counter() - t0
    from citeledger.catalog.catalog_store import CatalogStore

    gen = CatalogStore(args.catalog).current()
    mapped = sum(p.stat().st_size for p in gen.glob("*") if p.suffix in (".npy", ".arrow")) // 2**20
    manifest = json.loads((gen / "manifest.json").read_text())
    print(f"catalog {args.catalog}: {manifest.get('works'):,} works, mapped files {mapped:,} MB; "
          f"{len(raws):,} references over {args.workers} workers in {wall:.1f} s (load included)")
    print(f"{'worker':>8} {'load s':>7} {'private MB (loaded -> after)':>30} {'PSS MB':>14} {'RSS MB':>14} {'refs/s':>8}")
    for r in results:
        lo, af = r["loaded"], r["after"]
        print(f"{r['pid']:>8} {lo['seconds']:>7} {lo['private']:>13} -> {af['private']:<13} "
              f"{lo['pss']:>6}->{af['pss']:<6} {lo['rss']:>6}->{af['rss']:<6} {r['refs'] / r['seconds']:>8.0f}")
    print(f"sum over workers after resolving: private {sum(r['after']['private'] for r in results):,} MB, "
          f"PSS {sum(r['after']['pss'] for r in results):,} MB, RSS {sum(r['after']['rss'] for r in results):,} MB")


if __name__ == "__main__":
    main()
