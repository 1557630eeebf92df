"""``catalog build --shards N``: the options and the step after the build (``shards.py`` does the
work; imported only when asked, so the CLI starts without numpy)."""
from __future__ import annotations

import argparse

from citeledger.options import positive_int


def shard_options(build: argparse.ArgumentParser) -> None:
    """The shard options of ``catalog build``: how many, and where the shard tasks run."""
    build.add_argument("--shards", type=positive_int, help="also split the fuzzy index by work into this many "
                       "shards, one task each (docs/operator/scale.md); runs then retrieve from the shards, "
                       "same observations")
    build.add_argument("--task-runner", choices=["threads", "dask"], default="threads",
                       help="where the shard tasks run: threads (this process, one after another) or dask (a cluster)")
    build.add_argument("--dask-address", help="scheduler of an existing Dask cluster (default: a local one)")
    build.add_argument("--dask-workers", type=positive_int, default=2,
                       help="worker processes of the local Dask cluster")


def shard_catalog(args: argparse.Namespace) -> int:
    """Shard the generation the build just published and print the figures per shard."""
    from citeledger.catalog.sharding import shard_with
    from citeledger.index.shards import print_shards

    print_shards(shard_with(args.catalog, args.shards, args.task_runner, args.dask_workers, args.dask_address))
    return 0
