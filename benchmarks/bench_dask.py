"""Resolve the glutton dev set in one process (threads) and on a local Dask cluster of N worker
processes, before and after the catalog's fuzzy index is split into shards on that cluster; print
throughputs, the shard build's figures and peak memory, and check that every ledger holds the
one-process observations (ids, digests, states, works).

    .venv/bin/python benchmarks/bench_dask.py [--workers 2] [--shards 4] [--batch-size 1000] [--limit N] [--repeat R]
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
    from citeledger.catalog.catalog_store import CatalogStore

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
    code = f"from citeledger.index import blocking; print(blocking.build_index({str(gen)!r}))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout.strip()
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"one-process index build: {time.perf_counter() - t:.1f} s wall, peak RSS {rss:.0f} MB; {out}")


def shard(catalog: Path, n: int, workers: int) -> dict:
    from citeledger.catalog import sharding
    from citeledger.index import shards

    t = time.perf_counter()
    with PeakPss() as mem, shards.dask_mapper(workers) as mapper:
        stamp = sharding.shard_generation(catalog, n, mapper)
    print(f"sharded into {n} on a local Dask cluster of {workers} workers: {time.perf_counter() - t:.1f} s wall "
          f"(cluster start included), peak PSS of the tree {mem.peak:.0f} MB")
    shards.print_shards(stamp)
    return stamp


def run(label: str, inputs: str, catalog: Path, ledger: Path, batch_size: int, **runner) -> dict:
    from citeledger.engine.process_cache import clear_caches
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


def limited_input(path: str, limit: int | None, repeat: int, tmp: Path) -> str:
    """The first ``limit`` references, ``repeat`` times (copies under citing papers ``<id>~r<i>``, so
    they are distinct references: the Dask cluster's start is then a smaller part of the step)."""
    if not limit and repeat == 1:
        return path
    import gzip

    with gzip.open(path, "rt") as src:
        lines = [json.loads(line) for line in src][:limit]
    out_path = tmp / "refs.jsonl"
    with open(out_path, "w") as out:
        for i in range(repeat):
            for row in lines:
                out.write(json.dumps({**row, "citing_paper": f"{row['citing_paper']}~r{i}" if i else row["citing_paper"]}) + "\n")
    return str(out_path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--input", default=str(GLUTTON))
    parser.add_argument("--limit", type=int, default=None, help="resolve only the first N references")
    parser.add_argument("--repeat", type=int, default=1, help="resolve the references this many times (as distinct ones)")
    parser.add_argument("--catalog-from", help="copy this built catalog instead of building one")
    parser.add_argument("--sources", nargs="*", help="catalog source files (default: data/sources/*)")
    parser.add_argument("--rebuild-index", action="store_true", help="time the unsharded index build too")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # (a log file shows each figure as it comes)

    tmp = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: Path) -> int:
    """Most telling first (a run may be cut short): the shard build, then one process on the one
    index against Dask on the shards, then the other two runs, then the one-process index build."""
    one, sharded = tmp / "catalog", tmp / "catalog-sharded"
    make_catalog(args, one)
    shutil.copytree(one, sharded)  # (same manifest and fingerprint: the same observation ids)
    stamp = shard(sharded, args.shards, args.workers)
    print(json.dumps({k: v for k, v in stamp.items() if k != "shards"}), flush=True)
    inputs = limited_input(args.input, args.limit, args.repeat, tmp)
    dask = {"task_runner": "dask", "dask_workers": args.workers}
    threads = {"task_runner": "threads"}
    plan = [("threads, one index", one, threads), (f"dask x{args.workers}, {args.shards} shards", sharded, dask),
            (f"dask x{args.workers}, one index", one, dask), (f"threads, {args.shards} shards", sharded, threads)]
    expected, base_states, same = None, None, True
    for n, (label, catalog, runner) in enumerate(plan):
        ledger = tmp / f"ledger-{n}"
        summary = run(label, inputs, catalog, ledger, args.batch_size, **runner)
        rows = observations(ledger)
        if expected is None:
            expected, base_states = rows, summary["states"]
            continue
        this = rows == expected and summary["states"] == base_states
        same = same and this
        print(f"{label}: same observations as one process (ids, digests, states, works): {this}; "
              f"{len(rows)} observations", flush=True)
    print(f"states {base_states}; all the same: {same}", flush=True)
    if args.rebuild_index:
        rebuild_index(one / (one / "CURRENT").read_text().strip())
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
