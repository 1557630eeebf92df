"""Resolve the glutton dev set in one process (threads) and on a local Dask cluster of N worker
processes, before and after the catalog's fuzzy index is split into shards on that cluster; print
throughputs, the shard build's figures and peak memory, and check that every ledger holds the
one-process observations (ids, digests, states, works).

    .venv/bin/python benchmarks/bench_dask.py [--workers 2] [--shards 4] [--batch-size 1000] [--limit N]
        [--catalog-from DIR | --sources FILE...] [--rebuild-index]

The catalog is built from ``--sources`` (default data/sources/*) into a temporary folder, or a
built catalog (``--catalog-from``, e.g. /work/s5/cat1m) is copied there; each run writes its own
ledger. ``--rebuild-index`` also times the unsharded index build in one process (the baseline of
the per-shard build figures). Throughput counts the resolve step (batches), then the whole flow.
Memory: the peak summed PSS of this process and its children (shared pages counted once, split
among the processes mapping them), sampled every second.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

REPO = Path(__file__).resolve().parent.parent
GLUTTON = REPO.parent / "shared" / "data" / "refs" / "glutton_dev.jsonl.gz"
if not GLUTTON.exists():
    GLUTTON = Path("/work/shared/data/refs/glutton_dev.jsonl.gz")


def observations(ledger: Path) -> list[tuple]:
    import duckdb

    con = duckdb.connect()
    try:
        return con.execute(f"SELECT citing_paper, reference_index, observation_id, observation_digest, status, work_id "
                           f"FROM read_parquet('{ledger}/observations/**/*.parquet') ORDER BY 1, 2").fetchall()
    finally:
        con.close()


class PeakPss:
    """The peak of the summed PSS (MB) of this process tree, sampled every second in a thread."""

    def __enter__(self) -> "PeakPss":
        import psutil

        self.peak, self._stop = 0.0, threading.Event()

        def sample() -> None:
            me = psutil.Process()
            while not self._stop.wait(1.0):
                total = 0
                for p in [me, *me.children(recursive=True)]:
                    try:
                        total += p.memory_full_info().pss
                    except (psutil.Error, OSError):
                        pass
                self.peak = max(self.peak, total / 2**20)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def make_catalog(args: argparse.Namespace, catalog: Path) -> None:
    from citeledger.catalog import CatalogStore

    t = time.perf_counter()
    if args.catalog_from:
        shutil.copytree(args.catalog_from, catalog, ignore=shutil.ignore_patterns(".lock", ".building-*", ".pins"))
        print(f"catalog: copied {args.catalog_from} in {time.perf_counter() - t:.1f} s")
        return
    report = CatalogStore(catalog).build(args.sources or sorted((REPO / "data" / "sources").glob("*")))
    print(f"catalog: {report.works} works from {len(report.files)} files in {time.perf_counter() - t:.1f} s")


def rebuild_index(gen: Path) -> None:
    """The unsharded index built again in a child process: its wall time and peak RSS."""
    t = time.perf_counter()
    code = f"from citeledger import blocking; print(blocking.build_index({str(gen)!r}))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout.strip()
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"one-process index build: {time.perf_counter() - t:.1f} s wall, peak RSS {rss:.0f} MB; {out}")


def shard(catalog: Path, n: int, workers: int) -> dict:
    from citeledger import shards

    t = time.perf_counter()
    with PeakPss() as mem, shards.dask_mapper(workers) as mapper:
        stamp = shards.shard_generation(catalog, n, mapper)
    print(f"sharded into {n} on a local Dask cluster of {workers} workers: {time.perf_counter() - t:.1f} s wall "
          f"(cluster start included), peak PSS of the tree {mem.peak:.0f} MB")
    shards.print_shards(stamp)
    return stamp


def run(label: str, inputs: str, catalog: Path, ledger: Path, batch_size: int, **runner) -> dict:
    from citeledger.workers import clear_caches
    from flows.resolve import resolve_references

    clear_caches()  # (a threads run must not reuse the index an earlier run loaded in this process)
    t = time.perf_counter()
    with PeakPss() as mem:
        summary = resolve_references(inputs=[inputs], catalog=str(catalog), ledger=str(ledger), run_id="bench",
                                     batch_size=batch_size, records=False, **runner)
    wall = time.perf_counter() - t
    resolve_s = summary["timings"]["resolve"]
    print(f"{label:>22}: {summary['references']} references; resolve step {resolve_s:.1f} s = "
          f"{summary['references'] / resolve_s:.0f} references/s; whole flow {wall:.1f} s = "
          f"{summary['references'] / wall:.0f} references/s; peak PSS of the tree {mem.peak:.0f} MB")
    return summary


def limited_input(path: str, limit: int | None, tmp: Path) -> str:
    if not limit:
        return path
    import gzip

    out_path = tmp / "refs.jsonl"
    with gzip.open(path, "rt") as src, open(out_path, "w") as out:
        for i, line in enumerate(src):
            if i >= limit:
                break
            out.write(line)
    return str(out_path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--input", default=str(GLUTTON))
    parser.add_argument("--limit", type=int, default=None, help="resolve only the first N references")
    parser.add_argument("--catalog-from", help="copy this built catalog instead of building one")
    parser.add_argument("--sources", nargs="*", help="catalog source files (default: data/sources/*)")
    parser.add_argument("--rebuild-index", action="store_true", help="time the unsharded index build too")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: Path) -> int:
    catalog = tmp / "catalog"
    make_catalog(args, catalog)
    gen = catalog / (catalog / "CURRENT").read_text().strip()
    if args.rebuild_index:
        rebuild_index(gen)
    inputs = limited_input(args.input, args.limit, tmp)
    dask = {"task_runner": "dask", "dask_workers": args.workers}
    plan = [("threads, one index", "one", {"task_runner": "threads"}),
            (f"dask x{args.workers}, one index", "dask", dask)]
    results = {label: (tmp / f"ledger-{name}", run(label, inputs, catalog, tmp / f"ledger-{name}",
                                                  args.batch_size, **runner)) for label, name, runner in plan}
    stamp = shard(catalog, args.shards, args.workers)
    for label, name, runner in ((f"dask x{args.workers}, {args.shards} shards", "dask-shards", dask),
                                (f"threads, {args.shards} shards", "one-shards", {"task_runner": "threads"})):
        results[label] = (tmp / f"ledger-{name}", run(label, inputs, catalog, tmp / f"ledger-{name}",
                                                      args.batch_size, **runner))
    print(json.dumps({k: v for k, v in stamp.items() if k != "shards"}))
    (base_ledger, base), *others = results.values()
    expected = observations(base_ledger)
    same = all(observations(ledger) == expected and summary["states"] == base["states"] for ledger, summary in others)
    print(f"same observations as one process (ids, digests, states, works) in all {len(others)} other runs: {same}; "
          f"{len(expected)} observations; states {base['states']}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
