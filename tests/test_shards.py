"""A catalog's fuzzy index split into shards answers what the single index answers: the same
candidates (works, rows), the same scores bit for bit, in the same order.
The shards hold no score of their own: terms are chosen and weighted by the global df summed over
the shards, and ties are broken by the global row, so a sharded run writes the same observations."""
import gzip
import json
import re
import shutil
from itertools import islice
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from citeledger.catalog import sharding
from citeledger.index import shards
from citeledger.index.blocking import ParquetRetriever
from citeledger.storage import external_sort as hash_runs
from resolvers.candidates.retrieval import PostingsIndex, index_tokens, locator_tokens
from resolvers.candidates.shard_retrieval import Shard, ShardedIndex, global_idf_of, global_terms, term_table
from resolvers.parsing.fields import parse_reference

REPO = Path(__file__).parent.parent
GLUTTON = Path(__file__).resolve().parents[2] / "shared" / "data" / "refs" / "glutton_dev.jsonl.gz"
SAMPLE = REPO / "data" / "sample_references.jsonl"


def _queries(raws: list[str]) -> list[list[str]]:
    """The fuzzy matcher's two queries per string: its parsed title's tokens and its own tokens,
    each with its locator keys."""
    out = []
    for raw in raws:
        loc = locator_tokens(raw)
        out.append(index_tokens(parse_reference(raw).title) + loc)
        out.append([t for t in index_tokens(raw) if not t.isdigit()] + loc)
    return out


def _raw_strings(limit: int) -> list[str]:
    raws = [json.loads(line)["raw"] for line in SAMPLE.read_text().splitlines() if line.strip()]
    if GLUTTON.exists():  # the shared dev set (read-only); the repo's sample alone otherwise
        with gzip.open(GLUTTON, "rt") as fh:
            raws += [json.loads(line)["raw"] for line in islice(fh, limit)]
    return raws


def test_shards_rank_ties_and_pools_as_one_index():
    """Many works share titles (ties in both scores across shards) and commoner terms pass the
    re-scoring pool: three shards still answer the single index's rows and scores exactly."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(40)]
    docs = [list(rng.choice(words, size=rng.integers(2, 7), replace=False)) for _ in range(3000)]
    docs += [["rare", "alpha", "beta"]] * 5 + [["rare", "alpha"]] * 5
    whole = PostingsIndex.from_token_lists(docs, postings_budget=5000)
    which = rng.integers(0, 3, len(docs))
    parts = [PostingsIndex.from_token_lists([docs[r] for r in np.flatnonzero(which == s)]) for s in range(3)]
    tables = [term_table(p) for p in parts]
    hashes, df, idf = global_terms([h for h, _ in tables], [d for _, d in tables], len(docs))
    for p in parts:
        p.idf = global_idf_of(p.terms, hashes, idf)
    sharded = ShardedIndex(hashes, df, idf, len(docs), [Shard(p, np.flatnonzero(which == s))
                                                          for s, p in enumerate(parts)], postings_budget=5000)
    queries = [list(rng.choice(words, size=rng.integers(1, 9), replace=False)) for _ in range(300)]
    queries += [["rare", "alpha", "beta", "w1"], ["alpha", "rare"], ["nothing"], []]
    for k in (1, 5, 20):
        expected = whole.query_rows(queries, k)
        got = [[(row, score) for _, _, row, score in answer] for answer in sharded.query_rows(queries, k)]
        assert got == expected
    assert sharded.document_frequency("w3") == whole.document_frequency("w3")


@pytest.fixture(scope="module")
def sharded_generation(default_catalog, tmp_path_factory) -> Path:
    """A copy of the default catalog's generation with 3 shards (the session catalog stays as is)."""
    gen = Path(default_catalog) / (Path(default_catalog) / "CURRENT").read_text().strip()
    copy = tmp_path_factory.mktemp("sharded") / gen.name
    shutil.copytree(gen, copy)
    stamp = shards.build_shards(copy, 3)
    assert [s["works"] for s in stamp["shards"]] and sum(s["works"] for s in stamp["shards"]) == stamp["n_works"]
    return copy


