"""What each process loads once and shares between its tasks: the catalog generation, the fuzzy
matcher over its blocking index, the remote resolvers (so rate limits are shared) and the notice
index. A worker process of a pool gets its own copies; a thread shares them under one lock."""
from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path
from typing import Any, NamedTuple

from citeledger.catalog.catalog_store import ParquetCatalog
from citeledger.config import Config, load_config
from citeledger.engine.fuzzy_outcomes import generation_key, pool_share
from citeledger.index.shards import retriever
from citeledger.storage.places import CatalogDir
from citeledger.storage.remote_state import SearchCacheDir
from resolvers.candidates.fuzzy import OUTCOME_CACHE, FuzzyResolver
from resolvers.errors import ConfigError
from resolvers.notices.standing import NoticeEvent, NoticeIndex


class CacheKey(NamedTuple):
    """What a cached object is (``kind``) and which catalog generation it belongs to."""

    kind: str  # "catalog" | "fuzzy" | "notices" | "remote"
    root: str = ""  # the catalog folder, resolved ("" for the remote resolvers)
    generation: str | None = None


_CACHE: dict[CacheKey, Any] = {}
_CACHE_LOCK = threading.Lock()
_PER_GENERATION = ("catalog", "fuzzy", "notices")  # dropped together when the generation changes
_REMOTE = CacheKey("remote")


def clear_caches() -> None:
    """Forget everything loaded (tests and benchmarks: a fresh process without starting one)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def get_catalog(catalog_dir: CatalogDir, generation: str | None = None) -> ParquetCatalog:
    """The catalog's live generation (or the one named), opened once per process."""
    root = str(Path(catalog_dir).resolve())
    with _CACHE_LOCK:
        if generation is None:
            current = ParquetCatalog.generation_of(catalog_dir)
            generation = current.name if current is not None else None
        key = CacheKey("catalog", root, generation)
        if key not in _CACHE:
            for old in [k for k in _CACHE if k.root == root and k.kind in _PER_GENERATION]:
                del _CACHE[old]  # one generation per catalog held in memory
            _CACHE[key] = ParquetCatalog(catalog_dir, generation)
        return _CACHE[key]


def _generation_key(kind: str, catalog: ParquetCatalog) -> CacheKey:
    return CacheKey(kind, str(catalog.store.dir.resolve()), catalog.generation_dir.name)


def get_fuzzy(catalog: ParquetCatalog) -> FuzzyResolver:
    """The fuzzy matcher over this catalog generation's blocking index (its shards when it has
    them: the same candidates), loaded once per process."""
    key = _generation_key("fuzzy", catalog)
    with _CACHE_LOCK:
        if key not in _CACHE:
            fuzzy = FuzzyResolver(retriever(catalog.generation_dir), cache_size=outcome_cache_size())
            if fuzzy.cache_size > 0:  # a pool worker shares its outcomes with its siblings
                fuzzy.share = pool_share(generation_key(*key, catalog.fingerprint))
            _CACHE[key] = fuzzy
        return _CACHE[key]


def outcome_cache_size() -> int:
    """Fuzzy outcomes a process keeps by parsed string (``CITELEDGER_OUTCOME_CACHE``, 0: none):
    off, a benchmark of repeated strings measures the cost of distinct ones."""
    value = os.environ.get("CITELEDGER_OUTCOME_CACHE", str(OUTCOME_CACHE))
    if not value.isdigit():
        raise ConfigError(f"CITELEDGER_OUTCOME_CACHE must be a count of outcomes (0: none), not {value!r}")
    return int(value)


def get_notice_index(catalog: ParquetCatalog) -> NoticeIndex:
    """The catalog's Retraction Watch events by DOI, loaded once per process."""
    key = _generation_key("notices", catalog)
    with _CACHE_LOCK:
        if key not in _CACHE:
            index = NoticeIndex()
            index.add([NoticeEvent.from_dict(row) for row in catalog.notice_events()])
            for source in catalog.manifest.get("notice_sources", {}):
                index.add([], source)
            _CACHE[key] = index
        return _CACHE[key]


def get_remote(enabled: bool, config: Config | None = None) -> Any:
    """The remote resolvers of the configuration, one per process so rate limits are shared
    (a run with remote on keeps its batches in this process's threads: ``task_runners``).
    ``--remote`` with none configured turns on arXiv and Crossref; their search answers are
    cached under ``<state_dir>/search-cache``. arXiv's e-print downloads go through the same
    arXiv client (``files``). ``config``: the loaded configuration, when the caller has it."""
    if not enabled:
        return None
    with _CACHE_LOCK:
        if _REMOTE not in _CACHE:
            config = config or load_config()
            if not config.remote:
                config = dataclasses.replace(config, remote=frozenset({"arxiv", "crossref"}))
            cache = SearchCacheDir(Path(config.state_dir) / "search-cache")
            from resolvers.remote.facade import build_remote  # HTTP clients: only a run with --remote

            _CACHE[_REMOTE] = build_remote(config.remote_settings(), search_cache=cache,
                                           eprint_max_bytes=config.limits.max_input_bytes)
        return _CACHE[_REMOTE]


def forget_remote() -> None:
    """Drop the process's remote resolvers and their clients (tests: a new configuration)."""
    with _CACHE_LOCK:
        remote = _CACHE.pop(_REMOTE, None)
    if remote is not None:
        remote.close()
