"""The static site of a big ledger: ``site_files.build_site`` over the synthetic ledger of
``bench_records_ledger`` (10,000 papers of 40 references each by default, citing catalog works, a
tenth of them catalog papers citing each other), after its records are written. Prints the seconds
the records write took, then the site's: seconds (wall clock and CPU, its worker processes included), files written,
papers and cited works, and the site's size on disk.

    PYTHONPATH=. python benchmarks/bench_site.py [--papers 10000] [--refs 40] [--keep DIR] [--profile] [--check-links]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parent.parent / "tests"))  # link_check.py

from bench_records_ledger import make_ledger  # noqa: E402
from step_timer import cpu_with_children  # noqa: E402

from citeledger.records import files as record_files  # noqa: E402
from citeledger.records.ledger_reads import citing_papers  # noqa: E402
from citeledger.site.site_files import build_site  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--refs", type=int, default=40)
    parser.add_argument("--keep", metavar="DIR", help="copy the site to DIR (to open it)")
    parser.add_argument("--ledger-dir", metavar="DIR", help="make the catalog and ledger with its records in DIR, "
                        "or use the ones a run before made there (the site alone is timed either way)")
    parser.add_argument("--profile", action="store_true", help="print the site build's top functions by own time")
    parser.add_argument("--check-links", action="store_true", help="then check every internal link of every file "
                        "(tests/link_check.py; not timed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        work = Path(args.ledger_dir or tmp)
        catalog, ledger = work / "catalog", work / "ledger"
        if not (ledger / "records").is_dir():
            t0 = time.perf_counter()
            make_ledger(work, args.papers, args.refs)
            papers = citing_papers(ledger, catalog, None)
            print(f"ledger of {len(papers)} papers x {args.refs} references made in {time.perf_counter() - t0:.1f} s")
            t0 = time.perf_counter()
            record_files.write_records(papers, ledger, catalog)
            print(f"records written in {time.perf_counter() - t0:.1f} s")
        out = Path(tmp) / "site"
        cpu0, wall0 = cpu_with_children(), time.perf_counter()
        load = os.getloadavg()
        profile = cProfile.Profile() if args.profile else None
        if profile:
            profile.enable()
        report = build_site(out, ledger, catalog)
        if profile:
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(20)
        wall, cpu = time.perf_counter() - wall0, cpu_with_children() - cpu0
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        print(f"load average before the site: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"site of {report.papers} papers and {report.works} cited works: {report.files} files, "
              f"{size / 1e6:.0f} MB, {wall:.1f} s wall clock ({cpu:.1f} CPU s, worker processes included)")
        if args.check_links:
            from link_check import broken_links

            broken, checked = broken_links(out)
            print(f"internal links checked: {checked:,} in {report.files:,} files; broken: {len(broken)}"
                  + "".join(f"\n  {b}" for b in broken[:20]))
        if args.keep:
            shutil.copytree(out, args.keep, dirs_exist_ok=True)


if __name__ == "__main__":
    main()
