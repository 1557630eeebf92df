"""How fast is the identifier path end to end? Prints references per second.

Builds the embedded default catalog (``data/sources``) in a temporary folder, writes N reference
strings that cite catalog works by arXiv id or DOI in the spellings of real reference lists, and
times the pipeline without Prefect (read input, extract identifiers, batched catalog lookups,
metadata checks, observation rows written as Parquet): ``plan_run`` + ``run_batch`` per batch.

    .venv/bin/python benchmarks/bench_identifier_path.py [N]   (default 50,000)
"""
from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from citeledger import pipeline, workers  # noqa: E402
from citeledger.catalog import CatalogStore  # noqa: E402

FORMS = [
    "{author}. {title}. arXiv preprint arXiv:{arxiv}, {year}.",
    "{author}, \u201c{title},\u201d CoRR, abs/{arxiv}, {year}.",
    "{author}. {title}. {year}. URL https://arxiv.org/abs/{arxiv}v2.",
    "{author} ({year}) {title}. doi:{doi}",
    "{author}. {title}. {venue} {year}. https://doi.org/{doi}",
]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    work = Path(tempfile.mkdtemp(prefix="bench-ids-"))
    t0 = time.perf_counter()
    CatalogStore(work / "catalog").build(sorted((REPO / "data" / "sources").glob("*")))
    build_s = time.perf_counter() - t0
    gen = CatalogStore(work / "catalog").current()
    works = duckdb.sql(f"select title, authors, year, venue, doi, arxiv_id from read_parquet('{gen}/works.parquet') "
                       "where title is not null and (doi is not null or arxiv_id is not null)").fetchall()
    rng = random.Random(7)
    with open(work / "refs.jsonl", "w") as fh:
        for i in range(n):
            title, authors, year, venue, doi, arxiv_id = rng.choice(works)
            form = rng.choice(FORMS[:3] if arxiv_id else FORMS[3:])
            raw = form.format(author=(authors or ["Anonymous"])[0], title=title, year=year or "", venue=venue or "",
                              arxiv=arxiv_id, doi=doi)
            fh.write(json.dumps({"citing_paper": f"paper-{i // 50}", "reference_index": i % 50 + 1, "raw": raw}) + "\n")
    workers.get_fuzzy(workers.get_catalog(work / "catalog"))  # load the indexes before timing
    t0 = time.perf_counter()
    plan = pipeline.plan_run([work / "refs.jsonl"], work / "catalog", work / "ledger", batch_size=5000)
    for job in plan.pending:
        pipeline.run_batch(job)
    summary = pipeline.finish_run(plan)
    seconds = time.perf_counter() - t0
    exact = summary.states["verified_exact"]
    print(f"catalog build: {build_s:.1f} s for {len(works):,} titled works")
    print(f"identifier path: {n:,} references in {seconds:.1f} s = {n / seconds:,.0f} references/s "
          f"(one process; {exact:,} verified_exact, states {summary.states})")


if __name__ == "__main__":
    main()
