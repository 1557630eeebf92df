"""The index build's fast paths (``index_terms``, ``text_arrow``) give exactly what the
straightforward versions gave: written out here as they were, run on the embedded catalog."""
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.index import blocking, venue_index
from citeledger.index import terms as index_terms
from citeledger.storage import external_sort as hash_runs
from citeledger.storage.external_sort import HashRuns
from resolvers.candidates.retrieval import STOPWORDS, term_hashes
from resolvers.parsing import text
from resolvers.verification import verify

ODD = ["", " ", "Ærø ß café", "A--b  (2001)", "ﬁ ligature", "x", "-a-", "Ω-κ 12 ½", "Über  Straße", "tab\there"]


def _works(default_catalog) -> pa.Table:
    table = pq.read_table(CatalogStore(default_catalog).current() / blocking.WORKS_FILE)
    odd = pa.table({"title": ODD, "volume": ["1", "01", None, "a12", "x", "", "3", "4", "5", "6"],
                    "first_page": ["12", "0012", "3", None, "e5", "7", "", "8", "9", "10"],
                    "venue": [None, "J. Phys.", "Ærø", "", "x", "J. Phys.", "y", "z", None, "ß"],
                    "authors": [[], None, ["Curie, Marie"], ["Ileana Streinu"], ["A. B. Jr."], [""], ["Ø"],
                                ["x"], ["Y Z"], ["Curie, Marie"]]})
    return pa.concat_tables([table.select(odd.column_names).cast(odd.schema), odd])


def _old_terms(batch: pa.RecordBatch, row0: int) -> tuple[np.ndarray, np.ndarray]:
    """The (hash, row) pairs as first written: tokens of the raw titles, lexsort."""
    lists = text.tokens_arrow(batch.column(0))
    flat = pc.list_flatten(lists)
    parent = pc.list_parent_indices(lists).to_numpy().astype(np.int64) + row0
    keep = pc.and_(pc.greater_equal(pc.utf8_length(flat), text.INDEX_TOKEN_MIN_CHARS),
                   pc.invert(pc.is_in(flat, value_set=pa.array(sorted(STOPWORDS)))))
    flat, parent = pc.filter(flat, keep), parent[keep.to_numpy(zero_copy_only=False)]
    loc = index_terms.locator_keys(batch.column(1), batch.column(2))
    valid = pc.is_valid(loc)
    flat = pa.concat_arrays([flat, pc.filter(loc, valid)])
    parent = np.concatenate([parent, np.flatnonzero(valid.to_numpy(zero_copy_only=False)) + row0])
    hashes = term_hashes(flat)
    order = np.lexsort((parent, hashes))
    hashes, parent = hashes[order], parent[order]
    keep_np = np.ones(len(hashes), dtype=bool)
    keep_np[1:] = (hashes[1:] != hashes[:-1]) | (parent[1:] != parent[:-1])
    return hashes[keep_np], parent[keep_np]


def test_index_terms_are_those_of_the_first_version(default_catalog):
    works = _works(default_catalog)
    for row0, batch in ((0, works.to_batches(max_chunksize=len(works))[0]), (5000, works.slice(100, 3000).to_batches()[0])):
        norm = text.norm_arrow(text.fold_arrow(batch.column(0)))
        new, old = index_terms.batch_terms(batch, norm, True, row0), _old_terms(batch, row0)
        assert len(new[0]) > 1000
        assert np.array_equal(new[0], old[0]) and np.array_equal(new[1], old[1])