def test_sharded_catalog_gives_the_single_index_candidates(sharded_generation):
    """Every query of a sample of glutton dev strings (and the repo's sample): same works, rows
    and scores from 3 shards as from the generation's own index."""
    whole, sharded = ParquetRetriever(sharded_generation), shards.retriever(sharded_generation)
    assert isinstance(sharded, shards.ShardedRetriever)
    queries = _queries(_raw_strings(600))
    expected, got = whole.candidates_batch(queries, 20), sharded.candidates_batch(queries, 20)
    assert sum(map(len, expected)) > len(queries)  # (the sample does reach the catalog)
    assert [[(c.work, c.row, c.blocking_score, c.forms) for c in answer] for answer in got] == \
        [[(c.work, c.row, c.blocking_score, c.forms) for c in answer] for answer in expected]


def test_a_partition_in_many_chunks_gives_each_shard_its_works_and_their_rows(sharded_generation, tmp_path):
    """Chunks of 1,000 works (17 chunks): each shard's global rows are the generation's rows of
    the works whose hash names that shard, ascending; its works.parquet holds those works in
    that order; no scratch folder is left."""
    root = tmp_path / "parts"
    counts = shards.partition(sharded_generation, root, 3, chunk_rows=1000)
    ids = pq.read_table(sharded_generation / "works.parquet", columns=["work_id"]).column("work_id")
    which = shards.shard_of(ids, 3)
    assert len(ids) > 16_000 and counts == [int((which == i).sum()) for i in range(3)]
    for i, d in enumerate(shards.shard_dirs(root, 3)):
        rows = np.load(d / shards.GLOBAL_ROWS)
        assert np.array_equal(rows, np.flatnonzero(which == i))
        assert pq.read_table(d / "works.parquet", columns=["work_id"]).column("work_id").to_pylist() == \
            ids.take(rows).to_pylist()
    assert not list(root.glob(".index-runs-*"))


def test_the_global_term_table_summed_by_hash_range_is_the_whole_sum(sharded_generation, tmp_path, monkeypatch):
    """Written a hash range at a time (as many ranges as ``parts_for`` allows), the global term
    table and each shard's global idf are what ``global_terms`` of every shard's whole table
    gives; the range files go with the step."""
    root = tmp_path / "shards"
    shutil.copytree(sharded_generation / shards.SHARDS_DIR, root)
    dirs = shards.shard_dirs(root, 3)
    for name in shards.TERMS:
        (root / f"terms_{name}.npy").unlink()
    for d in dirs:
        (d / shards.GLOBAL_IDF).unlink()
    monkeypatch.setattr(hash_runs, "PART_ROWS", 8)  # parts_for(): 16 ranges and more
    n_works = json.loads((root / shards.STAMP).read_text())["n_works"]
    n_terms = shards.write_global_terms(root, dirs, n_works)
    own = [np.load(d / "index_term_hashes.npy") for d in dirs]
    hashes, df, idf = global_terms(own, [np.load(d / "index_df.npy") for d in dirs], n_works)
    assert n_terms == len(hashes) > 1000 and hash_runs.parts_for(sum(map(len, own))) > 16
    for name, expected in zip(shards.TERMS, (hashes, df, idf)):
        got = np.load(root / f"terms_{name}.npy")
        assert got.dtype == expected.dtype and np.array_equal(got, expected)
    for d, h in zip(dirs, own):
        assert np.array_equal(np.load(d / shards.GLOBAL_IDF), global_idf_of(shards.TermIds.from_sorted(h), hashes, idf))
    assert not list(root.glob(".index-runs-*"))


def test_a_stale_or_partial_shard_folder_is_not_used(sharded_generation, tmp_path):
    """Without its stamp, or for another works.parquet, the generation's own index serves."""
    copy = tmp_path / sharded_generation.name
    shutil.copytree(sharded_generation, copy)
    assert shards.stamp_of(copy) is not None
    (copy / shards.SHARDS_DIR / shards.STAMP).unlink()
    assert isinstance(shards.retriever(copy), ParquetRetriever)


def test_shards_swapped_out_while_they_load_are_the_same_as_none(sharded_generation, tmp_path, monkeypatch):
    """A run opening the shards while ``build_shards`` replaces them finds their files gone:
    it takes the generation's own index (which answers the same), it does not fail (review)."""
    copy = tmp_path / sharded_generation.name
    shutil.copytree(sharded_generation, copy)

    def swapped_out(gen_dir):
        first = shards.shard_dirs(Path(gen_dir) / shards.SHARDS_DIR, 1)[0]
        assert first.is_dir()
        shutil.rmtree(first)
        return real(gen_dir)

    real = shards.ShardedRetriever
    monkeypatch.setattr(shards, "ShardedRetriever", swapped_out)
    assert isinstance(shards.retriever(copy), ParquetRetriever)


