"""The record writer end to end: ``record_files.write_records`` over a ledger of 10,000 papers of 40
references each (default): reading the ledger's rows, looking up the papers and cited works in the
catalog, building, signing and validating each record, rendering its JSON, text and HTML, and
writing the files. The ledger is the embedded sample catalog (data/sources) plus one seed run,
with a synthetic observations part (papers citing catalog works, about a tenth of them catalog
arXiv papers that cite each other, so records have inbound entries) and the notices of every cited
work. Prints records per second (wall clock and this process's CPU time), the cost of signing, and
with ``--profile`` the top functions by own time. ``--steps`` writes in one process (``--workers 1``)
and prints the CPU milliseconds a record of each step of the write (inclusive, nested steps indented
under the one they run in; the rest is the loop's own work: freeing each record's objects, file
names, the records' generator).

    PYTHONPATH=. python benchmarks/bench_records_ledger.py [--papers 10000] [--refs 40] [--profile | --steps]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
from step_timer import time_steps

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.records import receipts, record_files
from citeledger.records.ledger_reads import citing_papers
from citeledger.run import batches, finishing, notice_check, planning

REPO = Path(__file__).resolve().parents[1]
RUN = "run-bench"
WHEN = datetime(2026, 12, 1, 5, 0, tzinfo=timezone.utc)
STATES = ["verified_exact", "verified_fuzzy", "unresolved", "parse_uncertain", "metadata_mismatch"]


def catalog_works(catalog_dir: Path) -> tuple[list[tuple], list[str]]:
    """(work_id, doi, arxiv_id) of catalog works to cite, and the catalog's arXiv ids (citing papers)."""
    works = sorted(Path(catalog_dir).glob("gen-*/works.parquet"))[-1]
    rows = duckdb.sql(f"SELECT work_id, doi, arxiv_id FROM '{works}' ORDER BY work_id").fetchall()
    return rows, sorted(r[2] for r in rows if r[2])


def evidence(i: int, work_id: str) -> str:
    features = {"aligned": i % 2, "author": 0.5 + (i % 7) / 20, "page": 1, "title": 0.3636 + (i % 13) / 100,
                "title_len": 1.609, "venue": 0.0, "volume": 1, "year": 1.0}
    return json.dumps({"rule": "fuzzy", "fuzzy": {"best": {"features": features, "score": 0.91 + (i % 5) / 100,
                                                           "work_id": work_id},
                                                  "candidates": 20, "thresholds": {"link": 0.9, "margin": 0.25}}})


def observation_rows(papers: list[str], refs: int, works: list[tuple]) -> list[dict]:
    rows = []
    for p, paper in enumerate(papers):
        for i in range(1, refs + 1):
            work_id, doi, arxiv_id = works[(p * 37 + i * 101) % len(works)]
            status = STATES[(p + i) % len(STATES)]
            linked = status in ("verified_exact", "verified_fuzzy", "metadata_mismatch")
            rows.append({
                "observation_id": f"obs:{p:06d}{i:03d}", "observation_digest": f"sha256:{p:032x}{i:032x}",
                "run_id": RUN, "observed_at": WHEN, "citing_paper": paper, "reference_index": i,
                "raw": f"A. Author{i}, B. Writer. A title about topic {i} of paper {p}. J. Things {i} (2001) {i}-{i + 9}.",
                "source": "arxiv_source", "status": status, "reason": None,
                "resolver_source": "raw_fallback" if linked else None, "work_id": work_id if linked else None,
                "doi": doi if linked else None, "arxiv_id": arxiv_id if linked else None,
                "extracted_dois": [doi] if doi and i % 3 == 0 else [], "extracted_arxiv_ids": [],
                "score": 0.93 if linked else None, "evidence": evidence(i, work_id)})
    return rows


