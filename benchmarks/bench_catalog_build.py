"""Time and peak memory of each stage of a catalog build (extract, merge, index, publish).

Why: the build must stay within 10 minutes and 6 GB at 10M works; this says which stage costs
what. Peak RSS per stage is the process tree's (the extract's worker processes included), sampled
every 50 ms; the whole
process's peak is VmHWM at the end (the figure /usr/bin/time -v reports too).

Usage: python benchmarks/bench_catalog_build.py CATALOG_DIR FILE...
"""
from __future__ import annotations

import inspect
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_flow import tree_rss_mb  # noqa: E402

from citeledger.catalog import catalog_store as catalog


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    return 0


class Peak:
    """The highest VmRSS (MB) seen since the last ``take``."""

    def __init__(self) -> None:
        self.peak = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, int(tree_rss_mb(os.getpid())[0]))  # with the extract's workers
            time.sleep(0.05)

    def take(self) -> int:
        peak, self.peak = max(self.peak, _status("VmRSS")), _status("VmRSS")
        return peak


def main(out: Path, files: list[str]) -> None:
    peak = Peak()
    stages: dict[str, dict[str, float]] = {}

    def cpu() -> float:
        return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                   for f in ("ru_utime", "ru_stime"))

    cpu_at = [cpu()]

    def stage(name: str, t0: float) -> None:
        stages[name] = {"seconds": round(time.monotonic() - t0, 1), "cpu_seconds": round(cpu() - cpu_at[0], 1),
                        "peak_rss_mb": peak.take()}
        cpu_at[0] = cpu()
        print(name, stages[name], flush=True)

    out.mkdir(parents=True, exist_ok=True)
    previous = catalog.start_build(out)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".building-"))
    try:
        t = time.monotonic()
        kw = {"staging": staging} if "staging" in inspect.signature(catalog.extract).parameters else {}  # (before: none)
        extracted = catalog.extract(catalog.source_files(files), None, previous.ingested_seq, **kw)
        stage("extract", t)
        gen_dir = staging / previous.next_name
        gen_dir.mkdir()
        t = time.monotonic()
        merged = catalog.merge(previous.dir, extracted, gen_dir)
        stage("merge", t)
        t = time.monotonic()
        catalog.index(gen_dir)
        stage("index", t)
        t = time.monotonic()
        built_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        published = catalog.publish(out, gen_dir, previous, extracted, merged, built_at)
        stage("publish", t)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(json.dumps({"works": merged.works, "fingerprint": published.fingerprint, "stages": stages,
                      "peak_rss_mb": _status("VmHWM")}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
