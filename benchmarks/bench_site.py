"""The static site of a big ledger: ``site_files.build_site`` over the synthetic ledger of
``bench_records_ledger`` (10,000 papers of 40 references each by default, citing catalog works, a
tenth of them catalog papers citing each other), its records written first. Times a full build
into a new folder, then a run that changes ``--changed`` papers (a later observation of each of
their references, in another state; their records and those of the ledger papers they cite written
again, as the nightly does), then the incremental build of the same folder. Prints for each build:
seconds on the wall clock and of CPU (its worker process included), files written and kept, and
the load average before it; with ``--compare``, a full build of the changed ledger into another
folder, and whether every file of the two is byte for byte the same. The change and the
incremental build are done twice: the first incremental build stages in a new folder, the second
(as every later one) in the spare the first left beside the site.

Before each timed build the disk is flushed (``os.sync``, its seconds printed): what the steps
before wrote, the full build's 1.2 GB above all, would otherwise be written back by the kernel
during the next build (30 s after it was written), which a nightly's site build, a day after the
previous one, never meets. ``--no-sync`` times the builds without it.

    PYTHONPATH=. python benchmarks/bench_site.py [--papers 10000] [--refs 40] [--changed 100]
        [--ledger-dir DIR] [--keep DIR] [--profile] [--check-links] [--compare] [--no-sync]
"""
from __future__ import annotations

import argparse
import cProfile
import filecmp
import os
import pstats
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parent.parent / "tests"))  # link_check.py

from bench_records_ledger import RUN, WHEN, catalog_works, make_ledger, observation_rows  # noqa: E402
from step_timer import cpu_with_children  # noqa: E402

from citeledger.ledger.ledger_store import LedgerStore  # noqa: E402
from citeledger.records import record_files  # noqa: E402
from citeledger.records.ledger_reads import citing_papers  # noqa: E402
from citeledger.site.site_files import build_site  # noqa: E402

STATES = ["verified_fuzzy", "unresolved", "verified_exact", "metadata_mismatch", "parse_uncertain"]


def change_papers(ledger: Path, catalog: Path, count: int, refs: int, step: int = 1) -> list[str]:
    """A later observation of every reference of ``count`` papers spread over the ledger, each in
    another state (and, linked, to another work); then the records of those papers and of the
    ledger papers whose citations they change written again. ``step`` makes each call's change
    differ from the one before. Returns the papers whose records were written."""
    papers = [p for p in citing_papers(ledger, catalog, None) if p != "seed"]
    changed = papers[::max(1, len(papers) // count)][:count]
    works, _ = catalog_works(catalog)
    rows = observation_rows(changed, refs, works[step:] + works[:step])
    for n, row in enumerate(rows):
        status = STATES[(n + step) % len(STATES)]
        linked = status in ("verified_exact", "verified_fuzzy", "metadata_mismatch")
        row.update(observation_id=f"{row['observation_id']}-{step}", run_id=f"{RUN}-{step}", status=status,
                   observed_at=WHEN + timedelta(days=step), resolver_source="raw_fallback" if linked else None)
        if not linked:
            row.update(work_id=None, doi=None, arxiv_id=None, score=None)
    store = LedgerStore(ledger)
    store.write_observations(RUN, f"changed-{step:03d}", rows)
    works_of = record_files.ledger_work_pages(ledger, catalog)
    cited = {works_of[r["work_id"]] for r in rows if r["work_id"] in works_of}  # as papers_touched after a run
    touched = sorted(set(changed) | cited)
    record_files.write_records(touched, ledger, catalog)
    return touched


def timed_build(out: Path, ledger: Path, catalog: Path, what: str, profile: bool = False, sync: bool = True) -> None:
    if sync:
        t0 = time.perf_counter()
        os.sync()
        what += f" (the disk flushed first: {time.perf_counter() - t0:.1f} s)"
    load = os.getloadavg()
    cpu0, wall0 = cpu_with_children(), time.perf_counter()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    report = build_site(out, ledger, catalog)
    if profiler:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumtime").print_stats(25)
    wall, cpu = time.perf_counter() - wall0, cpu_with_children() - cpu0
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{what}: load average before it {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{report.papers} papers, {report.works} cited works, {report.files} files ({size / 1e6:.0f} MB), "
          f"{report.written} written, {report.kept} kept, {report.made} papers' pages made: "
          f"{wall:.1f} s wall clock, {cpu:.1f} CPU s (its worker process included)", flush=True)


def same_files(one: Path, two: Path) -> tuple[int, list[str]]:
    """How many files the two sites hold, and those that differ or that only one holds (the site's
    own bookkeeping under .citeledger-site/ apart)."""
    names = {p.relative_to(one) for p in one.rglob("*") if p.is_file() and ".citeledger-site" not in p.parts}
    others = {p.relative_to(two) for p in two.rglob("*") if p.is_file() and ".citeledger-site" not in p.parts}
    differ = sorted(str(n) for n in names ^ others)
    differ += sorted(str(n) for n in names & others if not filecmp.cmp(one / n, two / n, shallow=False))
    return len(names), differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--refs", type=int, default=40)
    parser.add_argument("--changed", type=int, default=100, help="papers the run between the two builds changes")
    parser.add_argument("--keep", metavar="DIR", help="copy the site to DIR (to open it)")
    parser.add_argument("--ledger-dir", metavar="DIR", help="make the catalog and ledger with its records in DIR, "
                        "or use the ones a run before made there (each run changes its papers again)")
    parser.add_argument("--profile", action="store_true", help="print the incremental build's top functions")
    parser.add_argument("--check-links", action="store_true", help="then check every internal link of every file "
                        "(tests/link_check.py; not timed)")
    parser.add_argument("--compare", action="store_true", help="then a full build of the changed ledger into "
                        "another folder, compared file by file with the incremental one (not timed)")
    parser.add_argument("--no-sync", dest="sync", action="store_false", help="do not flush the disk before each "
                        "timed build (the full build's files are then written back during the incremental ones)")
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
        timed_build(out, ledger, catalog, "full build", sync=args.sync)
        for night in (1, 2):  # the first night stages afresh; from the second on, in the spare
            step = len(list((ledger / "observations").rglob("changed-*"))) + 1
            t0 = time.perf_counter()
            touched = change_papers(ledger, catalog, args.changed, args.refs, step)
            print(f"a run changed {args.changed} papers: {len(touched)} records written again in "
                  f"{time.perf_counter() - t0:.1f} s (not the site's)")
            timed_build(out, ledger, catalog, f"incremental build {night} after {args.changed} papers changed"
                        + (" (staged in the spare)" if night == 2 else ""), args.profile and night == 2, args.sync)
        if args.compare:
            build_site(Path(tmp) / "full", ledger, catalog)
            files, differ = same_files(out, Path(tmp) / "full")
            print(f"incremental beside a full build of the same ledger: {files} files, {len(differ)} differ"
                  + "".join(f"\n  {d}" for d in differ[:20]))
        if args.check_links:
            from link_check import broken_links

            broken, checked = broken_links(out)
            print(f"internal links checked: {checked:,}; broken: {len(broken)}" + "".join(f"\n  {b}" for b in broken[:20]))
        if args.keep:
            shutil.copytree(out, args.keep, dirs_exist_ok=True)


if __name__ == "__main__":
    main()
