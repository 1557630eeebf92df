"""The index build's fast paths (``index_terms``, ``text_arrow``) give exactly what the
straightforward versions gave: written out here as they were, run on the embedded catalog."""
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from citeledger import blocking, index_terms
from citeledger.catalog import CatalogStore
from resolvers import text, verify
from resolvers.candidates import STOPWORDS, term_hashes

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


def test_runs_merged_by_a_stable_sort_are_the_sorted_pairs():
    rng = np.random.default_rng(7)
    runs = []
    for chunk in range(5):
        h = rng.integers(-50, 50, 400)
        r = rng.integers(chunk * 1000, chunk * 1000 + 1000, 400)
        order = np.lexsort((r, h))
        pairs = np.unique(np.stack([h[order], r[order]]), axis=1)
        runs.append(pairs[:, np.lexsort((pairs[1], pairs[0]))])
    h, r = blocking._merged_runs(np.concatenate(runs, axis=1))
    both = np.concatenate(runs, axis=1)
    order = np.lexsort((both[1], both[0]))
    assert np.array_equal(h, both[0][order]) and np.array_equal(r, both[1][order])
