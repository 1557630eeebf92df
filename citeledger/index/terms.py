"""The terms of the catalog's fuzzy index, chunk by chunk (``blocking.build_index``): title words
and ``vol:page`` locator keys as sorted, distinct (term hash, row) pairs, and the first authors'
surnames of the stored forms.

Why a module of its own: these are the build's hot loops at 10M works, written to work on each
distinct value once (a chunk's titles hold ten times as many words as distinct terms; venues
and surnames repeat); the index files they give are byte for byte those of the straightforward
versions (tests/test_catalog_index.py builds both).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from resolvers.candidates.retrieval import STOPWORDS, term_hashes
from resolvers.parsing.text import INDEX_TOKEN_MIN_CHARS, norm_tokens_arrow
from resolvers.verification.verify import surname


def locator_keys(volume: pa.Array, first_page: pa.Array) -> pa.Array:
    """Arrow version of ``resolvers.candidates.retrieval.locator_token``: ``vol:page`` or null."""
    def norm(a):
        a = pc.utf8_lower(pc.utf8_trim_whitespace(pc.cast(a, pa.string())))
        ok = pc.match_substring_regex(a, r"^[a-z]?\d{1,6}$")
        a = pc.replace_substring_regex(a, r"^0+", "")
        a = pc.if_else(pc.equal(a, ""), "0", a)
        return pc.if_else(pc.fill_null(ok, False), a, pa.scalar(None, pa.string()))
    return pc.binary_join_element_wise(norm(volume), norm(first_page), ":")


def batch_terms(batch: pa.RecordBatch, norm: pa.Array, locators: bool, row0: int) -> tuple[np.ndarray, np.ndarray]:
    """The (term hash, row) pairs of a chunk of works, sorted, without repeats: the title tokens
    (``norm``: the titles' ``f_norm`` form, already made for the stored forms), plus ``vol:page``
    locator keys when the works have those columns (they share the postings)."""
    lists = norm_tokens_arrow(norm)
    flat = pc.list_flatten(lists)
    parent = pc.list_parent_indices(lists).to_numpy().astype(np.int64) + row0
    if locators:
        loc = locator_keys(batch.column(1), batch.column(2))
        valid = pc.is_valid(loc)
        flat = pa.concat_arrays([flat.combine_chunks() if isinstance(flat, pa.ChunkedArray) else flat,
                                 pc.filter(loc, valid).combine_chunks() if isinstance(loc, pa.ChunkedArray)
                                 else pc.filter(loc, valid)])
        parent = np.concatenate([parent, np.flatnonzero(valid.to_numpy(zero_copy_only=False)) + row0])
    return term_pairs(flat, parent)


_STOP = pa.array(sorted(STOPWORDS))


def term_pairs(terms: pa.Array, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hash, row) of the index terms among ``terms`` (two characters or more, no stopword),
    sorted by hash then row, without repeats. Each distinct term is hashed and tested once (a
    chunk's terms are a tenth as many words as its titles hold), and the pairs sorted as one
    int64 key: the term's rank in hash order (equal hashes one rank), then the row."""
    encoded = pc.dictionary_encode(terms)
    words, at = encoded.dictionary, encoded.indices.to_numpy(zero_copy_only=False)
    wanted = pc.and_(pc.greater_equal(pc.utf8_length(words), INDEX_TOKEN_MIN_CHARS),
                     pc.invert(pc.is_in(words, value_set=_STOP))).to_numpy(zero_copy_only=False)
    hashes, rank = np.unique(term_hashes(words), return_inverse=True)  # (few: the distinct terms)
    keep = wanted[at]
    key = np.sort((rank.astype(np.int64)[at[keep]] << 32) | rows[keep])
    key = key[np.concatenate(([True], key[1:] != key[:-1]))] if len(key) else key
    return hashes[key >> 32], key & 0xFFFFFFFF


def first_surnames(authors: pa.Array) -> pa.Array:
    """``verify.surname`` of each work's first author ("" for none), once per distinct name."""
    has = pc.fill_null(pc.greater(pc.list_value_length(authors), 0), False)
    out = pa.array([""] * len(authors), pa.string())
    if not pc.any(has).as_py():
        return out
    encoded = pc.dictionary_encode(pc.list_element(pc.filter(authors, has), 0))
    names = pa.array([surname(a) for a in encoded.dictionary.to_pylist()], pa.string())
    return pc.replace_with_mask(out, has, pc.take(names, encoded.indices))
