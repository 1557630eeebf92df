"""Observations: one ledger row per reference per run, with a deterministic id and a digest.

``observation_id`` depends on the reference, the catalog's fingerprint and the code version only,
so the same reference resolved against the same catalog by the same code gets the same id in any
run. ``observation_digest`` is ``sha256:`` over the canonical JSON of the observation's content
(everything but the run and the time), so it too is stable across re-runs.
"""
from __future__ import annotations

import hashlib
import math
from datetime import datetime
from importlib import metadata
from typing import Any

from .canonical import canonical_json
from .model import Reference
from .resolution import Resolution

try:
    CODE_VERSION = "citeledger-" + metadata.version("citeledger")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    CODE_VERSION = "citeledger-dev"


def observation_id(reference: Reference, catalog_fingerprint: str, code_version: str = CODE_VERSION) -> str:
    key = canonical_json([reference.citing_paper, reference.reference_index, reference.raw, reference.source,
                          catalog_fingerprint, code_version])
    return "obs:" + hashlib.sha256(key.encode("utf-8", errors="surrogatepass")).hexdigest()[:32]


def _clean_score(score: float | None) -> float | None:
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return None
    return round(min(1.0, max(0.0, float(score))), 6)


def observation_row(resolution: Resolution, run_id: str, observed_at: datetime, catalog_fingerprint: str,
                    code_version: str = CODE_VERSION) -> dict[str, Any]:
    """The ledger row of one resolution, with every column of the contract."""
    ref, verdict = resolution.reference, resolution.verdict
    work = verdict.work
    content = {
        "observation_id": observation_id(ref, catalog_fingerprint, code_version),
        "citing_paper": ref.citing_paper,
        "reference_index": ref.reference_index,
        "raw": ref.raw,
        "source": ref.source,
        "status": verdict.status.value,
        "reason": verdict.reason.value,
        "resolver_source": verdict.resolver_source if work is not None else None,
        "work_id": work.work_id if work else None,
        "doi": work.doi if work else None,
        "arxiv_id": work.arxiv_id if work else None,
        "extracted_dois": list(resolution.ids.dois),
        "extracted_arxiv_ids": list(resolution.ids.arxiv_ids),
        "score": _clean_score(verdict.score),
        "evidence": canonical_json(verdict.evidence),
    }
    digest = "sha256:" + hashlib.sha256(canonical_json(content).encode("utf-8", errors="surrogatepass")).hexdigest()
    return {**content, "observation_digest": digest, "run_id": run_id, "observed_at": observed_at}
