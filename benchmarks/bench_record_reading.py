"""What reading a record file as I-JSON costs, and what a hostile file costs before it is refused.

Prints, with the load average (``os.getloadavg``):
- the published Pith citation record (40 KB) read by ``json.loads`` and by
  ``storage.json_documents.read_document`` (regular file, bounded read, ``resolvers.strict_json``),
  best of N, and the consistency check (``pith.consistency``) of it;
- each hostile form ``import-pith`` and ``verify`` meet, read in a child process: its CPU seconds and
  how much the child's resident high-water mark grew (``VmHWM``), refused or read: a 30 MB file of small JSON
  values (over the 16 MiB bound: refused unread), a 16 MiB one (the most a record file may be: read
  whole), 100,000 levels of nesting, a member name twice, a FIFO nobody writes to;
- an ed25519 public key checked for small order and the prime-order subgroup (``pith.ed25519_points``).

    .venv/bin/python benchmarks/bench_record_reading.py [--repeat 20]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "tests" / "fixtures" / "pith" / "pith-paper-citation-record-2501.00254.json"
CHILD = """
import sys, time
from pathlib import Path
from citeledger.storage.json_documents import read_document

def peak():  # this process's own high-water mark (ru_maxrss would keep the parent's across exec)
    line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024

before, start = peak(), time.process_time()
try:
    read_document(Path(sys.argv[1]))
    said = "read"
except ValueError as exc:
    said = "refused: " + str(exc).split(": ", 1)[1][:70]
print(f"{time.process_time() - start:.3f}\\t{peak() - before:.0f}\\t{said}")
"""


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def hostile_files(folder: Path) -> dict[str, Path]:
    small = b'{"a":[' + b",".join([b"[]"] * 10_000_000) + b"]}"  # 30 MB of empty lists
    files = {"30 MB of small values": small, "16 MiB of small values": small[:16 * 1024 * 1024 - 3] + b"]]}",
             "100,000 levels of nesting": b"[" * 100_000 + b"]" * 100_000,
             "a member name twice": b'{"outbound": [], "outbound": []}'}
    paths = {}
    for name, data in files.items():
        paths[name] = folder / (name.replace(" ", "-").replace(",", "") + ".json")
        paths[name].write_bytes(data)
    fifo = folder / "fifo.json"
    os.mkfifo(fifo)
    paths["a FIFO nobody writes to"] = fifo
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from citeledger.pith import consistency
    from citeledger.pith.ed25519_points import key_problem
    from citeledger.storage.json_documents import read_document

    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    data = SEED.read_bytes()
    record = json.loads(data)
    plain = best(lambda: json.loads(SEED.read_bytes()), args.repeat)
    strict = best(lambda: read_document(SEED), args.repeat)
    checks = best(lambda: consistency.problems(record), args.repeat)
    print(f"published Pith record ({len(data) / 1024:.0f} KB): json.loads {plain * 1000:.2f} ms, "
          f"read_document {strict * 1000:.2f} ms, consistency check {checks * 1000:.2f} ms (best of {args.repeat})")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in hostile_files(Path(tmp)).items():
            done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True,
                                  timeout=600, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
            seconds, mib, said = (done.stdout.strip() or "?\t?\t" + done.stderr.strip()[-80:]).split("\t", 2)
            print(f"{name}: {seconds} CPU s, {mib} MiB more resident at the peak than before reading, {said}")
    key = bytes.fromhex("b2d552b68890857171a78b36a5dccf368a953413288c353f7c9d9d6f94b709b3")  # Pith's key
    print(f"ed25519 key check (Pith's published key): {best(lambda: key_problem(key), args.repeat) * 1000:.2f} ms")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
