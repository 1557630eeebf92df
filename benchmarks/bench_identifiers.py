"""How many reference strings per second ``extract_identifiers`` handles on one core.

Usage: .venv/bin/python benchmarks/bench_identifiers.py [FILE.jsonl[.gz] ...]
Default files: the glutton, unarXive and unlabeled reference sets of ../shared/data/refs.
Prints strings/s per file and overall, each the median of 3 timed passes (after one warm-up).
"""
from __future__ import annotations

import gzip
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolvers.identifiers.extract import extract_identifiers  # noqa: E402

# ../shared/data seen from the repository or from a worktree below it (/work/wt/NAME)
SHARED = next((p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data" / "refs").is_dir()),
              REPO.parent / "shared" / "data")
DEFAULT = [SHARED / "refs" / name for name in
           ("glutton_dev.jsonl.gz", "unarxive_sample.jsonl.gz", "glutton_unlabeled.jsonl.gz")]
PASSES = 3


def load(path: Path) -> list[str]:
    """The ``raw`` field of every row (rows without one are skipped: this is a benchmark)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [row["raw"] for row in map(json.loads, f) if isinstance(row.get("raw"), str)]


def rate(strings: list[str]) -> tuple[float, int]:
    """Median strings/s over PASSES passes, and how many strings carried any identifier."""
    found = sum(1 for s in strings if extract_identifiers(s).any_wellformed)  # warm-up
    times = []
    for _ in range(PASSES):
        t0 = time.perf_counter()
        for s in strings:
            extract_identifiers(s)
        times.append(time.perf_counter() - t0)
    return len(strings) / statistics.median(times), found


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or DEFAULT
    everything: list[str] = []
    for path in paths:
        strings = load(path)
        everything += strings
        per_s, found = rate(strings)
        print(f"{path.name:32s} {len(strings):7d} strings  {per_s:10,.0f} strings/s  "
              f"({found} with a well-formed identifier)")
    per_s, found = rate(everything)
    print(f"{'all':32s} {len(everything):7d} strings  {per_s:10,.0f} strings/s  "
          f"(median of {PASSES} passes, one core)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
