"""How much of the "wrong link" count on a gold file is noise in the gold itself?

Runs the whole resolution chain (as ``citeledger eval`` does) on a gold file against a catalog and
classifies every link the gold calls wrong by the evidence the data itself carries. Nothing here
changes a verdict: it only sorts the disagreements, so precision can be reported both as measured
and without the rows whose gold contradicts itself.

Classes (a wrong link gets every class whose test it passes; ``primary`` is the first in order):
1. ``same_raw_other_gold``: the identical raw string appears elsewhere in the gold file with a
   different answer (another DOI, or null). Whatever a matcher links, the gold calls some row of it
   wrong. (Reference lists cite the same string once; a string with several answers is a merge of
   two references or a labelling slip.)
2. ``string_carries_linked_id``: the string literally carries the linked work's DOI or arXiv id
   (well-formed, as the identifier extractor reads it), yet the gold names another work or none.
3. ``all_fields_agree``: the string's title matches the linked work's (title score >= 0.97) and
   first author, volume and first page all agree with it: every field the string names points at
   the linked work.
4. ``gold_title_absent``: the gold work is in the catalog but its title does not occur in the string
   (aligned similarity < 60), while the linked work's does (>= 90): the gold points at a work the
   string does not name.
5. ``gold_null_title_present``: the gold is null (work said to be absent) but the linked work's
   title occurs in the string (>= 90) with at least two of author/volume/page agreeing.
6. ``unexplained``: none of the above: counted as a real error.

It also prints the ceiling this gold puts on precision: on the self-contradicting strings the
matcher links, each row whose gold is not the string's most frequent non-null answer is wrong
whatever is linked; with every other link right, precision could not exceed
``precision_ceiling_with_these_links``.

Usage: python benchmarks/gold_noise.py [GOLD] [--catalog DIR] [--show N]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rapidfuzz import fuzz  # noqa: E402

from citeledger.evaluation.links import _gold, _is_correct, read_rows  # noqa: E402
from resolvers.identifiers.extract import extract_identifiers  # noqa: E402
from resolvers.parsing.fields import norm_text  # noqa: E402

DEV = ROOT.parent / "shared/data/refs/glutton_dev.jsonl.gz"
CLASSES = ["same_raw_other_gold", "string_carries_linked_id", "all_fields_agree", "gold_title_absent",
           "gold_null_title_present", "unexplained"]


def _present(title: str | None, raw: str) -> float:
    """How well a title occurs inside the raw string (0-100, aligned, normalised text)."""
    t, r = norm_text(title or ""), norm_text(raw)
    if not t or not r:
        return 0.0
    return fuzz.partial_ratio(t, r) if len(t) <= len(r) else fuzz.ratio(t, r)


def run_chain(rows: list[dict], catalog_dir: str, batch: int = 2000):
    from citeledger.engine.process_cache import get_catalog
    from citeledger.run.batches import resolve_batch_references
    from resolvers.model import Reference

    catalog = get_catalog(catalog_dir)
    verdicts = []
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        refs = [Reference("noise", n + 1, r["raw"]) for n, r in enumerate(chunk)]
        verdicts.extend(res.verdict for res in resolve_batch_references(refs, catalog))
    return catalog, verdicts


def classify(rows: list[dict], verdicts, catalog) -> dict:
    answers: dict[str, Counter] = {}  # raw string -> its gold answers, with how many rows give each
    for r in rows:
        answers.setdefault(r["raw"], Counter())[_gold(r)] += 1
    contradicting = {raw for raw, a in answers.items() if len(a) > 1}
    gold_dois = sorted({g for r in rows for g in [_gold(r)[0]] if g})
    by_doi = catalog.works_by_doi(gold_dois)

    wrong: list[dict] = []
    for r, v in zip(rows, verdicts):
        if not v.status.is_link:
            continue
        gdoi, garx = _gold(r)
        if _is_correct(v, gdoi, garx):
            continue
        w = v.work
        classes = []
        if r["raw"] in contradicting:
            classes.append("same_raw_other_gold")
        ids = extract_identifiers(r["raw"])
        linked_ids = {d.lower() for d in (w.doi, *w.alt_dois) if d}
        if linked_ids & set(ids.dois) or (w.arxiv_id and w.arxiv_id in ids.arxiv_ids):
            classes.append("string_carries_linked_id")
        f = (v.evidence or {}).get("features") or {}
        if f.get("title", 0) >= 0.97 and f.get("author") == 1 and f.get("volume") == 1 and f.get("page") == 1:
            classes.append("all_fields_agree")
        linked_present = _present(w.title, r["raw"])
        gold_work = by_doi.get(gdoi) if gdoi else None
        if gold_work is not None and _present(gold_work.title, r["raw"]) < 60 and linked_present >= 90:
            classes.append("gold_title_absent")
        if not gdoi and not garx and linked_present >= 90 and \
                sum(f.get(k) == 1 for k in ("author", "volume", "page")) >= 2:
            classes.append("gold_null_title_present")
        if not classes:
            classes.append("unexplained")
        wrong.append({"raw": r["raw"], "gold_doi": gdoi, "gold_arxiv_id": garx, "linked": w.work_id,
                      "status": v.status.value, "score": v.score, "classes": classes, "primary": classes[0]})

    def metrics(keep) -> dict:
        links = correct = positives = 0
        for r, v in zip(rows, verdicts):
            if not keep(r):
                continue
            gdoi, garx = _gold(r)
            positives += bool(gdoi or garx)
            if v.status.is_link:
                links += 1
                correct += _is_correct(v, gdoi, garx)
        return {"rows": sum(1 for r in rows if keep(r)), "links": links, "correct": correct,
                "precision": round(correct / links, 5) if links else None,
                "recall": round(correct / positives, 5) if positives else None}

    # The least wrong links any matcher must make on the self-contradicting strings it links: a
    # string gets one answer, so every row of it whose gold is another answer counts wrong even
    # when the link is the gold of its other rows.
    linked_raws = {r["raw"] for r, v in zip(rows, verdicts) if v.status.is_link and r["raw"] in contradicting}
    unavoidable = sum(sum(answers[raw].values()) - max(n for g, n in answers[raw].items() if g != (None, None))
                      for raw in linked_raws if any(g != (None, None) for g in answers[raw]))
    links_now = sum(v.status.is_link for v in verdicts)
    noisy_raws = {e["raw"] for e in wrong if e["primary"] != "unexplained"}
    return {
        "wrong_links": len(wrong),
        "primary": dict(Counter(e["primary"] for e in wrong)),
        "any": {c: sum(c in e["classes"] for e in wrong) for c in CLASSES},
        "self_contradicting_raw_strings": len(contradicting),
        "rows_with_self_contradicting_gold": sum(r["raw"] in contradicting for r in rows),
        "as_measured": metrics(lambda r: True),
        "unavoidable_wrong_links_on_contradicting_strings_linked": unavoidable,
        "precision_ceiling_with_these_links": round(1 - unavoidable / links_now, 5) if links_now else None,
        "without_self_contradicting_gold": metrics(lambda r: r["raw"] not in contradicting),
        "without_any_evidenced_noise": metrics(lambda r: r["raw"] not in contradicting and r["raw"] not in noisy_raws),
        "examples": wrong,
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gold", nargs="?", default=str(DEV))
    ap.add_argument("--catalog", default="data/catalog")
    ap.add_argument("--show", type=int, default=0, help="print this many wrong links per class")
    args = ap.parse_args(argv)
    rows = read_rows([args.gold])
    catalog, verdicts = run_chain(rows, args.catalog)
    out = classify(rows, verdicts, catalog)
    examples = out.pop("examples")
    print(json.dumps(out, indent=1))
    if args.show:
        for c in CLASSES:
            for e in [e for e in examples if e["primary"] == c][: args.show]:
                print(c, json.dumps({k: e[k] for k in ("raw", "gold_doi", "linked", "score", "classes")},
                                    ensure_ascii=False))
    return out


if __name__ == "__main__":
    main()
