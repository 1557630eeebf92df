"""Fuzzy-path benchmark: shared catalog + N synthetic works, glutton_dev resolved end to end.

Per N: writes N synthetic works as a works JSONL (input preparation, timed apart), builds the
catalog with ``CatalogStore.build`` from ``data/sources/*`` plus that file (the real build:
merge, works.parquet and the blocking index; timed, with its peak RSS), then resolves
glutton_dev through the whole chain (``resolvers.resolution.apply_rule_chain``: identifiers, then the
fuzzy matcher) in one process and in ``--procs`` processes (a pool of spawned workers over batches,
each loading the catalog once before the clock starts). Prints references/s for both,
peak RSS, precision and recall; then the brute-force baseline (rapidfuzz token_set_ratio of the
whole string against every title, cut-off 90) on a sample, and the speed ratio.

Usage: python benchmarks/bench_fuzzy.py N [--sample 200] [--procs 2] [--dir /tmp/citeledger-bench]
       python benchmarks/bench_fuzzy.py --fit          (refit resolvers/verify.WEIGHTS; prints them)
       python benchmarks/bench_fuzzy.py --direct N [--dir D]   (works.parquet written directly, no store:
                                                       matcher scaling at sizes the store cannot build here)
       python benchmarks/bench_fuzzy.py --absent       (absent-work test: 10% of gold works removed)
       python benchmarks/bench_fuzzy.py --cora         (generalisation check on Cora, absent-work test)
       python benchmarks/bench_fuzzy.py --calibration [--catalog DIR]
                                                       (reliability table of ``score`` on glutton_dev)
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
from synthetic_catalog import SHARED, generate, load_shared_works, write  # noqa: E402

from citeledger.evaluation.links import evaluate  # noqa: E402

DEV = SHARED / "refs/glutton_dev.jsonl.gz"


def peak_mb() -> float:
    """Peak resident memory of this process in MB: VmHWM (reset by exec, so a spawned worker does
    not report its parent's peak, as ru_maxrss does), else getrusage's maxrss."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
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
    from resolvers.candidates.retrieval import InMemoryRetriever, index_tokens, locator_tokens
    from resolvers.parsing.fields import parse_reference
    from resolvers.parsing.quality import parse_uncertain_reason
    from resolvers.verification.forms import RefView
    from resolvers.verification.verify import WEIGHTS, feature_vector, features

    retriever = InMemoryRetriever(load_shared_works())
    rows = [json.loads(line) for line in gzip.open(DEV, "rt")]
    noisy = self_contradicting_raws(rows)
    X, y = [], []
    groups: list[tuple[int, int]] = []  # candidate rows of each reference
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
        first = len(X)
        for cands in retriever.candidates_batch(queries, 20):
            for c in cands:
                if c.row in seen:
                    continue
                seen.add(c.row)
                f = features(view, c.work)
                if not f.notice:
                    X.append(feature_vector(f)); y.append(float(bool(gold) and gold in {d for d in (c.work.doi, *c.work.alt_dois) if d}))
        if len(X) > first:
            groups.append((first, len(X)))
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
    # Second stage (Platt): the pair model is fitted on every candidate, most of them easy
    # negatives; ``score`` is read on the *top* candidate of a reference. Refit sigma(a*z + b) on
    # the top candidate's logit z of each reference so that score is calibrated where it is used.
    z = A @ w
    tops = [a + int(np.argmax(z[a:b])) for a, b in groups]
    zt, lt = z[tops], t[tops]
    ab = np.array([1.0, 0.0])
    B = np.stack([zt, np.ones_like(zt)], 1)
    for _ in range(50):
        q = 1 / (1 + np.exp(-B @ ab))
        g = B.T @ (q - lt) + 1e-3 * ab
        h = (B * (q * (1 - q))[:, None]).T @ B + 1e-3 * np.eye(2)
        ab -= np.linalg.solve(h, g)
    weights = dict(zip(WEIGHTS, np.round(w, 4).tolist()))
    platt = [round(float(ab[0]), 4), round(float(ab[1]), 4)]
    print(json.dumps({"pairs": len(y), "positives": int(t.sum()), "left_out_noisy_raws": len(noisy),
                      "references": len(groups), "weights": weights, "platt": platt}, indent=1))
    return {"weights": weights, "platt": platt}


SOURCES = sorted((ROOT / "data/sources").glob("*"))
BATCH = 2000


def _resolve_chunk(args):
    """Worker: resolve one batch through the whole chain with the process's cached catalog."""
    catalog_dir, raws = args
    from citeledger.engine.process_cache import get_catalog
    from citeledger.run.batches import resolve_batch_references
    from resolvers.model import Reference

    catalog = get_catalog(catalog_dir)
    out = resolve_batch_references([Reference("bench", n + 1, r) for n, r in enumerate(raws)], catalog)
    return [x.verdict for x in out], peak_mb()


def _warm(catalog_dir: str) -> None:
    """Worker initializer: load the catalog and its blocking index once per process."""
    from citeledger.engine.process_cache import get_catalog, get_fuzzy

    get_fuzzy(get_catalog(catalog_dir))


def resolve_all(catalog_dir: str, raws: list[str], procs: int = 1):
    """Verdicts for ``raws`` in batches; with procs > 1 a pool of spawned workers, each loading the
    catalog once before the clock starts (forking a process that holds DuckDB and Arrow thread
    pools deadlocks, so workers are spawned). Returns (verdicts, peak RSS MB of any process, seconds)."""
    chunks = [(catalog_dir, raws[i:i + BATCH]) for i in range(0, len(raws), BATCH)]
    if procs <= 1:
        t = time.perf_counter()
        results = [_resolve_chunk(c) for c in chunks]
        return [v for vs, _ in results for v in vs], max(m for _, m in results), time.perf_counter() - t
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(procs, mp_context=ctx, initializer=_warm, initargs=(catalog_dir,)) as pool:
        barrier = [pool.submit(time.sleep, 0.5) for _ in range(procs * 2)]  # wait until every worker is warm
        for f in barrier:
            f.result()
        t = time.perf_counter()
        results = list(pool.map(_resolve_chunk, chunks))
        seconds = time.perf_counter() - t
    return [v for vs, _ in results for v in vs], max(m for _, m in results), seconds


def calibration(catalog_dir: str, edges=(0, .1, .3, .5, .7, .8, .85, .9, .95, .98, .99, 1.0001)) -> list[dict]:
    """Reliability of ``score`` on glutton_dev: for every usable reference, the top candidate's
    probability (the link's score, or the best candidate of an unresolved one) against whether
    that candidate is the gold work. Bucketed: mean predicted vs observed."""
    rows = [json.loads(line) for line in gzip.open(DEV, "rt")]
    verdicts, _, _ = resolve_all(catalog_dir, [r["raw"] for r in rows])
    pairs = []
    for r, v in zip(rows, verdicts):
        gold = (r.get("gold_doi") or "").lower()
        if v.status.value == "verified_fuzzy":
            ok = bool(gold) and gold in {d.lower() for d in (v.work.doi, *v.work.alt_dois) if d}
            pairs.append((v.score, ok))
        elif v.status.value == "unresolved":
            ev = v.evidence.get("fuzzy") or {}
            best = ev.get("best")
            if best and best.get("score") is not None:
                pairs.append((best["score"], bool(gold) and best["work_id"] == f"doi:{gold}"))
    table = []
    for lo, hi in zip(edges, edges[1:]):
        sel = [(p, ok) for p, ok in pairs if lo <= p < hi]
        if sel:
            table.append({"bucket": f"[{lo:.2f},{min(hi, 1.0):.2f}{')' if hi <= 1 else ']'}", "n": len(sel),
                          "mean_score": round(sum(p for p, _ in sel) / len(sel), 4),
                          "observed_precision": round(sum(ok for _, ok in sel) / len(sel), 4)})
    for t in table:
        print(json.dumps(t))
    return table


CORA = SHARED / "refs/cora_records.jsonl"


def cora_check() -> dict:
    """Generalisation check on Cora (data never used for tuning): 182 entities, 1,879 citation
    strings. Each entity gets one catalog work made from the hand-tagged fields of its first
    record with a usable title; every other record is resolved with the fuzzy matcher and should
    link to its entity's work (``all``). Then the absent-work test (``half_out``): odd entities are
    left out of the catalog, and their records must not link. Cora splits versions of one paper
    into separate entities (a 1990 technical report and the 1991 journal article with the same
    title and authors): links from a left-out entity to a catalogued entity whose title is the
    same (ratio >= 90) are counted apart as ``to_same_title_version``."""
    import re

    from rapidfuzz import fuzz as rf

    from resolvers.candidates.fuzzy import FuzzyResolver
    from resolvers.candidates.retrieval import InMemoryRetriever
    from resolvers.model import Work
    from resolvers.parsing.fields import _surnames, norm_text
    from resolvers.resolution import fuzzy_verdicts

    rows = [json.loads(line) for line in open(CORA)]
    by_entity: dict[int, list[dict]] = {}
    for r in rows:
        by_entity.setdefault(r["entity_id"], []).append(r)

    def field(r, *names):
        for n in names:
            if r["fields"].get(n):
                return " ".join(r["fields"][n]).strip(" ,.;:()")
        return None

    all_works, rep = {}, {}
    for eid, recs in sorted(by_entity.items()):
        r = next((r for r in recs if len((field(r, "title") or "").split()) >= 3), None)
        if r is None:
            continue
        year = re.search(r"(19|20)\d\d", field(r, "date") or "")
        pages = field(r, "pages") or ""
        all_works[eid] = Work(
            work_id=f"cora:{eid}", title=field(r, "title"), authors=tuple(_surnames(field(r, "author") or "")),
            year=int(year.group(0)) if year else None, venue=field(r, "journal", "booktitle"),
            volume=(field(r, "volume") or "").strip(" ,.") or None,
            first_page=(re.split(r"[-\u2013]", pages)[0].strip(" ,.p") or None) if pages else None)
        rep[eid] = r["id"]
    out = {}
    for mode in ("all", "half_out"):
        cat = {e: w for e, w in all_works.items() if mode == "all" or e % 2 == 0}
        todo = [r for r in rows if rep.get(r["entity_id"]) != r["id"]]
        verdicts = fuzzy_verdicts(FuzzyResolver(InMemoryRetriever(list(cat.values()))), [r["raw"] for r in todo])
        links = correct = positives = absent = absent_linked = same_title = 0
        for r, v in zip(todo, verdicts):
            e = r["entity_id"]
            in_cat = e in cat
            positives += in_cat
            absent += not in_cat
            if v.status.is_link:
                links += 1
                if in_cat and v.work.work_id == f"cora:{e}":
                    correct += 1
                elif not in_cat:
                    absent_linked += 1
                    own = all_works.get(e)
                    if own and rf.ratio(norm_text(own.title), norm_text(v.work.title or "")) >= 90:
                        same_title += 1
        out[mode] = {"catalog_works": len(cat), "records_resolved": len(todo), "links": links, "correct": correct,
                     "precision": round(correct / links, 4) if links else None,
                     "recall": round(correct / positives, 4) if positives else None}
        if mode == "half_out":
            out[mode].update(absent_entity_records=absent, absent_entity_records_linked=absent_linked,
                             to_same_title_version=same_title,
                             precision_versions_as_same_work=round((correct + same_title) / links, 4) if links else None)
    print(json.dumps(out))
    return out


def direct(n: int, root: str, batch: int = BATCH) -> dict:
    """Scale run without the catalog store: the shared works plus N synthetic ones written straight
    to ``works.parquet``, the blocking index built on it, and glutton_dev resolved on the fuzzy path
    alone (``FuzzyResolver``, one process). For catalogs whose store build does not fit in memory
    here (10M): it measures how the *matcher* scales, not the store."""
    from citeledger.index.blocking import ParquetRetriever, build_index
    from resolvers.candidates.fuzzy import FuzzyResolver
    from resolvers.resolution import fuzzy_verdicts

    out = Path(root) / f"direct{n}"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if not (out / "works.parquet").exists():
        write(chain(load_shared_works(), generate(n, load_shared_works())), out / "works.parquet")
    t1 = time.perf_counter()
    stats = build_index(out)
    t2 = time.perf_counter()
    retriever = ParquetRetriever(out)
    t3 = time.perf_counter()
    rows = [json.loads(line) for line in gzip.open(DEV, "rt")]
    fuzzy = FuzzyResolver(retriever)
    verdicts = []
    t4 = time.perf_counter()
    from citeledger.run.batches import gc_paused

    for i in range(0, len(rows), batch):
        with gc_paused():  # as the pipeline resolves a batch
            verdicts += fuzzy_verdicts(fuzzy, [r["raw"] for r in rows[i:i + batch]])
    t5 = time.perf_counter()
    m = evaluate(rows, verdicts)
    res = {"mode": "direct (no store; fuzzy path only)", "n_synthetic": n, "works": stats["works"],
           "write_works_s": round(t1 - t0, 1), "index_build_s": round(t2 - t1, 1), "load_s": round(t3 - t2, 1),
           "refs_per_s_1proc": round(len(rows) / (t5 - t4), 1), "peak_rss_mb": round(peak_mb()),
           "precision": round(m["precision"], 4), "recall": round(m["recall"], 4)}
    print(json.dumps(res))
    return res


def absent_check(share: int = 10) -> dict:
    """Absent-work test on glutton_dev: every ``share``-th gold work (by sorted DOI) is removed from
    the shared catalog and the references citing it are resolved (fuzzy path): each link is a link
    to a work the string does not cite, unless the catalog holds another record with the same title
    (a duplicate of the removed work), which is counted apart."""
    from rapidfuzz import fuzz as rf

    from resolvers.candidates.fuzzy import FuzzyResolver
    from resolvers.candidates.retrieval import InMemoryRetriever
    from resolvers.parsing.fields import norm_text
    from resolvers.resolution import fuzzy_verdicts

    rows = [json.loads(line) for line in gzip.open(DEV, "rt")]
    works = load_shared_works()
    golds = sorted({(r["gold_doi"] or "").lower() for r in rows if r.get("gold_doi")})
    removed = set(golds[::share])
    removed_titles = {w.doi: w.title for w in works if w.doi in removed}
    kept = [w for w in works if not ({w.doi, *w.alt_dois} & removed)]
    todo = [r for r in rows if (r.get("gold_doi") or "").lower() in removed]
    verdicts = fuzzy_verdicts(FuzzyResolver(InMemoryRetriever(kept)), [r["raw"] for r in todo])
    linked = dup = 0
    examples = []
    for r, v in zip(todo, verdicts):
        if v.status.is_link:
            t = removed_titles.get(r["gold_doi"].lower()) or ""
            if rf.ratio(norm_text(t), norm_text(v.work.title or "")) >= 95:
                dup += 1
            else:
                linked += 1
                examples.append({"raw": r["raw"][:160], "linked": v.work.work_id, "title": v.work.title,
                                 "score": v.score})
    res = {"removed_works": len(removed), "references_to_removed": len(todo),
           "linked_to_same_title_record": dup, "linked_to_another_work": linked, "examples": examples[:10]}
    print(json.dumps(res, ensure_ascii=False))
    return res


def main(argv=None) -> dict:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--absent" in argv:
        return absent_check()
    if "--direct" in argv:
        i = argv.index("--direct")
        return direct(int(argv[i + 1]), argv[argv.index("--dir") + 1] if "--dir" in argv else "/tmp/citeledger-bench")
    if "--fit" in argv:
        return fit_weights()
    if "--cora" in argv:
        return cora_check()
    if "--calibration" in argv:
        i = argv.index("--catalog") if "--catalog" in argv else -1
        return calibration(argv[i + 1] if i >= 0 else "data/catalog")
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/citeledger-bench")
    args = ap.parse_args(argv)
    import shutil

    from citeledger.catalog.catalog_store import CatalogStore
    from citeledger.engine.process_cache import get_catalog, get_fuzzy

    out = Path(args.dir) / f"n{args.n}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    files = list(SOURCES)
    t0 = time.perf_counter()
    if args.n:
        syn = out / "synthetic.jsonl"
        write(generate(args.n, load_shared_works()), syn)
        files.append(syn)
    t1 = time.perf_counter()
    catalog_dir = out / "catalog"
    rss0 = peak_mb()
    CatalogStore(catalog_dir).build(files)
    t2 = time.perf_counter()
    build_peak = peak_mb()
    catalog = get_catalog(catalog_dir)
    get_fuzzy(catalog)  # loads the blocking index once
    t3 = time.perf_counter()
    rows = [json.loads(line) for line in gzip.open(DEV, "rt")]
    raws = [r["raw"] for r in rows]
    verdicts, _, seconds = resolve_all(str(catalog_dir), raws, 1)
    m = evaluate(rows, verdicts)
    res = {"n_synthetic": args.n, "works": catalog.count() if hasattr(catalog, "count") else None,
           "synthetic_jsonl_s": round(t1 - t0, 1), "catalog_build_s": round(t2 - t1, 1),
           "build_peak_rss_mb": round(build_peak) if build_peak > rss0 else None, "load_s": round(t3 - t2, 1),
           "refs_per_s_1proc": round(len(rows) / seconds, 1), "peak_rss_mb_1proc": round(peak_mb()),
           "precision": round(m["precision"], 4), "recall": round(m["recall"], 4), "states": m["states"]}
    if args.procs > 1:
        verdicts2, child_peak, seconds2 = resolve_all(str(catalog_dir), raws, args.procs)
        assert [(v.status, v.work.work_id if v.work else None) for v in verdicts2] == \
               [(v.status, v.work.work_id if v.work else None) for v in verdicts], "process pool changed verdicts"
        res[f"refs_per_s_{args.procs}proc"] = round(len(rows) / seconds2, 1)
        res["peak_rss_mb_per_worker"] = round(child_peak)
    # brute-force baseline on a sample (every title, token_set_ratio >= 90)
    if args.sample:
        import pyarrow.parquet as pq
        titles = pq.read_table(catalog.generation_dir / "works.parquet", columns=["title"]).column(0).to_pylist()
        titles = [t or "" for t in titles]
        res["works"] = len(titles)
        rng = np.random.default_rng(0)
        idx = rng.choice(len(rows), size=min(args.sample, len(rows)), replace=False)
        tb = time.perf_counter()
        for i in idx:
            process.extractOne(rows[i]["raw"], titles, scorer=fuzz.token_set_ratio, score_cutoff=90)
        te = time.perf_counter()
        res["baseline_refs_per_s"] = round(len(idx) / (te - tb), 2)
        res["speedup_vs_baseline_1proc"] = round(res["refs_per_s_1proc"] / res["baseline_refs_per_s"], 1)
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
