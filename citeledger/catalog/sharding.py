"""A catalog sharded: its live generation's fuzzy index split into shards under the build lock, and
how the catalog was last sharded (``sharding.json``), which the nightly refresh follows for its new
generations. The shards themselves are built and read by ``citeledger.index.shards``."""
from __future__ import annotations

import json
from typing import Any

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.index.shards import Mapper, build_shards, dask_mapper, stamp_of
from citeledger.storage.atomic import atomic_write_bytes, disk_errors
from citeledger.storage.locking import exclusive
from citeledger.storage.places import CatalogDir, CatalogPlaces
from resolvers.errors import ConfigError


def shard_generation(catalog_dir: CatalogDir, n_shards: int, mapper: Mapper | None = None,
                     how: dict[str, Any] | None = None) -> dict[str, Any]:
    """Shard the catalog's live generation (under the catalog's build lock), and remember for the
    catalog the count and ``how`` the shard tasks ran (``sharding.json``: what the nightly refresh
    shards its new generations into, and where)."""


    store = CatalogStore(catalog_dir)
    with exclusive(store.dir), disk_errors(store.dir, access=False):
        gen = store.current()
        if gen is None:
            raise ConfigError(f"no catalog in {catalog_dir}: run "
                              f"`citeledger catalog build --catalog {catalog_dir} FILE...`")
        wanted = json.dumps({"n_shards": n_shards, **(how or {})}, sort_keys=True).encode()
        atomic_write_bytes(store.places.sharding, wanted)
        return build_shards(gen, n_shards, mapper)

def sharding_of(catalog_dir: CatalogDir) -> dict[str, Any] | None:
    """How the catalog was last sharded (``sharding.json``: ``n_shards``, and ``task_runner``,
    ``dask_workers``, ``dask_address`` when given; for a catalog sharded before that file existed,
    its live generation's count, in this process), or None: a catalog nobody sharded."""


    path = CatalogPlaces.of(catalog_dir).sharding
    try:
        wanted = json.loads(path.read_text())
        if not isinstance(wanted, dict) or int(wanted["n_shards"]) < 1:
            raise ValueError("n_shards must be 1 or more")
        return wanted
    except FileNotFoundError:
        live = CatalogStore(catalog_dir).current()
        stamp = stamp_of(live) if live is not None else None
        return {"n_shards": int(stamp["n_shards"])} if stamp else None
    except RecursionError:
        raise ConfigError(f"{path}: not a shard count (JSON nested past the parser's depth); remove it or shard "
                          "again with `citeledger catalog build --shards N`") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a shard count ({exc}); remove it or shard again "
                          "with `citeledger catalog build --shards N`") from exc


def shard_with(catalog_dir: CatalogDir, n_shards: int, task_runner: str = "threads", dask_workers: int = 2,
               dask_address: str | None = None) -> dict[str, Any]:
    """Shard the live generation, the shard tasks in this process or on a Dask cluster."""
    if task_runner != "dask":
        return shard_generation(catalog_dir, n_shards, how={"task_runner": "threads"})
    how = {"task_runner": "dask", "dask_workers": dask_workers, "dask_address": dask_address}
    with dask_mapper(dask_workers, dask_address) as mapper:
        return shard_generation(catalog_dir, n_shards, mapper, how)


def reshard(catalog_dir: CatalogDir, sharding: dict[str, Any]) -> dict[str, Any]:
    """Shard the live generation as ``sharding_of`` says the catalog was."""
    return shard_with(catalog_dir, int(sharding["n_shards"]), str(sharding.get("task_runner") or "threads"),
                      int(sharding.get("dask_workers") or 2), sharding.get("dask_address"))
