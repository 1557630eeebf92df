"""A catalog generation's fuzzy index split by work into shards, built one task per shard (in this
process, or on a Dask cluster), and the retriever over them (``ShardedRetriever``).

Layout, under ``<generation>/shards/`` (docs/operator/scale.md has the design and the figures):
- ``shard-NNN/works.parquet``: the works whose stable hash (FNV-1a of ``work_id``) modulo N is NNN,
  in the generation's order (by ``work_id``), every column; ``global_rows.npy``: each one's row in
  the generation's ``works.parquet``; the shard's own index files (``blocking.build_index``:
  postings, works.arrow, work_forms.arrow); ``global_idf.npy``: the global idf of its terms;
- ``terms_hashes.npy``, ``terms_df.npy``, ``terms_idf.npy``: the global term table, df summed over
  the shards (what the planner chooses terms by);
- ``shards.json``: the stamp, written last (present: the rest is complete, for this works.parquet).

Sharding happens after the merge, which decides identity: dedup across sources stays global. The
generation keeps its own identifier index and works table (identifier lookups, one global index of
a few tens of bytes per identifier); only the fuzzy retrieval is sharded. The shards answer the
same candidates as the generation's own index (``resolvers.candidates.shard_retrieval``), so a run gives the
same observations whether or not the generation has shards, and shards may be added to a
published generation (``shard_generation``) without a new generation.
"""
from __future__ import annotations

import json
import logging
import resource
import shutil
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from citeledger.index import blocking
from citeledger.storage.atomic import atomic_move, atomic_write_bytes, publish_dir, staged
from citeledger.storage.external_sort import append_raw, npy_stream, part_bounds, parts_for, raw_to_npy
from citeledger.storage.mapped_files import load_array, release_if_over
from citeledger.storage.parquet_batches import parquet_file
from resolvers.candidates.retrieval import Candidate, TermIds, term_hashes
from resolvers.candidates.shard_retrieval import Shard, ShardedIndex, global_idf_of, global_terms
from resolvers.errors import ConfigError

SHARDS_DIR = "shards"
STAMP = "shards.json"
SHARDS_FORMAT = 1
GLOBAL_ROWS, GLOBAL_IDF = "global_rows.npy", "global_idf.npy"
TERMS = ("hashes", "df", "idf")  # terms_<name>.npy
Mapper = Callable[[Callable[[Path], dict[str, Any]], list[Path]], list[dict[str, Any]]]


def shard_of(work_ids: pa.Array | pa.ChunkedArray, n_shards: int) -> np.ndarray:
    """The shard of each work: its id's stable 64-bit hash modulo N (the same on every machine)."""
    return (term_hashes(work_ids).view(np.uint64) % np.uint64(n_shards)).astype(np.int64)


def shard_dirs(root: Path, n_shards: int) -> list[Path]:
    return [root / f"shard-{i:03d}" for i in range(n_shards)]


def _stamp(gen_dir: Path, n_shards: int) -> dict[str, Any]:
    works = gen_dir / blocking.WORKS_FILE
    return {"format": SHARDS_FORMAT, "n_shards": n_shards, "n_works": pq.ParquetFile(works).metadata.num_rows,
            "works_bytes": works.stat().st_size}


def stamp_of(gen_dir: Path) -> dict[str, Any] | None:
    """The generation's shard stamp when its shards are complete and current, else None."""
    path = Path(gen_dir) / SHARDS_DIR / STAMP
    try:
        stamp = json.loads(path.read_text())
        current = {k: stamp.get(k) for k in ("format", "n_shards", "n_works", "works_bytes")}
        return stamp if current == _stamp(Path(gen_dir), int(stamp["n_shards"])) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def partition(gen_dir: Path, root: Path, n_shards: int, chunk_rows: int = 200_000) -> list[int]:
    """Split the generation's works.parquet into the shards' works.parquet and global_rows.npy, in
    one streamed pass (memory: a chunk; the global rows go through raw files until each shard's
    count is known); returns the works per shard."""
    pf = parquet_file(gen_dir / blocking.WORKS_FILE)
    dirs = shard_dirs(root, n_shards)
    counts = [0] * n_shards
    root.mkdir(parents=True, exist_ok=True)
    scratch = blocking.scratch_dir(root, "rows-")
    raw = [scratch / f"shard-{i:03d}.rows" for i in range(n_shards)]
    try:
        with ExitStack() as stack:
            writers = []
            for d in dirs:
                d.mkdir(parents=True, exist_ok=True)
                tmp = stack.enter_context(staged(d / blocking.WORKS_FILE))
                writers.append(stack.enter_context(pq.ParquetWriter(tmp, pf.schema_arrow, compression="zstd")))
            row0 = 0
            for batch in pf.iter_batches(batch_size=chunk_rows):
                which = shard_of(batch.column(batch.schema.get_field_index("work_id")), n_shards)
                for i, writer in enumerate(writers):
                    take = np.flatnonzero(which == i)
                    writer.write_table(pa.Table.from_batches([batch.take(pa.array(take))]))
                    append_raw(raw[i], (take + row0).astype(np.int64))
                    counts[i] += len(take)
                row0 += batch.num_rows
        for d, path, count in zip(dirs, raw, counts):
            raw_to_npy(path, d / GLOBAL_ROWS, np.int64, count)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return counts


