"""End-to-end benchmark of the resolve flow: ``citeledger resolve`` as a user runs it.

Writes the glutton dev strings ``--copies`` times over (each copy under its own citing papers, so
every row is a reference of its own), runs ``citeledger resolve`` in a subprocess against
``--catalog`` (a fresh ledger, a temporary PREFECT_HOME), samples the resident memory of the
whole process tree (the CLI, Prefect's temporary API server, the pool's worker processes) every
0.2 s, and prints:

- ``run_refs_per_s``: the run's own figure (references / seconds from planning to the finished
  ledger, as the run row records it): reading and batching the input, resolving, writing the
  observations, the notices and ledger.duckdb;
- ``wall_s``: the whole command, with Prefect's start-up and the citation records;
- ``cpu_s``, ``refs_per_cpu_s``: the CPU seconds of the whole process tree (user + system, from
  the children's rusage) and references per CPU second: comparable across machine loads;
  ``cpu_s_by_process``: each process's CPU seconds as last sampled (a lower bound: up to 0.2 s
  before it ended) with its role (``cli``: planning, Prefect's API, the finish step and the records;
  ``worker``; ``server``: a Prefect API server of its own, if any);
- ``peak_tree_rss_mb``: the largest sum of RSS over the process tree (a page of the mapped
  catalog counts once in every process that touched it);
- ``peak_tree_pss_mb`` / ``peak_tree_uss_mb``: the largest sums of PSS (shared pages divided
  among the processes mapping them) and of USS (pages no other process maps), and each process's
  private dirty pages (its own heap), from smaps_rollup every 2 s;
- ``page_cache_mb_before`` / ``_after``: the machine's page cache (``Cached`` of /proc/meminfo)
  before and after the run, and ``catalog_cached_mb_after``: how much of the catalog generation's
  files is in it after the run, by file (``fincore``, where installed): where the catalog's pages
  live when no process holds them (``citeledger.storage.mapped_files``, ``citeledger.works.work_rows``).

Build a catalog with N synthetic works first, e.g. ``python benchmarks/bench_fuzzy.py 1000000
--sample 0 --procs 1`` (it leaves it in ``/tmp/citeledger-bench/n1000000/catalog``).

Usage: python benchmarks/bench_flow.py --catalog DIR [--copies 4] [--task-runner auto|threads|processes]
       [--workers 2] [--batch-size N]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT.parent / "shared/data/refs/glutton_dev.jsonl.gz"


def tree_rss_mb(root_pid: int) -> tuple[float, dict[int, float]]:
    """Sum of VmRSS over a process and all its descendants (Linux /proc), and each one's."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/status") as f:
                kb = next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = kb
    each, todo = {}, [root_pid]
    while todo:
        pid = todo.pop()
        each[pid] = rss.get(pid, 0) / 1024
        todo += children.get(pid, [])
    return sum(each.values()), each


def cpu_s_of(pid: int) -> tuple[float, str]:
    """A process's CPU seconds so far (user + system, /proc/PID/stat) and what it is, from its
    command line: ``worker`` (a pool process), ``server`` (Prefect's API server) or ``cli``."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
    except (OSError, IndexError):
        return 0.0, "gone"
    role = ("worker" if "spawn_main" in cmdline else "tracker" if "resource_tracker" in cmdline
            else "server" if "uvicorn" in cmdline or ("prefect" in cmdline and "server" in cmdline)
            else "cli" if "citeledger.cli" in cmdline else "")  # "": a zombie's (empty) command line
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), role


def pss_uss_mb(pid: int) -> tuple[float, float, float]:
    """A process's proportional set size (shared pages divided among the processes that map
    them), its unique set size (pages no other process maps, clean pages of the mapped catalog
    included) and its private dirty pages (its heap: what it holds of its own), from
    /proc/PID/smaps_rollup, in MB."""
    fields: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    fields[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        return 0.0, 0.0, 0.0
    return (fields.get("Pss", 0) / 1024, (fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)) / 1024,
            fields.get("Private_Dirty", 0) / 1024)


def page_cache_mb() -> float:
    """The machine's page cache (``Cached`` of /proc/meminfo), in MB."""
    with open("/proc/meminfo") as f:
        return next((int(line.split()[1]) / 1024 for line in f if line.startswith("Cached:")), 0.0)


