"""Observations: one ledger row per reference per run, with a deterministic id and a digest.

``observation_id`` depends on the reference, the catalog's fingerprint and the code version only,
so the same reference resolved against the same catalog by the same code gets the same id in any
run. ``observation_digest`` is ``sha256:`` over the canonical JSON of the observation's content
(everything but the run and the time), so it too is stable across re-runs.
"""
from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime
from importlib import metadata
from typing import Any, Sequence

import orjson

from resolvers.canonical import canonical_json
from resolvers.model import Reference
from resolvers.resolution import Resolution

try:
    CODE_VERSION = "citeledger-" + metadata.version("citeledger")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    CODE_VERSION = "citeledger-dev"

# Every column of a row, in the order ``observation_row`` gives them
ROW_KEYS = ("observation_id", "citing_paper", "reference_index", "raw", "source", "status", "reason",
            "resolver_source", "work_id", "doi", "arxiv_id", "extracted_dois", "extracted_arxiv_ids", "score",
            "evidence", "observation_digest", "run_id", "observed_at")


_STR = json.encoder.encode_basestring  # the C writer of a JSON string, non-ASCII kept: canonical_json's own


def observation_id(reference: Reference, catalog_fingerprint: str, code_version: str = CODE_VERSION) -> str:
    key = _id_key(reference.citing_paper, reference.reference_index, reference.raw, reference.source,
                  catalog_fingerprint, code_version)
    return "obs:" + hashlib.sha256(key.encode("utf-8", errors="surrogatepass")).hexdigest()[:32]


def _id_key(paper: Any, index: Any, raw: Any, source: Any, fingerprint: str, code_version: str) -> str:
    """``canonical_json`` of the id's six values, written directly when they have their usual
    types (five strings and an int: the same bytes), else by ``canonical_json``."""
    if type(paper) is str and type(index) is int and type(raw) is str and type(source) is str \
            and type(fingerprint) is str and type(code_version) is str:
        return "[" + ",".join((_STR(paper), int.__repr__(index), _STR(raw), _STR(source), _STR(fingerprint),
                               _STR(code_version))) + "]"
    return canonical_json([paper, index, raw, source, fingerprint, code_version])


def _plain(value: Any) -> bool:
    """Does orjson write ``value`` as ``canonical_json`` does? Yes for str, int, bool and None,
    and dicts with str keys, lists and tuples of them, and floats that Python's ``repr`` writes
    without an exponent (0, and 1e-4 <= |x| < 1e16: orjson writes 1e-05 as 0.00001); strictly
    these types (a subclass, an Enum, a datetime go to ``default=str``). Its escapes, key order
    (code points) and integers are the encoder's; a lone surrogate or an int past 64 bits makes
    orjson raise, and then the encoder writes it. (Containers are walked by loops that settle
    the scalars in line: a call per value was half of an observation row's time.)"""
    t = type(value)
    if t is dict:
        for k, v in value.items():
            tv = type(v)
            if type(k) is not str or not (tv is str or tv is int or v is None or tv is bool or _plain(v)):
                return False
        return True
    if t is list or t is tuple:
        for v in value:
            tv = type(v)
            if not (tv is str or tv is int or v is None or tv is bool or _plain(v)):
                return False
        return True
    if t is str or t is int or t is bool or value is None:
        return True
    if t is float:
        return value == 0.0 or 1e-4 <= abs(value) < 1e16  # (NaN and the infinities: neither)
    return False


def canonical_bytes(value: Any) -> bytes:
    """``canonical_json(value)`` as UTF-8 (lone surrogates passed through): through orjson when it
    writes the same bytes (``_plain``), 5-10 times faster than the ``json`` encoder."""
    if _plain(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            pass
    return canonical_json(value).encode("utf-8", errors="surrogatepass")


def _clean_score(score: float | None) -> float | None:
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return None
    return round(min(1.0, max(0.0, float(score))), 6)


def _content(resolution: Resolution, catalog_fingerprint: str, code_version: str) -> dict[str, Any]:
    """The observation's content: every column the digest is taken over."""
    ref, verdict = resolution.reference, resolution.verdict
    work = verdict.work
    return {
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
        "evidence": canonical_bytes(verdict.evidence).decode("utf-8", errors="surrogatepass"),
    }


def observation_row(resolution: Resolution, run_id: str, observed_at: datetime, catalog_fingerprint: str,
                    code_version: str = CODE_VERSION) -> dict[str, Any]:
    """The ledger row of one resolution, with every column of the contract."""
    content = _content(resolution, catalog_fingerprint, code_version)
    return {**content, "observation_digest": _digest(content), "run_id": run_id, "observed_at": observed_at}


def observation_columns(resolutions: Sequence[Resolution], run_id: str, observed_at: datetime,
                        catalog_fingerprint: str, code_version: str = CODE_VERSION) -> dict[str, list[Any]]:
    """The ledger rows of a batch as columns (``ROW_KEYS``), the same values as ``observation_row``
    gives row by row: Arrow builds a table from columns in a fraction of the time it takes from
    one dict per row."""
    columns: dict[str, list[Any]] = {k: [] for k in ROW_KEYS}
    appends = [(k, columns[k].append) for k in ROW_KEYS[:15]]
    digests = columns["observation_digest"].append
    for resolution in resolutions:
        content = _content(resolution, catalog_fingerprint, code_version)
        for key, append in appends:
            append(content[key])
        digests(_digest(content))
    n = len(resolutions)
    columns["run_id"] = [run_id] * n
    columns["observed_at"] = [observed_at] * n
    return columns


def _digest(content: dict[str, Any]) -> str:
    """``sha256:`` over the content's canonical JSON."""
    return "sha256:" + hashlib.sha256(canonical_bytes(content)).hexdigest()
