"""The resolve pipeline as plain functions: plan a run, resolve and write one batch, finish a run.

The Prefect flow (``flows/resolve.py``) and the CLI call exactly these; the flow adds batching
over tasks, retries, logging and artifacts.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from resolvers.model import Reference, Status, STATE_ORDER
from resolvers.observation import observation_row
from resolvers.resolution import resolve_batch

from .inputs import InputLimits, InputReject, read_references
from .store import LedgerStore, ParquetCatalog, check_run_id, file_sha256

DEFAULT_BATCH_SIZE = 5000


def new_run_id() -> str:
    return "run-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class BatchJob:
    """One unit of work for a task: a slice of the run's references and where it goes."""

    run_id: str
    part: str
    catalog_dir: str
    ledger_dir: str
    observed_at: datetime
    catalog_fingerprint: str
    references: tuple[Reference, ...]
    remote: bool = False


@dataclass
class RunPlan:
    run_id: str
    catalog_dir: str
    ledger_dir: str
    inputs: list[dict[str, Any]]
    observed_at: datetime
    catalog_fingerprint: str
    jobs: list[BatchJob]
    pending: list[BatchJob]
    rejects: list[InputReject]
    resumed: bool
    references: int
    started: float = field(default_factory=time.monotonic)


def read_inputs(paths: Sequence[str | Path], limits: InputLimits, citing_paper: str | None = None
                ) -> tuple[list[Reference], list[InputReject]]:
    """Every row of every input as a reference or a reject; a reference seen twice is a reject."""
    references: list[Reference] = []
    rejects: list[InputReject] = []
    seen: dict[tuple[str, int], str] = {}
    for path in paths:
        for item in read_references(path, limits, citing_paper):
            if isinstance(item, InputReject):
                rejects.append(item)
                continue
            key = (item.citing_paper, item.reference_index)
            if key in seen:
                rejects.append(InputReject(str(item.file), item.line, "reference_index",
                                           f"duplicate reference ({item.citing_paper}, {item.reference_index}); "
                                           f"first seen at {seen[key]}", item.raw[:200]))
                continue
            seen[key] = f"{item.file}:{item.line}"
            references.append(item)
    return references, rejects


def plan_run(inputs: Sequence[str | Path], catalog_dir: str | Path, ledger_dir: str | Path,
             run_id: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, limits: InputLimits | None = None,
             citing_paper: str | None = None, remote: bool = False) -> RunPlan:
    """Read the inputs, fix the batches, and start (or pick up) the run in the ledger."""
    limits = limits or InputLimits()
    run_id = check_run_id(new_run_id() if run_id is None else run_id)
    catalog = get_catalog(catalog_dir)
    input_info = []
    for p in inputs:
        path = Path(p)
        input_info.append({"path": str(path), "sha256": file_sha256(path) if path.exists() else "missing"})
    references, rejects = read_inputs(inputs, limits, citing_paper)
    ledger = LedgerStore(ledger_dir)
    manifest, resumed = ledger.begin_run(run_id, input_info, catalog.fingerprint,
                                         {"batch_size": batch_size, "citing_paper": citing_paper, "remote": remote,
                                          "max_raw_chars": limits.max_raw_chars})
    if resumed:
        batch_size = manifest.options.get("batch_size", batch_size)
    jobs = []
    for start in range(0, len(references), batch_size):
        chunk = tuple(references[start:start + batch_size])
        digest = hashlib.sha256(json.dumps([[r.citing_paper, r.reference_index, r.raw] for r in chunk])
                                .encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
        jobs.append(BatchJob(run_id, f"part-{start // batch_size:06d}-{digest}", str(catalog_dir), str(ledger_dir),
                             manifest.observed_at, catalog.fingerprint, chunk, remote))
    ledger.write_rejects(run_id, "input-rejects", [
        {"run_id": run_id, "file": r.file, "line": r.line, "field": r.field, "reason": r.reason,
         "excerpt": r.excerpt} for r in rejects])
    pending = [j for j in jobs if not ledger.batch_done(run_id, j.part)]
    return RunPlan(run_id, str(catalog_dir), str(ledger_dir), input_info, manifest.observed_at,
                   catalog.fingerprint, jobs, pending, rejects, resumed, len(references))


# One catalog (and fuzzy index) per process, shared by the tasks of that process.
_CACHE: dict[tuple[str, str], Any] = {}
_CACHE_LOCK = threading.Lock()


def get_catalog(catalog_dir: str | Path) -> ParquetCatalog:
    key = (str(Path(catalog_dir).resolve()), "catalog")
    with _CACHE_LOCK:
        cat = _CACHE.get(key)
        current = ParquetCatalog.generation_of(catalog_dir)
        if cat is None or cat.generation_dir != current:
            cat = ParquetCatalog(catalog_dir)
            _CACHE[key] = cat
            _CACHE.pop((key[0], "fuzzy"), None)
        return cat


def get_fuzzy(catalog: ParquetCatalog) -> Any:
    """The fuzzy matcher over this catalog's index, or None if the catalog has no index."""
    key = (str(catalog.store.dir.resolve()), "fuzzy")
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = _load_fuzzy(catalog)
        return _CACHE[key]


def _load_fuzzy(catalog: ParquetCatalog) -> Any:
    try:
        from resolvers.fuzzy import FuzzyResolver

        from .blocking import load_retriever
    except ImportError:
        return None
    retriever = load_retriever(catalog.generation_dir)
    return FuzzyResolver(retriever) if retriever is not None else None


def get_remote(enabled: bool) -> Any:
    if not enabled:
        return None
    from resolvers.remote import remote_from_config

    from .config import load_config

    return remote_from_config(load_config())


def run_batch(job: BatchJob) -> dict[str, int]:
    """Resolve one batch and write its observations. Skips a batch already written (resume)."""
    ledger = LedgerStore(job.ledger_dir)
    if ledger.batch_done(job.run_id, job.part):
        return {"skipped": len(job.references)}
    catalog = get_catalog(job.catalog_dir)
    resolutions = resolve_batch(job.references, catalog, get_fuzzy(catalog), get_remote(job.remote))
    rows = [observation_row(r, job.run_id, job.observed_at, job.catalog_fingerprint) for r in resolutions]
    ledger.write_observations(job.run_id, job.part, rows)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts


def finish_run(plan: RunPlan, errors: list[str] | None = None) -> dict[str, Any]:
    """Write the run's row (counts from the ledger itself, so a resumed run counts everything)."""
    ledger = LedgerStore(plan.ledger_dir)
    counts = ledger.read_run_counts(plan.run_id) if plan.jobs else {}
    ordered = {s.value: int(counts.get(s.value, 0)) for s in STATE_ORDER}
    seconds = time.monotonic() - plan.started
    row = {"run_id": plan.run_id, "started_at": plan.observed_at, "finished_at": datetime.now(timezone.utc),
           "inputs": [i["path"] for i in plan.inputs], "catalog_fingerprint": plan.catalog_fingerprint,
           "references": plan.references, "rejects": len(plan.rejects),
           "state_counts": json.dumps(ordered), "seconds": round(seconds, 3),
           "errors": json.dumps(errors or [])}
    ledger.finish_run(row)
    resolved_now = sum(len(j.references) for j in plan.pending)
    return {"run_id": plan.run_id, "references": plan.references, "rejects": len(plan.rejects),
            "states": ordered, "seconds": round(seconds, 3), "resumed": plan.resumed,
            "references_per_second": round(resolved_now / seconds, 1) if seconds > 0 else None,
            "reject_messages": [r.message for r in plan.rejects[:20]],
            "links": sum(ordered[s.value] for s in Status if s.is_link)}