def test_forms_of_distinct_values_and_ascii_folding_are_those_of_the_first_version(default_catalog):
    works = _works(default_catalog)
    firsts = works.column("authors").to_pylist()
    surnames = [verify.surname(a[0]) if a else "" for a in firsts]
    assert index_terms.first_surnames(works.column("authors").combine_chunks()).to_pylist() == surnames
    cols = verify.form_columns(works.column("title"), works.column("venue"), surnames)

    def fold(values):  # the general kernels alone
        return text._fold_arrow_general(pc.fill_null(values, ""))

    assert cols["f_venue"].to_pylist() == text.norm_arrow(fold(works.column("venue"))).to_pylist()
    assert cols["f_surname"].to_pylist() == pc.replace_substring_regex(
        fold(pa.array(surnames)), r"[^a-z0-9]+", "").to_pylist()
    assert cols["f_soft"].to_pylist() == fold(works.column("title")).to_pylist()
    assert text.fold_arrow(pa.array(ODD + [None])).to_pylist() == [text.fold(t) for t in ODD] + [""]


def test_hash_runs_give_each_part_sorted_by_hash_with_ties_in_the_order_added(tmp_path):
    """The external sort of the index build: chunks added in row order, each sorted by (hash,
    row) or not at all, come back part by part as the whole sorted by hash then row; text and
    integer columns travel with their hash."""
    rng = np.random.default_rng(7)
    runs = HashRuns(tmp_path, "t", 32, ints={"row": np.int64}, texts=("key",))
    added = []
    for chunk in range(6):
        h = rng.integers(-2**63, 2**63 - 1, 500, dtype=np.int64)
        h[:200] = rng.choice(h[200:260], 200)  # repeated hashes, within and across chunks
        h[:40] = rng.integers(-3, 3, 40)  # hashes about zero: the parts either side of the sign
        rows = np.arange(chunk * 1000, chunk * 1000 + 500)
        keys = [f"k{r}-é" if r % 7 else "" for r in rows]
        order = np.lexsort((rows, h)) if chunk % 2 else np.arange(500)  # sorted chunks and raw ones
        runs.add(h[order], {"row": rows[order]}, {"key": pa.array([keys[i] for i in order])})
        added += [(int(h[i]), int(rows[i]), keys[i]) for i in order]
    got = [(int(x), int(r), k) for h, ints, texts in runs.parts_sorted()
           for x, r, k in zip(h, ints["row"], texts["key"].to_pylist())]
    assert got == sorted(added, key=lambda t: (t[0], t[1]))
    assert runs.rows == 3000 and not any(tmp_path.iterdir())  # each part's files go once it is read


def test_a_part_holds_every_row_of_a_hash_and_parts_ascend(tmp_path):
    runs = HashRuns(tmp_path, "t", 16, ints={"row": np.int32})
    h = np.array([2**62, -2**62, 5, -5, 5, 2**63 - 1, -2**63], np.int64)
    runs.add(h, {"row": np.arange(7)})
    parts = [list(h) for h, _, _ in runs.parts_sorted()]
    assert [x for part in parts for x in part] == sorted(h.tolist())
    assert [5, 5] in [[x for x in part if x == 5] for part in parts]
    assert len(parts) == 6  # by the top four bits: -2**63, -2**62, -5, (5, 5), 2**62, 2**63-1 in parts 0, 4, 7, 8, 12, 15
    assert hash_runs.parts_for(0) == 16 and hash_runs.parts_for(16 * hash_runs.PART_ROWS + 1) == 32


