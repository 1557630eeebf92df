"""The second step of a resolve run: resolve one batch and write its observations (``run_batch``).
A batch already written is skipped, so a resumed run does only what is left; the works remote
services gave the batch's links are kept beside its observations, before the batch is marked done.

Whoever runs the batches calls this one function: the flow's task, the CLI's threads or process
pool (``orchestrate``), a Dask worker. It opens what it needs once per process (the catalog
generation the run was planned on, the fuzzy matcher, the remote clients: ``engine.process_cache``).
"""
from __future__ import annotations

import gc
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from citeledger.engine.process_cache import get_catalog, get_fuzzy, get_remote
from citeledger.run.planning import BatchJob
from citeledger.run.remote_run import search_step
from citeledger.works.row_schema import works_jsonl_row
from resolvers.errors import TransientError
from resolvers.model import Reference
from resolvers.observation import observation_columns
from resolvers.remote.settings import SEARCH_SOURCES
from resolvers.resolution import apply_rule_chain
from resolvers.search_step import SearchStep

RETRY_DELAYS = (1, 5)  # seconds before the retries of a batch that failed transiently (as the flow's task)

_GC_LOCK = threading.Lock()
_GC_PAUSES = 0


@contextmanager
def gc_paused() -> Iterator[None]:
    """Resolve a batch without the cyclic garbage collector: a batch makes hundreds of thousands
    of small objects that live until it ends (candidates, comparison forms, evidence), and the
    collector rescanning them is a fifth of the time (1M-work catalog: 588 -> 718 references/s in
    one process, same peak memory: reference counting still frees everything, and the few cycles
    wait for the next collection). Batches in threads share the pause; the last one resumes it."""
    global _GC_PAUSES
    with _GC_LOCK:
        _GC_PAUSES += 1
        if _GC_PAUSES == 1:
            gc.disable()
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES -= 1
            if _GC_PAUSES == 0:
                gc.enable()


def resolve_batch_references(references: Sequence[Reference], catalog: Any, remote: Any = None,
                             search: SearchStep | None = None) -> list:
    """The resolution chain over one batch, with this process's fuzzy matcher and the collector
    paused: what ``run_batch``, ``citeledger eval`` and the benchmarks all run."""
    with gc_paused():
        return apply_rule_chain(references, catalog, get_fuzzy(catalog), remote, search)


def run_batch(job: BatchJob) -> dict[str, int]:
    """Resolve one batch and write its observations. Skips a batch already written (resume)."""
    ledger = job.ledger
    if ledger.batch_done(job.run_id, job.part):
        return {"skipped": job.size}
    catalog = get_catalog(job.catalog, job.catalog_generation)
    remote = get_remote(job.remote)
    if remote is not None:
        remote.begin_run(job.run_id)  # the run's circuits and remote time (nothing changes for its next batch)
    resolutions = resolve_batch_references(job.references, catalog, remote,
                                           search_step(remote, job.run_id, job.search_budget, job.search_skip_files))
    with gc_paused():  # (thousands of short-lived dicts and strings: no cycles worth a collection of the heap)
        columns = observation_columns(resolutions, job.run_id, job.observed_at, job.catalog_fingerprint)
    fetched = fetched_work_rows(resolutions)
    if fetched:  # kept before the batch is marked done, so a crash cannot lose them
        ledger.write_fetched_works(job.run_id, job.part, fetched)
    ledger.write_observation_columns(job.run_id, job.part, columns)
    counts: dict[str, int] = {}
    for status in columns["status"]:
        counts[status] = counts.get(status, 0) + 1
    return counts


REMOTE_SOURCES = ("arxiv_api", "crossref_api", *SEARCH_SOURCES.values())


def fetched_work_rows(resolutions: Sequence[Any]) -> list[dict[str, Any]]:
    """The works remote services gave the batch's links, as works-JSONL rows for the catalog. A
    work a search found carries its provenance (``fetched_from``: service, query, time), which the
    fetched file keeps for audit and the catalog build ignores."""
    rows: dict[str, dict[str, Any]] = {}
    for r in resolutions:
        work, source = r.verdict.work, r.verdict.resolver_source
        if work is None or source not in REMOTE_SOURCES or work.work_id in rows:
            continue
        row = works_jsonl_row(work)
        search = (r.verdict.evidence or {}).get("search") or []
        if search:
            last = search[-1]
            row["fetched_from"] = {"resolver_source": source, "service": last.get("service"),
                                   "query": last.get("query"), "fetched_at": last.get("fetched_at")}
        rows[work.work_id] = row
    return [rows[k] for k in sorted(rows)]


def run_batch_retrying(job: BatchJob) -> dict[str, int]:
    """``run_batch``, retried like the flow's task: only errors that may pass."""
    for delay in (*RETRY_DELAYS, None):
        try:
            return run_batch(job)
        except TransientError:
            if delay is None:
                raise
            time.sleep(delay)
    raise AssertionError("unreachable")