def make_ledger(work: Path, papers: int, refs: int) -> tuple[Path, Path]:
    """A catalog and a ledger with ``papers`` citing papers of ``refs`` references, signed records' key."""
    catalog, ledger = work / "catalog", work / "ledger"
    CatalogStore(catalog).build(sorted((REPO / "data" / "sources").glob("*")))
    seed = work / "seed.jsonl"
    seed.write_text(json.dumps({"citing_paper": "seed", "reference_index": 1, "raw": "Nobody. Nothing. 1999."}) + "\n")
    plan = planning.plan_run([seed], catalog, ledger, run_id=RUN)
    for job in plan.pending:
        batches.run_batch(job)
    finishing.finish_run(plan)
    works, arxiv = catalog_works(catalog)
    ids = (arxiv[: papers // 10] + [f"2501.{p:05d}" for p in range(papers)])[:papers]
    store = LedgerStore(ledger)
    rows = observation_rows(ids, refs, works)
    for start in range(0, len(rows), 100_000):
        store.write_observations(RUN, f"synthetic-{start // 100_000:03d}", rows[start:start + 100_000])
    linked = sorted({r["work_id"] for r in rows if r["work_id"]})
    store.write_notices(RUN, notice_check.work_notice_rows(catalog, linked, RUN), part="synthetic-notices")
    receipts.init_keys(ledger)
    return catalog, ledger


# (module, attribute, depth) of each timed step of the write, where the writer looks it up
STEPS = [
    ("citeledger.records.record_files", "pass_rows", 0), ("citeledger.records.ledger_reads", "PassRows.observed", 0),
    ("citeledger.records.record_files", "build_record", 0), ("citeledger.records.record", "_entry", 1),
    ("citeledger.records.record", "_Tally", 1), ("citeledger.records.receipts", "sign_record", 0),
    ("citeledger.records.record_files", "validate_record", 0), ("citeledger.records.render.record_pages", "render_page_files", 0),
    ("citeledger.records.render.record_pages", "render_json", 0), ("citeledger.ledger.ledger_store", "LedgerStore.write_records_batch", 0),
]


def print_steps(spent: dict[str, float], records: int, cpu: float) -> None:
    print(f"  CPU ms a record by step ({cpu / records * 1000:.2f} in all):")
    outer = 0.0
    for _, attr, depth in STEPS:
        seconds = spent.get(attr, 0.0)
        outer += seconds if depth == 0 else 0.0
        print(f"    {'  ' * depth}{attr:<40} {seconds / records * 1000:6.3f}")
    print(f"    {'the rest':<40} {(cpu - outer) / records * 1000:6.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--refs", type=int, default=40)
    parser.add_argument("--workers", type=int, default=None,
                        help="processes building records (default: the writer's choice, two from 2,000 papers)")
    parser.add_argument("--profile", metavar="FILE", help="profile the writer: top functions printed, stats saved to FILE")
    parser.add_argument("--steps", action="store_true", help="one process; print the CPU ms a record of each step")
    args = parser.parse_args()
    spent = time_steps((module, attr) for module, attr, _ in STEPS) if args.steps else None
    if args.steps:
        args.workers = 1
    with tempfile.TemporaryDirectory(prefix="bench-records-") as tmp:
        t0 = time.perf_counter()
        catalog, ledger = make_ledger(Path(tmp), args.papers, args.refs)
        papers = [p for p in citing_papers(ledger, catalog, None) if p != "seed"]
        print(f"ledger of {len(papers)} papers x {args.refs} references made in {time.perf_counter() - t0:.1f} s")
        profile = cProfile.Profile() if args.profile else None
        wall, cpu_before = time.perf_counter(), _cpu_split()
        if profile:
            profile.enable()
        load_before = os.getloadavg()
        written = record_files.write_records(papers, ledger, catalog, workers=args.workers)
        if profile:
            profile.disable()
        print("load average (1, 5, 15 min) before the write: %.2f %.2f %.2f, after: %.2f %.2f %.2f"
              % (*load_before, *os.getloadavg()))
        wall, (cpu, kernel) = time.perf_counter() - wall, [a - b for a, b in zip(_cpu_split(), cpu_before)]
        files = len(list((ledger / "records").glob("*")))
        print(f"{len(written)} records written ({files} files: JSON, text, HTML), signed: "
              f"{len(written) / wall:,.0f} records/s wall clock ({wall:.1f} s), "
              f"{len(written) / cpu:,.0f} records/s of CPU time ({cpu:.1f} CPU s, worker processes included: "
              f"{cpu / len(written) * 1000:.1f} ms a record, of which {kernel / len(written) * 1000:.1f} in the "
              f"kernel; {cpu / wall:.2f} cores busy on average)")
        if spent is not None:
            print_steps(spent, len(written), cpu)
        print(f"  signing: {sign_cost(ledger, written[:200]) * 1000:.3f} ms/record (ed25519 + the receipt's JCS)")
        if profile:
            profile.dump_stats(args.profile)
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)


def _cpu_split() -> tuple[float, float]:
    """CPU seconds (user + system) and system seconds of this process and of its finished worker
    processes: the system part is mostly the kernel making the record files (on this machine's
    ext4 without a journal a file creation costs 0.05-1 ms, more where many files were deleted in
    the last minutes, by this benchmark's last run or by anything else writing under /tmp)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    system = me.ru_stime + children.ru_stime
    return me.ru_utime + children.ru_utime + system, system


def sign_cost(ledger: Path, files: list[Path]) -> float:
    """CPU seconds a record to sign again (the receipt of a built record), over ``files``."""
    key = receipts.active_key(ledger)
    built = [json.loads(f.read_text()) for f in files]
    started = time.process_time()
    for record in built:
        receipts.sign_record(record, key)
    return (time.process_time() - started) / max(1, len(built))


if __name__ == "__main__":
    main()
