"""Link precision, recall and F1 of verdicts against gold identifiers.

A gold row carries ``gold_doi`` and/or ``gold_arxiv_id``; both null means the reference must not
be linked. A link is correct when the linked work's DOI (primary or alternate, lower-case) or
arXiv id equals the gold one. A link where the gold is null is wrong only when the linked work is
in the gold's universe (the gold names it as the answer of some other row, so the gold knows it
and still said null); a link to a work the gold never mentions cannot be judged and is counted
apart as ``unjudged`` (the gold files leave many cited works out of their universe).
precision = correct links / judged links; recall = correct links / rows with a gold identifier.
``precision_all_links`` (correct / every link) is the stricter rule, kept for comparison.

``citeledger eval GOLD... --catalog DIR [--worst N]`` (or ``python -m citeledger.evaluation.links``) runs the
whole resolution chain (identifiers, then the fuzzy matcher) on every row, as ``resolve`` does,
without writing a ledger.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from citeledger.storage.places import CatalogDir
from resolvers.identifiers.extract import normalize_doi
from resolvers.model import Verdict


def _gold(row: dict) -> tuple[str | None, str | None]:
    doi = row.get("gold_doi")
    arx = row.get("gold_arxiv_id")
    # the gold DOI read as the catalog reads a DOI field ("10.3389/ neuro.01.002.2008"), else as given
    return ((normalize_doi(doi) or doi.strip().lower()) if doi else None), (arx.strip() if arx else None)


def _is_correct(verdict: Verdict, gold_doi: str | None, gold_arxiv: str | None) -> bool:
    w = verdict.work
    if w is None:
        return False
    dois = {d.lower() for d in (w.doi, *w.alt_dois) if d}
    return bool((gold_doi and gold_doi in dois) or (gold_arxiv and w.arxiv_id == gold_arxiv))


def gold_universe(rows: Iterable[dict]) -> tuple[set[str], set[str]]:
    """Every DOI and arXiv id the gold gives as an answer of some row."""
    dois: set[str] = set()
    arxiv_ids: set[str] = set()
    for row in rows:
        gdoi, garx = _gold(row)
        dois.update([gdoi] if gdoi else [])
        arxiv_ids.update([garx] if garx else [])
    return dois, arxiv_ids


def _in_universe(verdict: Verdict, universe: tuple[set[str], set[str]]) -> bool:
    w = verdict.work
    if w is None:
        return False
    dois = {d.lower() for d in (w.doi, *w.alt_dois) if d}
    return bool(dois & universe[0]) or (w.arxiv_id is not None and w.arxiv_id in universe[1])


def judge(row: dict, v: Verdict, universe: tuple[set[str], set[str]]) -> str:
    """``correct``, ``wrong`` or ``unjudged`` for a link; ``missed``, ``right_none`` for the rest."""
    gdoi, garx = _gold(row)
    if not v.status.is_link:
        return "missed" if (gdoi or garx) else "right_none"
    if _is_correct(v, gdoi, garx):
        return "correct"
    if gdoi or garx or _in_universe(v, universe):
        return "wrong"
    return "unjudged"


def evaluate(rows_with_gold: Sequence[dict], verdicts: Sequence[Verdict], worst: int = 10) -> dict:
    """Metrics dict: precision, recall, f1, counts, the per-state table, and the worst errors and
    misses with their evidence."""
    if len(rows_with_gold) != len(verdicts):
        raise ValueError("one verdict per gold row")
    universe = gold_universe(rows_with_gold)
    by_state: dict[str, Counter] = {}
    reasons: Counter = Counter()
    wrong: list[dict] = []
    missed: list[dict] = []
    for row, v in zip(rows_with_gold, verdicts):
        gdoi, garx = _gold(row)
        verdict_of = judge(row, v, universe)
        counted = ["rows", verdict_of] + (["gold_positive"] if gdoi or garx else [])
        by_state.setdefault(v.status.value, Counter()).update(counted)
        reasons[f"{v.status.value}/{v.reason.value}"] += 1
        if verdict_of == "wrong":
            wrong.append({"raw": row.get("raw"), "gold_doi": gdoi, "gold_arxiv_id": garx,
                          "linked": v.work.work_id if v.work else None, "score": v.score,
                          "evidence": v.evidence})
        elif verdict_of == "missed":
            missed.append({"raw": row.get("raw"), "gold_doi": gdoi, "gold_arxiv_id": garx,
                           "status": v.status.value, "reason": v.reason.value, "evidence": v.evidence})
    total = sum(by_state.values(), Counter())
    links, correct = total["correct"] + total["wrong"] + total["unjudged"], total["correct"]
    positives = sum(1 for row in rows_with_gold if any(_gold(row)))
    judged = correct + total["wrong"]
    precision = correct / judged if judged else 1.0
    recall = correct / positives if positives else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    wrong.sort(key=lambda e: -(e["score"] or 0))  # confident wrong links are the worst
    return {"rows": len(rows_with_gold), "gold_positives": positives, "links": links, "correct_links": correct,
            "wrong_links": total["wrong"], "unjudged_links": total["unjudged"],
            "precision": precision, "recall": recall, "f1": f1,
            "precision_all_links": correct / links if links else 1.0,
            "states": {s: c["rows"] for s, c in by_state.items()},
            "by_state": {s: dict(c) for s, c in sorted(by_state.items())}, "reasons": dict(reasons),
            "worst_errors": wrong[:worst], "worst_misses": missed[:worst]}


def read_rows(paths: Iterable[str | Path]) -> list[dict]:
    rows: list[dict] = []
    for p in paths:
        p = Path(p)
        if not p.is_file():
            from citeledger.app_errors import UsageError

            raise UsageError(f"gold file {p}: {'a folder, not a file' if p.is_dir() else 'no such file'}")
        opener = gzip.open if p.suffix == ".gz" else open
        with opener(p, "rt") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def resolve_gold(rows: Sequence[dict], catalog_dir: CatalogDir, batch: int = 2000) -> tuple[list[Verdict], dict]:
    """The chain's verdict for every gold row, and the seconds it took to load and to resolve."""
    from citeledger.engine.process_cache import get_catalog, get_fuzzy
    from citeledger.run.batches import resolve_batch_references
    from resolvers.model import Reference

    t0 = time.perf_counter()
    catalog = get_catalog(catalog_dir)
    get_fuzzy(catalog)  # the blocking index loads here, timed apart from resolution
    t1 = time.perf_counter()
    verdicts: list[Verdict] = []
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        refs = [Reference(str(r.get("citing_paper", "eval")), int(r.get("reference_index") or i + n + 1),
                          r["raw"], str(r.get("source") or "unknown")) for n, r in enumerate(chunk)]
        verdicts.extend(res.verdict for res in resolve_batch_references(refs, catalog))
    t2 = time.perf_counter()
    return verdicts, {"load_seconds": round(t1 - t0, 2),
                      "references_per_second": round(len(rows) / (t2 - t1), 1) if t2 > t1 else None}