def catalog_cached_mb(catalog: str) -> dict[str, int] | None:
    """MB of each file of the catalog's live generation in the page cache (``fincore``), over 1 MB."""
    gen = Path(catalog) / (Path(catalog) / "CURRENT").read_text().strip()
    files = sorted(str(p) for p in gen.iterdir() if p.is_file())
    try:
        out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES,FILE", *files],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    cached = {Path(line.split(None, 1)[1]).name: int(line.split()[0]) >> 20 for line in out.splitlines() if line.strip()}
    return {name: mb for name, mb in sorted(cached.items(), key=lambda kv: -kv[1]) if mb >= 1}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--gold", default=str(DEV), help="reference file to repeat (default: glutton dev)")
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--task-runner", default="auto", choices=["auto", "threads", "processes"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=None, help="default: the configuration's (1,000)")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-flow-"))
    rows = [json.loads(line) for line in gzip.open(args.gold, "rt")]
    refs = work / "references.jsonl"
    with open(refs, "w") as f:
        for c in range(args.copies):
            for r in rows:
                f.write(json.dumps({"citing_paper": f"{r['citing_paper']}-copy{c}",
                                    "reference_index": r["reference_index"], "raw": r["raw"]}) + "\n")
    n = len(rows) * args.copies
    env = {**os.environ, "PREFECT_HOME": str(work / "prefect"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "DO_NOT_TRACK": "1", "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90"}
    env.pop("PREFECT_API_URL", None)
    ledger = work / "ledger"
    cmd = [sys.executable, "-m", "citeledger.cli", "resolve", str(refs), "--catalog", args.catalog,
           "--ledger", str(ledger), "--task-runner", args.task_runner, "--dask-workers", str(args.workers)]
    if args.batch_size:
        cmd += ["--batch-size", str(args.batch_size)]
    cache0 = page_cache_mb()
    t0 = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak, at_peak, per_process = 0.0, {}, {}
    peak_pss, peak_uss, uss_each, dirty_each = 0.0, 0.0, {}, {}
    cpu_each: dict[int, tuple[float, str]] = {}  # the last CPU seconds sampled of each process (a lower bound)
    stop = threading.Event()

    def sample():
        nonlocal peak, at_peak, peak_pss, peak_uss
        tick = 0
        while not stop.is_set():
            total, each = tree_rss_mb(proc.pid)
            for pid, mb in each.items():
                per_process[pid] = max(per_process.get(pid, 0.0), mb)
                used = cpu_s_of(pid)
                if used[1] != "gone":
                    cpu_each[pid] = (used[0], used[1] or cpu_each.get(pid, (0.0, "?"))[1])
            if total > peak:
                peak, at_peak = total, each
            tick += 1
            if tick % 10:  # smaps_rollup walks the page tables of gigabytes of maps: every 2 s only
                stop.wait(0.2)
                continue
            sizes = {pid: pss_uss_mb(pid) for pid in each}
            for pid, (_, uss, dirty) in sizes.items():
                uss_each[pid] = max(uss_each.get(pid, 0.0), uss)
                dirty_each[pid] = max(dirty_each.get(pid, 0.0), dirty)
            peak_pss = max(peak_pss, sum(p for p, _, _ in sizes.values()))
            peak_uss = max(peak_uss, sum(u for _, u, _ in sizes.values()))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    stop.set()
    sampler.join()
    cache1, cached = page_cache_mb(), catalog_cached_mb(args.catalog)
    if proc.returncode != 0:
        sys.exit(f"citeledger resolve failed ({proc.returncode}):\n{err[-3000:]}")

    def query(sql: str) -> dict:
        q = subprocess.run([sys.executable, "-m", "citeledger.cli", "query", sql, "--ledger", str(ledger),
                            "--catalog", args.catalog, "--format", "json"], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True)
        return json.loads(q.stdout.splitlines()[0])

    run = query("select seconds, timings, \"references\" from runs")
    seconds, timings, references = run["seconds"], run["timings"], run["references"]
    observed = query("select count(*) as n from observations")["n"]
    res = {"references": n, "observations": observed, "task_runner": args.task_runner,
           "workers": args.workers if args.task_runner != "threads" else 1, "batch_size": args.batch_size,
           "runner_used": next((line.split(" on ")[-1] for line in err.splitlines() if "batches on " in line), None),
           "run_seconds": round(seconds, 1), "run_refs_per_s": round(references / seconds, 1),
           "timings": json.loads(timings) if timings else None, "wall_s": round(wall, 1),
           "cpu_s": round(cpu, 1), "refs_per_cpu_s": round(n / cpu, 1),
           "cpu_s_by_process": sorted(([role, round(c, 1)] for c, role in cpu_each.values() if c >= 0.5),
                                      key=lambda x: -x[1]),
           "peak_tree_rss_mb": round(peak),
           "rss_mb_at_peak": sorted((round(v) for v in at_peak.values() if v >= 50), reverse=True),
           "peak_rss_mb_per_process": sorted((round(v) for v in per_process.values() if v >= 50), reverse=True),
           "peak_tree_pss_mb": round(peak_pss), "peak_tree_uss_mb": round(peak_uss),
           "peak_uss_mb_per_process": sorted((round(v) for v in uss_each.values() if v >= 50), reverse=True),
           "peak_private_dirty_mb_per_process": sorted((round(v) for v in dirty_each.values() if v >= 50),
                                                       reverse=True),
           "page_cache_mb_before": round(cache0), "page_cache_mb_after": round(cache1),
           "catalog_cached_mb_after": cached, "summary": out.strip().splitlines()[-1]}
    assert observed == n, f"{observed} observations for {n} references"
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
