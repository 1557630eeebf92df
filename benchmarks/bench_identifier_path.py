"""How fast is the identifier path end to end? Prints references per second.

Writes N reference strings that cite catalog works by arXiv id or DOI in the spellings of real
reference lists, and times the pipeline without Prefect (read input, extract identifiers, batched
catalog lookups, metadata checks, observation rows written as Parquet): ``plan_run`` + ``run_batch``
per batch + ``finish_run``, in one process.

The catalog: by default the embedded one (``data/sources``), built in a temporary folder; with
``--catalog DIR`` a prebuilt catalog (1M, 10M works: left as it is, never written into). The cited
works are drawn from the given catalog's own ``works.arrow`` (rows picked at random, seeded), so
the strings cite works spread over the whole catalog whatever its size.

    .venv/bin/python benchmarks/bench_identifier_path.py [N] [--catalog DIR] [--profile OUT.prof]
    (default N 50,000; --profile also prints the top functions by own and cumulative time;
    --steps prints the CPU seconds spent in each step of the path, inclusive: nested steps are
    also counted in the step around them; cProfile's own cost is 4x the run's on this path)
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reference_forms import FORMS  # noqa: E402
from step_timer import time_steps  # noqa: E402

from citeledger.catalog.catalog_store import CatalogStore  # noqa: E402
from citeledger.engine import process_cache as workers
from citeledger.index.blocking import WORKS_ARROW, map_ipc  # noqa: E402
from citeledger.index.index_upgrade import ensure_index  # noqa: E402
from citeledger.run import batches, finishing, planning

COLUMNS = ["title", "authors", "year", "venue", "doi", "arxiv_id"]
DRAWN = 200_000  # catalog rows drawn at most; the strings cite works among the titled ones


def cited_works(gen: Path, n: int, rng: random.Random) -> list[tuple]:
    """Works with a title and an identifier, from rows of the generation's works.arrow picked at
    random (all rows when the catalog is smaller than ``DRAWN``)."""
    works = map_ipc(gen / WORKS_ARROW)
    total = works.num_rows
    rows = sorted(rng.sample(range(total), min(total, DRAWN)))
    taken = works.select(COLUMNS).take(pa.array(rows, pa.int64()))
    cols = [taken.column(c).to_pylist() for c in COLUMNS]
    return [w for w in zip(*cols) if w[0] and (w[4] or w[5])]


def write_refs(path: Path, works: list[tuple], n: int, rng: random.Random) -> None:
    with open(path, "w") as fh:
        for i in range(n):
            title, authors, year, venue, doi, arxiv_id = rng.choice(works)
            form = rng.choice(FORMS[:3] if arxiv_id else FORMS[3:])
            raw = form.format(author=(authors or ["Anonymous"])[0], title=title, year=year or "", venue=venue or "",
                              arxiv=arxiv_id, doi=doi)
            fh.write(json.dumps({"citing_paper": f"paper-{i // 50}", "reference_index": i % 50 + 1, "raw": raw}) + "\n")


# (module, attribute) of each timed step, as the path looks it up (a function imported by name is
# wrapped where it is called from); nested steps are indented under the one they run in.
STEPS = [
    ("citeledger.run.planning", "plan_run"), ("citeledger.run.batches", "run_batch"),
    ("citeledger.run.batches", "resolve_batch_references"), ("resolvers.resolution", "extract_identifiers"),
    ("resolvers.resolution", "extract_batch"),
    ("resolvers.resolution", "_parsed"), ("citeledger.catalog.catalog_store", "ParquetCatalog.works_by_arxiv_id"),
    ("citeledger.catalog.catalog_store", "ParquetCatalog.works_by_doi"), ("resolvers.resolution", "rule_identifier"),
    ("resolvers.resolution", "check_agreement"), ("resolvers.resolution", "decide"),
    ("citeledger.run.batches", "observation_columns"), ("citeledger.ledger.ledger_store", "LedgerStore.write_observation_columns"),
    ("citeledger.run.finishing", "finish_run"), ("citeledger.run.finishing", "write_run_notices"),
    ("citeledger.ledger.ledger_store", "LedgerStore.linked_work_ids"), ("citeledger.run.notice_check", "work_notice_rows"),
    ("citeledger.catalog.catalog_store", "ParquetCatalog.notice_rows"), ("citeledger.run.notice_check", "cited_doi_notice_rows"),
    ("citeledger.ledger.ledger_store", "LedgerStore.write_notices"), ("citeledger.run.finishing", "_summarise"),
    ("citeledger.ledger.ledger_store", "LedgerStore.finish_run"), ("citeledger.run.finishing", "write_ledger_database"),
]


def run(refs: Path, catalog: Path, ledger: Path, batch_size: int) -> tuple[dict[str, float], object]:
    """The timed part: plan, every batch, finish; seconds of each step, and the process's CPU
    seconds over all of them (on a shared machine the wall clock waits for other jobs)."""
    t0, c0 = time.perf_counter(), time.process_time()
    plan = planning.plan_run([refs], catalog, ledger, batch_size=batch_size)
    t1 = time.perf_counter()
    for job in plan.pending:
        batches.run_batch(job)
    t2 = time.perf_counter()
    summary = finishing.finish_run(plan)
    t3 = time.perf_counter()
    cpu = time.process_time() - c0
    return {"plan": t1 - t0, "batches": t2 - t1, "finish": t3 - t2, "total": t3 - t0, "cpu": cpu}, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=50_000, help="references (default 50,000)")
    ap.add_argument("--catalog", type=Path, help="a prebuilt catalog folder (default: build data/sources)")
    ap.add_argument("--batch-size", type=int, default=5000)
    ap.add_argument("--profile", type=Path, help="write a cProfile of the timed part here and print its top")
    ap.add_argument("--steps", action="store_true", help="print the CPU microseconds a reference of each step")
    ap.add_argument("--seed", type=int, default=7, help="draws the cited works and the strings' spellings (default 7): "
                    "a second run with another seed cites other works, so other pages of the catalog's files")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-ids-"))
    catalog = args.catalog
    if catalog is None:
        catalog = work / "catalog"
        t0 = time.perf_counter()
        CatalogStore(catalog).build(sorted((REPO / "data" / "sources").glob("*")))
        print(f"catalog build: {time.perf_counter() - t0:.1f} s")
    gen = CatalogStore(catalog).current()
    if gen is None:
        sys.exit(f"no catalog in {catalog}")
    ensure_index(gen)
    works = cited_works(gen, args.n, random.Random(args.seed))
    write_refs(work / "refs.jsonl", works, args.n, random.Random(args.seed))
    workers.get_fuzzy(workers.get_catalog(catalog))  # load the indexes before timing
    spent = time_steps(STEPS) if args.steps else None
    profiler = cProfile.Profile(time.process_time) if args.profile else None  # CPU time: comparable under load
    if profiler:
        profiler.enable()
    seconds, summary = run(work / "refs.jsonl", catalog, work / "ledger", args.batch_size)
    if profiler:
        profiler.disable()
        profiler.dump_stats(str(args.profile))
        for key in ("tottime", "cumulative"):
            pstats.Stats(str(args.profile)).sort_stats(key).print_stats(30)
    n = args.n
    for key, seconds_in in (spent or {}).items():
        print(f"  step {key}: {seconds_in:.2f} s CPU = {seconds_in / n * 1e6:.0f} us a reference")
    print(f"catalog: {catalog} ({gen.name}, {json.loads((gen / 'manifest.json').read_text())['works']:,} works); "
          f"cited works drawn: {len(works):,}")
    print("seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in seconds.items()))
    print(f"identifier path: {n:,} references in {seconds['total']:.1f} s = {n / seconds['total']:,.0f} references/s "
          f"(CPU {seconds['cpu']:.1f} s = {n / seconds['cpu']:,.0f} references per CPU second; "
          f"one process; {summary.states['verified_exact']:,} verified_exact, states {summary.states})")


if __name__ == "__main__":
    main()