def test_part_bounds_cut_sorted_hashes_into_the_parts_hash_runs_makes(tmp_path):
    """Sorted hashes cut at ``part_bounds`` fall into the parts ``HashRuns`` puts them in (the
    extremes and each part's first and last hash included)."""
    rng = np.random.default_rng(3)
    for parts in (2, 16, 64):
        shift = 64 - (parts.bit_length() - 1)
        edges = [(p - parts // 2) << shift for p in range(parts)]
        h = np.unique(np.concatenate([rng.integers(-2**63, 2**63 - 1, 5000, dtype=np.int64, endpoint=True),
                                      np.array(edges + [e - 1 for e in edges[1:]] + [2**63 - 1], np.int64)]))
        runs = HashRuns(tmp_path / f"p{parts}", "t", parts)
        runs.add(h)
        cuts = np.concatenate([[0], np.searchsorted(h, hash_runs.part_bounds(parts)), [len(h)]])
        by_cut = [h[cuts[p]:cuts[p + 1]].tolist() for p in range(parts)]
        assert [part.tolist() for part, _, _ in runs.parts_sorted()] == [c for c in by_cut if c]


def test_an_npy_stream_writes_the_bytes_of_np_save(tmp_path):
    for dtype in (np.int64, np.int32, np.float32):
        values = np.arange(1001, dtype=dtype) * 3
        np.save(tmp_path / "whole.npy", values)
        with hash_runs.npy_stream(tmp_path / "pieces.npy", dtype, 1001) as out:
            for piece in np.array_split(values, 4):
                out.write(piece)
        assert (tmp_path / "pieces.npy").read_bytes() == (tmp_path / "whole.npy").read_bytes()
    with pytest.raises(ValueError, match="announced"):
        with hash_runs.npy_stream(tmp_path / "short.npy", np.int64, 5) as out:
            out.write(np.arange(4))
    assert not (tmp_path / "short.npy").exists()


def test_an_index_written_in_many_parts_and_batches_answers_as_one_written_whole(default_catalog, tmp_path,
                                                                               monkeypatch):
    """At 30M works the build sorts in hundreds of parts and writes the identifier keys and the
    venue locators in several record batches (of whole parts); the readers search and take batch
    by batch. Forced here on the embedded catalog: the same arrays byte for byte, the same
    tables, and every lookup the same answer as from the index written in one piece."""
    whole = CatalogStore(default_catalog).current()
    parts = tmp_path / "gen"
    parts.mkdir()
    for name in ("works.parquet", "identifiers.parquet"):
        (parts / name).write_bytes((whole / name).read_bytes())
    monkeypatch.setattr(hash_runs, "PART_ROWS", 1000)
    monkeypatch.setattr(blocking, "ID_BATCH_KEYS", 700)
    monkeypatch.setattr(venue_index, "LOCATOR_BATCH_ROWS", 400)
    blocking.build_index(parts)
    for name in sorted(p.name for p in whole.glob("*.npy") if not p.name.startswith("notice_")):
        assert (parts / name).read_bytes() == (whole / name).read_bytes(), name
    for name in (blocking.ID_KEYS, venue_index.LOCATORS_FILE):
        one, many = blocking.map_ipc(whole / name), blocking.map_ipc(parts / name)
        assert many.column(0).num_chunks > 5 and one.column(0).num_chunks == 1
        assert many.equals(one)

    keys = blocking.map_ipc(whole / blocking.ID_KEYS).column("key").to_pylist()
    by_scheme: dict[str, list[str]] = {}
    for key in keys:
        scheme, value = key.split("\t", 1)
        by_scheme.setdefault(scheme, []).append(value)
    ids_whole, ids_parts = blocking.IdentifierIndex(whole), blocking.IdentifierIndex(parts)
    for scheme, values in by_scheme.items():
        asked = values[::-1] + ["10.9999/absent", values[0]]
        assert ids_parts.lookup(scheme, asked) == ids_whole.lookup(scheme, asked)
        assert len(ids_whole.lookup(scheme, asked)) == len(set(values))

    loc_whole = venue_index.load(whole, blocking.map_ipc, True)
    loc_parts = venue_index.load(parts, blocking.map_ipc, True)
    entries = blocking.map_ipc(whole / venue_index.LOCATORS_FILE).to_pylist()
    wanted = [(e["venue_key"], e["volume"], e["first_page"]) for e in entries[::-3]] + [("nojournal", "1", "1")]
    assert loc_parts.rows(wanted) == loc_whole.rows(wanted) and len(loc_whole.rows(wanted)) > 1000
    pairs = [(e["volume"], e["first_page"]) for e in entries[::5]] + [("99999", "1")]
    assert loc_parts.rows_at_volume_page(pairs) == loc_whole.rows_at_volume_page(pairs)