def run_eval(gold: Sequence[str | Path], catalog_dir: CatalogDir, worst: int = 10, batch: int = 2000) -> dict:
    """Read the gold files, resolve every row, and measure: what ``citeledger eval`` prints."""
    rows = read_rows(gold)
    verdicts, timing = resolve_gold(rows, catalog_dir, batch)
    return {**evaluate(rows, verdicts, worst=worst), **timing}


def report_lines(m: dict) -> list[str]:
    """The metrics as text: totals, the per-state table, the worst errors and misses with evidence."""
    lines = [f"rows {m['rows']}  gold positives {m['gold_positives']}  links {m['links']}  correct "
             f"{m['correct_links']}  wrong {m['wrong_links']}  unjudged {m['unjudged_links']}",
             f"precision {m['precision']:.4f} (of judged links; of all links {m['precision_all_links']:.4f})  "
             f"recall {m['recall']:.4f}  F1 {m['f1']:.4f}  ({m['references_per_second']} references/s)",
             f"  {'state':<20} {'rows':>7} {'gold+':>7} {'correct':>7} {'wrong':>7} {'unjudged':>8} {'missed':>7}"]
    for state, c in m["by_state"].items():
        lines.append(f"  {state:<20} {c.get('rows', 0):>7} {c.get('gold_positive', 0):>7} {c.get('correct', 0):>7} "
                     f"{c.get('wrong', 0):>7} {c.get('unjudged', 0):>8} {c.get('missed', 0):>7}")
    for e in m["worst_errors"]:
        lines.append("WRONG " + json.dumps({k: e[k] for k in ("raw", "gold_doi", "gold_arxiv_id", "linked", "score",
                                                             "evidence")}, default=str, ensure_ascii=False))
    for e in m["worst_misses"]:
        lines.append("MISSED " + json.dumps({k: e[k] for k in ("raw", "gold_doi", "gold_arxiv_id", "status", "reason",
                                                              "evidence")}, default=str, ensure_ascii=False))
    return lines


def main(argv: list[str] | None = None) -> int:
    from citeledger.options import non_negative_int, positive_int

    ap = argparse.ArgumentParser(prog="python -m citeledger.evaluation.links", description=__doc__.splitlines()[0])
    ap.add_argument("gold", nargs="+")
    ap.add_argument("--catalog", default="data/catalog")
    ap.add_argument("--worst", type=non_negative_int, default=5)
    ap.add_argument("--batch", type=positive_int, default=2000)
    ap.add_argument("--json", action="store_true", help="print the whole metrics dict as JSON")
    args = ap.parse_args(argv)
    m = run_eval(args.gold, args.catalog, worst=args.worst, batch=args.batch)
    print(json.dumps(m, indent=1, default=str) if args.json else "\n".join(report_lines(m)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
