"""Candidate retrieval over a catalog split by work into shards: the same candidates with the same
scores, in the same order, as ``candidates.PostingsIndex`` over all the works at once.

Why they are the same (docs/operator/scale.md has the argument at length):
- Terms are chosen per query with the *global* statistics (every shard's document frequencies
  summed by term hash, the idf computed from those and the total number of works), by one planner
  for all shards, so every shard looks up the same terms in the same order.
- A work's generation score is the summed idf of the chosen terms its title holds, and its
  re-scoring adds the idf of the query's other terms it holds: both depend on the work's own
  postings only, which live in its shard. Each shard sums them in the same order as the single
  index (absent terms add nothing), so the floats are bit for bit the same.
- Each shard returns its best ``RESCORE_POOL`` (or ``k``) works by (generation score, global row),
  re-scored. The single index's pool is the best ``RESCORE_POOL`` of all works by that order, so
  it lies within the union of the shards' pools; the merge takes it from there and orders it by
  the re-scored score, ties by global row, as the single index does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from resolvers.candidates.retrieval import RESCORE_POOL, PostingsIndex, TermIds, term_idf


@dataclass
class Shard:
    """One shard's postings over its own rows. ``index.df`` is the shard's own postings counts (the
    lengths read), ``index.idf`` the *global* idf of each of its terms; ``global_rows`` maps each
    local row to its row in the unsharded works table (ascending: a shard keeps the global order)."""

    index: PostingsIndex
    global_rows: np.ndarray


def global_terms(hashes: Sequence[np.ndarray], dfs: Sequence[np.ndarray], n_works: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The global term table from the shards' own: term hashes ascending, df summed over the
    shards, and the idf of the unsharded index (same formula, same total)."""
    if not hashes:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    every = np.concatenate([np.asarray(h, np.int64) for h in hashes])
    unique, inverse = np.unique(every, return_inverse=True)
    df = np.bincount(inverse, weights=np.concatenate([np.asarray(d, np.float64) for d in dfs]),
                     minlength=len(unique)).astype(np.int64)
    return unique, df, term_idf(df, n_works)


def local_ids(terms: TermIds, hashes: np.ndarray) -> np.ndarray:
    """Each global term's id in a shard's vocabulary (its position in the shard's sorted hashes),
    -1 where the shard has no work holding it."""
    if not len(terms.hashes) or not len(hashes):
        return np.full(len(hashes), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(terms.hashes, hashes), len(terms.hashes) - 1)
    ids = pos if terms._order is None else terms._order[pos]
    return np.where(terms.hashes[pos] == hashes, ids, -1)


