"""Fuzzy-path benchmark: shared catalog + N synthetic works, glutton_dev resolved end to end.

Prints, per N: catalog (works.parquet) write time, index build time, references/s of the fuzzy
path (parse + retrieve + verify, single process), peak RSS (getrusage maxrss), precision and
recall; then the brute-force baseline (rapidfuzz token_set_ratio of the whole string against
every title, cut-off 90) on a sample, and the speed ratio.
Usage: python benchmarks/bench_fuzzy.py N [--sample 200] [--dir /tmp/citeledger-bench]
       python benchmarks/bench_fuzzy.py --fit   (refit resolvers/verify.WEIGHTS; prints them)
"""
from __future__ import annotations

import argparse
import gzip
import json
import resource
import sys
import time
from itertools import chain
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from citeledger.blocking import ParquetRetriever, build_index  # noqa: E402
from citeledger.evaluate import evaluate  # noqa: E402
from resolvers.fuzzy import FuzzyResolver  # noqa: E402
from synthetic_catalog import SHARED, generate, load_shared_works, write  # noqa: E402

DEV = SHARED / "refs/glutton_dev.jsonl.gz"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def self_contradicting_raws(rows: list[dict]) -> set[str]:
    """Raw strings that appear more than once in the gold with different answers: whichever
    answer a matcher gives, the gold calls it wrong at least once. Left out of the weight fit."""
    answers: dict[str, set] = {}
    for r in rows:
        answers.setdefault(r["raw"], set()).add(((r.get("gold_doi") or "").lower(), r.get("gold_arxiv_id") or ""))
    return {raw for raw, a in answers.items() if len(a) > 1}


def fit_weights(l2: float = 0.1, iterations: int = 40) -> dict:
    """Logistic fit of verify.WEIGHTS on glutton_dev candidate pairs against the shared catalog.

    Pairs: every top-20 candidate of the resolver's own queries (title + locator keys, whole
    string + locator keys) of every usable reference; label 1 when the candidate is the gold work.
    Rows whose raw string carries contradicting gold answers are left out (they teach nothing
    but noise). Newton's method with an L2 penalty. The year weight is not identifiable here
    (glutton works carry no year): keep the prior in verify.py.
    """
    from resolvers.candidates import InMemoryRetriever, index_tokens, locator_tokens
    from resolvers.parsing import parse_reference
    from resolvers.quality import parse_uncertain_reason
    from resolvers.verify import WEIGHTS, RefView, feature_vector, features

    retriever = InMemoryRetriever(load_shared_works())
    rows = [json.loads(line) for line in gzip.open(DEV, "rt")]
    noisy = self_contradicting_raws(rows)
    X, y = [], []
    for row in rows:
        if row["raw"] in noisy:
            continue
        p = parse_reference(row["raw"])
        if parse_uncertain_reason(row["raw"], p, False):
            continue
        view, gold = RefView.of(p), (row["gold_doi"] or "").lower()
        title, loc = index_tokens(p.title), locator_tokens(p.text)
        queries = ([title + loc] if len(title) >= 3 else []) + [[t for t in index_tokens(p.text) if not t.isdigit()] + loc]
        seen = set()
        for cands in retriever.candidates_batch(queries, 20):
            for c in cands:
                if c.row in seen:
                    continue
                seen.add(c.row)
                f = features(view, c.work)
                if not f.notice:
                    X.append(feature_vector(f)); y.append(float(bool(gold) and gold in {d for d in (c.work.doi, *c.work.alt_dois) if d}))
    A = np.hstack([np.ones((len(X), 1)), np.asarray(X)])
    t = np.asarray(y)
    w = np.zeros(A.shape[1])
    fixed = {i + 1: WEIGHTS[k] for i, k in enumerate(list(WEIGHTS)[1:]) if k == "year"}
    for _ in range(iterations):
        for i, v in fixed.items():
            w[i] = v
        p = 1 / (1 + np.exp(-A @ w))
        grad = A.T @ (p - t) + l2 * w
        hess = (A * (p * (1 - p))[:, None]).T @ A + l2 * np.eye(len(w))
        for i in fixed:  # the year weight stays the prior
            grad[i] = 0.0; hess[i, :] = 0.0; hess[:, i] = 0.0; hess[i, i] = 1.0
        w -= np.linalg.solve(hess, grad)
    weights = dict(zip(WEIGHTS, np.round(w, 4).tolist()))
    print(json.dumps({"pairs": len(y), "positives": int(t.sum()), "left_out_noisy_raws": len(noisy),
                      "weights": weights}, indent=1))
    return weights


def main(argv=None) -> dict:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--fit" in argv:
        return fit_weights()
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--dir", default="/tmp/citeledger-bench")
    args = ap.parse_args(argv)
    out = Path(args.dir) / f"n{args.n}"
    out.mkdir(parents=True, exist_ok=True)
    base = load_shared_works()
    t0 = time.perf_counter()
    write(chain(base, generate(args.n, base)), out / "works.parquet")
    t1 = time.perf_counter()
    stats = build_index(out)
    t2 = time.perf_counter()
    retriever = ParquetRetriever(out)
    t3 = time.perf_counter()
    rows = [json.loads(line) for line in gzip.open(DEV, "rt")]
    resolver = FuzzyResolver(retriever)
    verdicts = []
    t4 = time.perf_counter()
    for i in range(0, len(rows), 2000):
        verdicts += resolver.resolve_batch([r["raw"] for r in rows[i:i + 2000]])
    t5 = time.perf_counter()
    m = evaluate(rows, verdicts)
    res = {"n_synthetic": args.n, "works": stats["works"], "write_works_s": round(t1 - t0, 1),
           "index_build_s": round(t2 - t1, 1), "load_s": round(t3 - t2, 1),
           "refs_per_s": round(len(rows) / (t5 - t4), 1), "peak_rss_mb": round(peak_mb()),
           "precision": round(m["precision"], 4), "recall": round(m["recall"], 4), "states": m["states"]}
    # brute-force baseline on a sample (every title, token_set_ratio >= 90)
    if args.sample:
        import pyarrow.parquet as pq
        titles = pq.read_table(out / "works.parquet", columns=["title"]).column(0).to_pylist()
        titles = [t or "" for t in titles]
        rng = np.random.default_rng(0)
        idx = rng.choice(len(rows), size=min(args.sample, len(rows)), replace=False)
        tb = time.perf_counter()
        for i in idx:
            process.extractOne(rows[i]["raw"], titles, scorer=fuzz.token_set_ratio, score_cutoff=90)
        te = time.perf_counter()
        res["baseline_refs_per_s"] = round(len(idx) / (te - tb), 2)
        res["speedup_vs_baseline"] = round(res["refs_per_s"] / res["baseline_refs_per_s"], 1)
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
