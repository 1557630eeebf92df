"""Link precision, recall and F1 of verdicts against gold identifiers.

A gold row carries ``gold_doi`` and/or ``gold_arxiv_id``; both null means the reference must not
be linked. A link is correct when the linked work's DOI (primary or alternate, lower-case) or
arXiv id equals the gold one. precision = correct links / links made; recall = correct links /
rows with a gold identifier.

``citeledger eval GOLD... --catalog DIR [--worst N]`` (or ``python -m citeledger.evaluate``) runs the
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

from resolvers.model import Verdict


def _gold(row: dict) -> tuple[str | None, str | None]:
    doi = row.get("gold_doi")
    arx = row.get("gold_arxiv_id")
    return (doi.strip().lower() if doi else None), (arx.strip() if arx else None)


def _is_correct(verdict: Verdict, gold_doi: str | None, gold_arxiv: str | None) -> bool:
    w = verdict.work
    if w is None:
        return False
    dois = {d.lower() for d in (w.doi, *w.alt_dois) if d}
    return bool((gold_doi and gold_doi in dois) or (gold_arxiv and w.arxiv_id == gold_arxiv))


def evaluate(rows_with_gold: Sequence[dict], verdicts: Sequence[Verdict], worst: int = 10) -> dict:
    """Metrics dict: precision, recall, f1, counts, states, and the worst errors with evidence."""
    if len(rows_with_gold) != len(verdicts):
        raise ValueError("one verdict per gold row")
    links = correct = positives = 0
    states: Counter = Counter()
    reasons: Counter = Counter()
    wrong: list[dict] = []
    missed: list[dict] = []
    for row, v in zip(rows_with_gold, verdicts):
        gdoi, garx = _gold(row)
        positive = bool(gdoi or garx)
        positives += positive
        states[v.status.value] += 1
        reasons[f"{v.status.value}/{v.reason.value}"] += 1
        if v.status.is_link:
            links += 1
            if _is_correct(v, gdoi, garx):
                correct += 1
            else:
                wrong.append({"raw": row.get("raw"), "gold_doi": gdoi, "gold_arxiv_id": garx,
                              "linked": v.work.work_id if v.work else None, "score": v.score,
                              "evidence": v.evidence})
        elif positive:
            missed.append({"raw": row.get("raw"), "gold_doi": gdoi, "gold_arxiv_id": garx,
                           "status": v.status.value, "reason": v.reason.value, "evidence": v.evidence})
    precision = correct / links if links else 1.0
    recall = correct / positives if positives else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    wrong.sort(key=lambda e: -(e["score"] or 0))  # confident wrong links are the worst
    return {"rows": len(rows_with_gold), "gold_positives": positives, "links": links, "correct_links": correct,
            "precision": precision, "recall": recall, "f1": f1, "states": dict(states), "reasons": dict(reasons),
            "worst_errors": wrong[:worst], "worst_misses": missed[:worst]}


def read_rows(paths: Iterable[str | Path]) -> list[dict]:
    rows: list[dict] = []
    for p in paths:
        p = Path(p)
        if not p.is_file():
            from resolvers.errors import UsageError

            raise UsageError(f"gold file {p}: {'a folder, not a file' if p.is_dir() else 'no such file'}")
        opener = gzip.open if p.suffix == ".gz" else open
        with opener(p, "rt") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def main(argv: list[str] | None = None) -> int:
    from .config import non_negative_int, positive_int

    ap = argparse.ArgumentParser(prog="python -m citeledger.evaluate", description=__doc__.splitlines()[0])
    ap.add_argument("gold", nargs="+")
    ap.add_argument("--catalog", default="data/catalog")
    ap.add_argument("--worst", type=non_negative_int, default=5)
    ap.add_argument("--batch", type=positive_int, default=2000)
    ap.add_argument("--json", action="store_true", help="print the whole metrics dict as JSON")
    args = ap.parse_args(argv)
    from citeledger.pipeline import get_catalog, get_fuzzy, resolve_references
    from resolvers.model import Reference

    rows = read_rows(args.gold)
    t0 = time.perf_counter()
    catalog = get_catalog(args.catalog)
    get_fuzzy(catalog)  # the blocking index loads here, timed apart from resolution
    t1 = time.perf_counter()
    verdicts: list[Verdict] = []
    for i in range(0, len(rows), args.batch):
        chunk = rows[i:i + args.batch]
        refs = [Reference(str(r.get("citing_paper", "eval")), int(r.get("reference_index") or i + n + 1),
                          r["raw"], str(r.get("source") or "unknown")) for n, r in enumerate(chunk)]
        verdicts.extend(res.verdict for res in resolve_references(refs, catalog))
    t2 = time.perf_counter()
    m = evaluate(rows, verdicts, worst=args.worst)
    m["load_seconds"] = round(t1 - t0, 2)
    m["references_per_second"] = round(len(rows) / (t2 - t1), 1) if t2 > t1 else None
    if args.json:
        print(json.dumps(m, indent=1, default=str))
        return 0
    print(f"rows {m['rows']}  gold positives {m['gold_positives']}  links {m['links']}  correct {m['correct_links']}")
    print(f"precision {m['precision']:.4f}  recall {m['recall']:.4f}  F1 {m['f1']:.4f}  "
          f"({m['references_per_second']} references/s)")
    for state, n in sorted(m["states"].items()):
        print(f"  {state:20s} {n}")
    for e in m["worst_errors"]:
        print("WRONG", json.dumps({k: e[k] for k in ("raw", "gold_doi", "linked", "score", "evidence")},
                                  default=str, ensure_ascii=False))
    for e in m["worst_misses"]:
        print("MISSED", json.dumps({k: e[k] for k in ("raw", "gold_doi", "status", "reason")},
                                   default=str, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
