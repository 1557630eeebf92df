"""How much memory does planning a run take? Prints the peak RSS of ``plan_run`` over an N-row
``.jsonl.gz`` (reading, duplicate check, cutting batches), measured in a fresh child process.

Builds the small fixture catalog (``tests/fixtures/catalog``) in a temporary folder; the input
has N distinct references over N/40 citing papers, each about 90 characters.

    .venv/bin/python benchmarks/bench_input_memory.py [N]   (default 1,000,000)

Figures: benchmarks/RESULTS.md, "Input planning memory".
"""
from __future__ import annotations

import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def write_input(path: Path, n: int) -> None:
    with gzip.open(path, "wt", compresslevel=6) as fh:
        for i in range(n):
            fh.write(json.dumps({"citing_paper": f"2101.{i // 40:05d}", "reference_index": i % 40 + 1,
                                 "raw": f"A. Author and B. Writer. A study of things number {i}. J. Stuff, {i % 97}:1-9, 2001."})
                     + "\n")


def child(work: Path) -> None:
    """Runs in its own process so the peak RSS is the planning's alone."""
    from citeledger.run import finishing, planning

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    plan = planning.plan_run([work / "refs.jsonl.gz"], work / "catalog", work / "ledger", run_id="bench")
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    finishing.abandon_run(plan)
    print(json.dumps({"references": plan.references, "batches": len(plan.jobs), "rejects": len(plan.rejects),
                      "plan_seconds": round(seconds, 1), "peak_rss_mb_before_plan": round(base / 1024),
                      "peak_rss_mb": round(peak / 1024)}))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    from citeledger.catalog.catalog_store import CatalogStore

    work = Path(tempfile.mkdtemp(prefix="bench-input-mem-"))
    CatalogStore(work / "catalog").build(sorted((REPO / "tests" / "fixtures" / "catalog").glob("*.jsonl")))
    write_input(work / "refs.jsonl.gz", n)
    size = (work / "refs.jsonl.gz").stat().st_size
    print(f"{n:,} rows, {size / 1e6:.1f} MB gzipped, in {work}")
    subprocess.run([sys.executable, __file__, "--child", str(work)], check=True)


if __name__ == "__main__":
    main()