def test_sharding_again_replaces_the_shards_whole(sharded_generation, tmp_path):
    copy = tmp_path / sharded_generation.name
    shutil.copytree(sharded_generation, copy)
    before = shards.stamp_of(copy)
    shards.build_shards(copy, 2)
    after = shards.stamp_of(copy)
    assert before is not None and after is not None and after["n_shards"] == 2 != before["n_shards"]
    assert sorted(p.name for p in copy.iterdir() if p.name.startswith(".shards")) == []


def test_shards_built_on_a_dask_cluster_are_the_same_files(sharded_generation, tmp_path):
    """One task per shard on a local cluster of 2 worker processes: the same bytes as in one process."""
    copy = tmp_path / sharded_generation.name
    shutil.copytree(sharded_generation, copy)
    shutil.rmtree(copy / shards.SHARDS_DIR)
    with shards.dask_mapper(workers=2) as mapper:
        stamp = shards.build_shards(copy, 3, mapper)
    assert [s["shard"] for s in stamp["shards"]] == ["shard-000", "shard-001", "shard-002"]
    for path in sorted((sharded_generation / shards.SHARDS_DIR).rglob("*.npy")):
        other = copy / path.relative_to(sharded_generation)
        assert np.array_equal(np.load(path), np.load(other)), path.name


def test_catalog_build_with_shards_from_the_command_line(tmp_path, capsys):
    """``catalog build --shards 2``: the live generation gets current shards; 0 shards is a usage error."""
    from citeledger import cli

    catalog = tmp_path / "catalog"
    sources = [str(p) for p in sorted((REPO / "tests" / "fixtures" / "catalog").glob("*.jsonl"))]
    assert cli.main(["catalog", "build", "--catalog", str(catalog), *sources, "--shards", "2"]) == 0
    assert "2 shards:" in capsys.readouterr().out
    gen = catalog / (catalog / "CURRENT").read_text().strip()
    stamp = shards.stamp_of(gen)
    assert stamp["n_shards"] == 2
    assert cli.main(["catalog", "info", "--catalog", str(catalog), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)["shards"]
    assert info["shards"] == 2 and info["terms"] == stamp["terms"] > 0 and info["bytes"] > 0
    assert sum(info["works_per_shard"]) == stamp["n_works"] and min(info["works_per_shard"]) > 0
    assert cli.main(["catalog", "info", "--catalog", str(catalog)]) == 0
    assert re.search(rf"fuzzy index shards +2 +\({stamp['terms']:,} terms, works per shard", capsys.readouterr().out)
    (gen / shards.SHARDS_DIR / shards.STAMP).unlink()  # (a partial shard folder: runs use the one index)
    assert cli.main(["catalog", "info", "--catalog", str(catalog), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["shards"] is None
    assert cli.main(["catalog", "info", "--catalog", str(catalog)]) == 0
    assert "runs use the generation's one index" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:  # (argparse: a usage error, exit 2)
        cli.main(["catalog", "build", "--catalog", str(catalog), *sources, "--shards", "0"])
    assert exit_.value.code == 2


def test_a_run_on_the_shards_writes_the_observations_of_the_single_index(default_catalog, tmp_path):
    """The repo's sample references resolved before and after the catalog is sharded: the same
    observation ids, digests, states and works."""
    from citeledger import cli
    from citeledger.engine import process_cache as workers

    catalog = tmp_path / "catalog"
    shutil.copytree(default_catalog, catalog, ignore=shutil.ignore_patterns(".lock", ".pins"))
    common = ["resolve", str(SAMPLE), "--catalog", str(catalog), "--run-id", "r1"]
    assert cli.main([*common, "--ledger", str(tmp_path / "one")]) == 0
    sharding.shard_generation(catalog, 3)
    workers.clear_caches()  # (this process loaded the single index for the first run)
    assert cli.main([*common, "--ledger", str(tmp_path / "sharded")]) == 0
    fuzzy = [v for k, v in workers._CACHE.items() if k.kind == "fuzzy"]
    assert [type(f.retriever) for f in fuzzy] == [shards.ShardedRetriever]
    assert _observations(tmp_path / "sharded") == _observations(tmp_path / "one")
    assert len(_observations(tmp_path / "one")) > 300


def _observations(ledger: Path) -> list[tuple]:
    import duckdb

    with duckdb.connect() as con:
        return con.execute(f"SELECT citing_paper, reference_index, observation_id, observation_digest, status, work_id "
                           f"FROM read_parquet('{ledger}/observations/**/*.parquet') ORDER BY ALL").fetchall()