def build_shard(shard_dir: Path) -> dict[str, Any]:
    """One shard's index (a task: in this process or on a Dask worker); its figures for the stamp
    (seconds, bytes on disk, and the process's peak RSS so far: on a Dask worker an upper bound,
    as it counts pages the worker inherited)."""
    started = time.perf_counter()
    stats = blocking.build_index(shard_dir)
    return {"shard": shard_dir.name, "works": stats["works"], "terms": stats["tokens"], "postings": stats["postings"],
            "seconds": round(time.perf_counter() - started, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "bytes": sum(p.stat().st_size for p in shard_dir.iterdir() if p.is_file())}


def write_global_terms(root: Path, dirs: Sequence[Path], n_works: int) -> int:
    """The global term table (df summed by term hash over the shards) and each shard's global idf
    of its own terms; returns the number of terms. A hash range at a time (``global_terms`` of
    each range, ranges in hash order): the shards' tables are sorted by hash, so a range of each
    is a slice of its mapped file, and memory holds one range however many terms there are
    (summed whole, the shards' terms cost about 32 bytes each in one process)."""
    hashes = [load_array(d / "index_term_hashes.npy") for d in dirs]  # (ids: positions here)
    dfs = [load_array(d / "index_df.npy") for d in dirs]
    parts = parts_for(sum(len(h) for h in hashes))
    bounds = part_bounds(parts)
    cuts = [np.concatenate([[0], np.searchsorted(h, bounds), [len(h)]]).tolist() for h in hashes]
    scratch = blocking.scratch_dir(root, "terms-")
    raw = {name: scratch / f"terms-{name}.raw" for name in TERMS}
    n_terms = 0
    try:
        with ExitStack() as stack:
            shard_idf = [stack.enter_context(npy_stream(d / GLOBAL_IDF, np.float32, len(h)))
                         for d, h in zip(dirs, hashes)]
            for p in range(parts):
                own = [np.asarray(h[c[p]:c[p + 1]]) for h, c in zip(hashes, cuts)]
                table = global_terms(own, [np.asarray(df[c[p]:c[p + 1]]) for df, c in zip(dfs, cuts)], n_works)
                for name, array in zip(TERMS, table):
                    append_raw(raw[name], array)
                for out, own_hashes in zip(shard_idf, own):
                    out.write(global_idf_of(TermIds.from_sorted(own_hashes), table[0], table[2]))
                n_terms += len(table[0])
                release_if_over()  # (the ranges read so far: mapped pages, handed back to the page cache)
        for name, dtype in zip(TERMS, (np.int64, np.int64, np.float32)):
            raw_to_npy(raw[name], root / f"terms_{name}.npy", dtype, n_terms)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return n_terms


def build_shards(gen_dir: Path, n_shards: int, mapper: Mapper | None = None) -> dict[str, Any]:
    """Shard a generation folder: partition, one index task per shard (``mapper``, e.g. a Dask
    client's map; default: one after another here), the global term table, the stamp last.
    Built in a staging folder beside ``shards/`` and swapped in, so readers see whole shards."""
    if n_shards < 1:
        raise ConfigError("--shards must be >= 1")
    started = time.perf_counter()
    staging = gen_dir / f".{SHARDS_DIR}-building"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        partition(gen_dir, staging, n_shards)
        split_s = time.perf_counter() - started
        dirs = shard_dirs(staging, n_shards)
        per_shard = (mapper or _serial)(build_shard, dirs)
        stamp = _stamp(gen_dir, n_shards)
        terms = write_global_terms(staging, dirs, stamp["n_works"])
        stamp.update(terms=terms, partition_seconds=round(split_s, 2), shards=per_shard,
                     seconds=round(time.perf_counter() - started, 2))
        atomic_write_bytes(staging / STAMP, json.dumps(stamp, indent=2, sort_keys=True).encode())
        old, aside = gen_dir / SHARDS_DIR, gen_dir / f".{SHARDS_DIR}-replaced"
        shutil.rmtree(aside, ignore_errors=True)
        if old.exists():  # moved aside in one rename, removed once the new shards are in place
            atomic_move(old, aside)
        publish_dir(staging, old)
        shutil.rmtree(aside, ignore_errors=True)  # (a process mapping the old files keeps them until it lets go)
        return stamp
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _serial(fn: Callable[[Path], dict[str, Any]], items: list[Path]) -> list[dict[str, Any]]:
    return [fn(item) for item in items]


def print_shards(stamp: dict[str, Any]) -> None:
    """The build's figures per shard (the CLI's summary)."""
    for s in stamp["shards"]:
        print(f"  {s['shard']}: {s['works']} works, {s['postings']} postings, {s['seconds']:.1f} s, "
              f"{s['bytes'] / 1e6:.1f} MB, peak RSS {s['peak_rss_mb']} MB")
    print(f"{stamp['n_shards']} shards: {stamp['terms']} terms, partition {stamp['partition_seconds']:.1f} s, "
          f"{stamp['seconds']:.1f} s in all")


@contextmanager
def dask_mapper(workers: int = 2, address: str | None = None) -> Iterator[Mapper]:
    """A map over a Dask cluster: the scheduler at ``address``, else a temporary local cluster of
    ``process_cache`` single-threaded worker processes (as prefect-dask starts one)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise ConfigError("--task-runner dask needs Dask: install the `dask` extra "
                          "(pip install 'citeledger[dask]')") from exc

    with ExitStack() as stack:
        if address:
            client = stack.enter_context(Client(address))
        else:
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                       dashboard_address=None, silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        yield lambda fn, items: client.gather(client.map(fn, items, pure=False))


class ShardedRetriever:
    """``blocking.ParquetRetriever``'s answers from a generation's shards: each shard's files
    memory-mapped, terms chosen by the global table, candidates merged (``ShardedIndex``)."""

    def __init__(self, gen_dir: str | Path, **index_options):
        root = Path(gen_dir) / SHARDS_DIR
        stamp = json.loads((root / STAMP).read_text())
        self.n_works = int(stamp["n_works"])
        self.parts = [blocking.ParquetRetriever(d, idf=_mapped(d / GLOBAL_IDF))
                      for d in shard_dirs(root, int(stamp["n_shards"]))]
        shards = [Shard(p.index, _mapped(p.catalog_dir / GLOBAL_ROWS)) for p in self.parts]
        hashes, df, idf = (_mapped(root / f"terms_{name}.npy") for name in TERMS)
        self.index = ShardedIndex(hashes, df, idf, self.n_works, shards, **index_options)

    def candidates_batch(self, queries: Sequence[Sequence[str]], k: int = 20) -> list[list[Candidate]]:
        found = self.index.query_rows(queries, k)
        wanted: list[set[int]] = [set() for _ in self.parts]
        for answer in found:
            for shard, local, _, _ in answer:
                wanted[shard].add(local)
        works, forms = [], []
        for part, rows in zip(self.parts, wanted):
            w, f = part._works_forms(sorted(rows))
            works.append(w)
            forms.append(f)
        return [[Candidate(works[s][lr], row, score, forms[s][lr]) for s, lr, row, score in answer]
                for answer in found]

    def document_frequency(self, token: str) -> int:
        return self.index.document_frequency(token)


def _mapped(path: Path) -> np.ndarray:
    """An array file memory-mapped, as a plain ndarray view (``blocking._load_index`` says why)."""
    return np.asarray(np.load(path, mmap_mode="r"))


def retriever(gen_dir: str | Path) -> Any:
    """The generation's retriever: over its shards when it has current ones, else its own index
    (which answers the same). Shards swapped out while they load (``build_shards``) are the same
    as none: the files gone mid-load fall back to the generation's own index."""
    if stamp_of(Path(gen_dir)):
        try:
            return ShardedRetriever(gen_dir)
        except FileNotFoundError:
            pass
    return blocking.ParquetRetriever(gen_dir)
