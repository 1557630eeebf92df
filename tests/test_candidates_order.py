"""The postings index's generated candidates come in the order the retrieval defines: by query,
then summed idf (best first), then row; the batch's sort must keep it exactly (ties included)."""
import numpy as np

from resolvers.candidates.retrieval import PostingsIndex


def test_generated_pairs_are_ordered_by_query_score_and_row():
    rng = np.random.default_rng(7)
    docs = [[f"t{int(x)}" for x in rng.integers(0, 12, size=rng.integers(1, 6))] for _ in range(300)]
    index = PostingsIndex.from_token_lists(docs)
    n_terms = len(index.offsets) - 1
    q_ids = [q for q in range(40) for _ in range(3)]
    t_ids = [int(t) for t in rng.integers(0, n_terms, size=len(q_ids))]
    uq, ud, scores = index._generate(q_ids, t_ids)
    # the definition, pair by pair
    pairs: dict[tuple[int, int], float] = {}
    for q, t in zip(q_ids, t_ids):
        for d in index.postings[index.offsets[t]:index.offsets[t + 1]].tolist():
            pairs[(q, d)] = pairs.get((q, d), 0.0) + float(index.idf[t])
    want = sorted(pairs, key=lambda qd: (qd[0], -pairs[qd], qd[1]))
    assert list(zip(uq.tolist(), ud.tolist())) == want
    assert np.allclose(scores, [pairs[qd] for qd in want])
    assert len(set(np.round(scores, 6).tolist())) < len(scores)  # ties were there to keep in row order