def global_idf_of(terms: TermIds, hashes: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """A shard's idf array (by its own term ids) holding the global idf of each of its terms."""
    own = np.asarray(idf)[np.searchsorted(hashes, terms.hashes)].astype(np.float32)
    if terms._order is None:
        return own
    out = np.empty_like(own)
    out[terms._order] = own
    return out


def term_table(index: PostingsIndex) -> tuple[np.ndarray, np.ndarray]:
    """An index's (term hashes ascending, df of each): what ``global_terms`` sums over shards."""
    order = index.terms._order
    return index.terms.hashes, np.asarray(index.df if order is None else index.df[order])


class ShardedIndex:
    """``PostingsIndex.query_rows`` over shards: answers (shard, local row, global row, score)."""

    def __init__(self, hashes: np.ndarray, df: np.ndarray, idf: np.ndarray, n_works: int,
                 shards: Sequence[Shard], **options):
        """``hashes``/``df``/``idf``: the global term table (``global_terms``); ``options`` as for
        ``PostingsIndex`` (max_terms, postings_budget), applied to the planner."""
        self.planner = PostingsIndex(TermIds.from_sorted(hashes), np.zeros(1, np.int64), np.zeros(0, np.int32),
                                     n_works, df=df, idf=idf, **options)
        self.shards = list(shards)

    def document_frequency(self, token: str) -> int:
        return self.planner.document_frequency(token)

    def query_rows(self, queries: Sequence[Sequence[str]], k: int) -> list[list[tuple[int, int, int, float]]]:
        """For each query, up to k (shard, local row, global row, score), best first, ties by
        global row: what ``PostingsIndex.query_rows`` answers over all the works."""
        q_ids, t_ids, rest = self.planner._plan_queries(queries)
        pools: list[list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in queries]
        if t_ids:
            hashes = self.planner.terms.hashes
            t_hashes = np.asarray(hashes)[np.asarray(t_ids, np.int64)]
            rest_hashes = [np.asarray(hashes)[np.asarray(r, np.int64)] for r in rest] + [np.zeros(0, np.int64)]
            for no, shard in enumerate(self.shards):
                self._shard_pools(no, shard, np.asarray(q_ids, np.int64), t_hashes, rest_hashes, k, pools)
        return [_merge(pool, bool(rest[qi]), k) for qi, pool in enumerate(pools)]

    @staticmethod
    def _shard_pools(no: int, shard: Shard, q_ids: np.ndarray, t_hashes: np.ndarray,
                     rest_hashes: list[np.ndarray], k: int, pools: list[list]) -> None:
        """Append to ``pools[q]`` this shard's best works for query q: (shard, local rows, global
        rows, generation scores, re-scored scores)."""
        lt = local_ids(shard.index.terms, t_hashes)
        keep = lt >= 0
        generated = shard.index._generate(q_ids[keep].tolist(), lt[keep].tolist()) if keep.any() else None
        if generated is None:
            return
        uq, ud, scores = generated
        queries = np.arange(len(pools))
        first, last = np.searchsorted(uq, queries, side="left"), np.searchsorted(uq, queries, side="right")
        rest_n = np.array([len(r) for r in rest_hashes[:len(pools)]], np.int64)
        lengths = np.minimum(last, first + np.where(rest_n > 0, RESCORE_POOL, k)) - first
        at = np.concatenate(([0], np.cumsum(lengths)))
        owner = np.repeat(queries, lengths)
        sel = np.repeat(first, lengths) + np.arange(at[-1]) - np.repeat(at[:-1], lengths)
        d, gen = ud[sel], scores[sel]
        rest = np.full((len(pools), int(rest_n.max(initial=0))), -1, np.int64)
        rest[np.repeat(queries, rest_n), np.arange(rest_n.sum()) - np.repeat(np.cumsum(rest_n) - rest_n, rest_n)] = \
            local_ids(shard.index.terms, np.concatenate(rest_hashes))
        final = _rescored(shard.index, d, gen, rest[owner])
        rows = shard.global_rows[d]
        for qi in np.flatnonzero(lengths > 0).tolist():
            a, b = at[qi], at[qi + 1]
            pools[qi].append((no, d[a:b], rows[a:b], gen[a:b], final[a:b]))


def _rescored(index: PostingsIndex, d: np.ndarray, sc: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """``PostingsIndex._rescore``'s sums for many queries at once, without its cut (the merge
    cuts): ``rest[i]`` holds the shard's ids of row ``d[i]``'s query's other terms (-1: no work
    of this shard holds it, where the single index adds 0), added in their order."""
    sc = sc.copy()
    for j in range(rest.shape[1]):
        m = np.flatnonzero(rest[:, j] >= 0)
        if len(m):
            t = rest[m, j]
            sc[m] += index.idf[t] * _holds(index, t, d[m])
    return sc


def _holds(index: PostingsIndex, terms: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether each term's sorted postings hold the row beside it: one binary search per pair,
    all pairs stepped together (numpy), instead of a ``searchsorted`` call per query and term."""
    postings = index.postings
    lo, end = index.offsets[terms].copy(), index.offsets[terms + 1]
    hi = end.copy()
    rows = rows.astype(postings.dtype)
    active = np.flatnonzero(lo < hi)
    while len(active):
        mid = (lo[active] + hi[active]) // 2
        right = postings[mid] < rows[active]
        lo[active[right]] = mid[right] + 1
        hi[active[~right]] = mid[~right]
        active = active[lo[active] < hi[active]]
    return (lo < end) & (postings[np.minimum(lo, len(postings) - 1)] == rows)


def _merge(pool: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]], has_rest: bool, k: int
           ) -> list[tuple[int, int, int, float]]:
    """One query's answer from its shards' pools, cut and ordered as the single index does."""
    if not pool:
        return []
    shard = np.concatenate([np.full(len(d), no, np.int64) for no, d, _, _, _ in pool])
    local, rows, gen, final = (np.concatenate([p[i] for p in pool]) for i in (1, 2, 3, 4))
    order = np.lexsort((rows, -gen))[: RESCORE_POOL if has_rest else k]
    score = gen
    if has_rest and len(order) > 1:
        order = order[np.lexsort((rows[order], -final[order]))][:k]
        score = final
    return [(int(shard[o]), int(local[o]), int(rows[o]), float(score[o])) for o in order.tolist()]
