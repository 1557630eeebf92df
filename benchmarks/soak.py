"""Soak: the fuzz, kill and remote-fault scenarios of the reliability tests, in a loop, for a set time.

    .venv/bin/python benchmarks/soak.py --minutes 10

Prints how many cases it tried, how many rows it checked, how many were lost or duplicated (must
be 0), and how many crashes (an exception where a value was due) and hangs (a case over its time
bound) it saw. Exit status 1 when any of those is not 0. Outside the fast suite.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="soak-prefect-"))

from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import InputLimits, InputReject
from resolvers.model import Reference  # noqa: E402

FRAGMENTS = ["10.", "10.1234/", "doi:", "https://doi.org/", "arXiv:", "abs/", "hep-th/", "9901001", "1706.03762",
             "[hep-th]", "(", ")", "{", "}", '"', "'", "A. ", "Smith, J., ", "et al. ", "(2001) ", "vol. 3, pp. 1-5",
             "\n", "\\_", "%2F", "&amp;", "\x00", "\x1b", "Ã©", "é", "\ud800", "@article{", "title = {", "\\bibitem{k}"]
HANG_SECONDS = 30.0

import logging  # noqa: E402

logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the local server logs every request


class Tally:
    def __init__(self):
        self.c = Counter()
        self.failures: list[str] = []

    def fail(self, kind: str, what: str) -> None:
        self.c[kind] += 1
        if len(self.failures) < 20:
            self.failures.append(f"{kind}: {what}")


def random_text(rng: random.Random, size: int) -> str:
    if rng.random() < 0.1:  # a long repetition: the shape that once made patterns quadratic
        return rng.choice(FRAGMENTS) * rng.randint(1000, 30_000)
    parts = []
    while sum(map(len, parts)) < size:
        parts.append(rng.choice(FRAGMENTS) if rng.random() < 0.6 else
                     "".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(1, 8))))
    return "".join(parts)


def random_line(rng: random.Random, i: int) -> bytes:
    roll = rng.random()
    if roll < 0.5:
        obj = {"citing_paper": rng.choice(["p", "", None, 7, "q\ud800"]), "reference_index": rng.choice([i, -1, "3", None, i]),
               "raw": random_text(rng, rng.randint(0, 200))}
        return json.dumps(obj, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    if roll < 0.7:
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 120))).replace(b"\n", b" ")
    if roll < 0.8:
        return b"[" * rng.randint(1, 5000)
    return json.dumps({"citing_paper": "p", "reference_index": i, "raw": "Smith J. A title. 2001"}).encode()[:rng.randint(1, 60)]


def fuzz_case(rng: random.Random, tmp: Path, tally: Tally, catalog, fuzzy) -> None:
    """One random JSONL file: every non-blank line is one reference or one reject; then the
    references through apply_rule_chain: one state each, in bounded time."""
    from resolvers.resolution import apply_rule_chain

    lines = [random_line(rng, i + 1) for i in range(rng.randint(1, 30))]
    data = b"\n".join(lines) + b"\n"
    path = tmp / "fuzz.jsonl"
    path.write_bytes(data)
    expected = [n for n, line in enumerate(data.split(b"\n")[:-1], 1) if line.strip()]
    started = time.monotonic()
    try:
        items = list(read_references(path, InputLimits(max_raw_chars=50_000)))
        got = sorted(i.line for i in items)
        tally.c["rows"] += len(expected)
        lost = len(set(expected) - set(got))
        dup = len(got) - len(set(got))
        tally.c["lost"] += lost
        tally.c["duplicated"] += dup
        if lost or dup or set(got) - set(expected):
            tally.failures.append(f"fuzz accounting: expected lines {expected}, got {got}")
        for item in items:
            if isinstance(item, InputReject):
                (item.reason + item.excerpt).encode("utf-8")
            else:
                item.raw.encode("utf-8")
        refs = [i for i in items if isinstance(i, Reference)]
        refs += [Reference("fuzz", 10_000 + k, random_text(rng, rng.randint(0, 3000))) for k in range(5)]
        out = apply_rule_chain(refs, catalog, fuzzy, None)
        if [r.reference for r in out] != refs:
            tally.fail("lost", "apply_rule_chain did not return one resolution per reference")
        tally.c["rows"] += len(refs)
    except Exception:
        tally.fail("crashes", "fuzz: " + traceback.format_exc(limit=3))
    if time.monotonic() - started > HANG_SECONDS:
        tally.fail("hangs", f"fuzz case took {time.monotonic() - started:.0f} s")
    tally.c["cases"] += 1


def kill_case(rng: random.Random, tmp: Path, tally: Tally, catalog: Path, inp: Path) -> None:
    """Kill a run at a random point (SIGKILL), resume it, compare with an uninterrupted run."""
    from test_crash import BATCH, DRIVER, env, ledger_rows

    point = rng.choice(["mid_batch", "parquet_write", "finish", "random_delay"])
    work = Path(tempfile.mkdtemp(dir=tmp))
    ledger, ready = work / "ledger", work / "ready"
    args = [sys.executable, "-c", DRIVER, str(inp), str(catalog), str(ledger), "soak-run", str(BATCH)]
    try:
        extra = {} if point == "random_delay" else {"CRASH_POINT": point, "CRASH_READY": str(ready)}
        proc = subprocess.Popen(args, env=env(**extra), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        if point == "random_delay":  # anywhere: during start-up, reading, a batch, a write, finishing
            time.sleep(rng.uniform(0.5, 4.0))
        else:
            while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        done = subprocess.run(args, env=env(), cwd=REPO, capture_output=True, timeout=180)
        clean = subprocess.run(args[:5] + [str(work / "clean"), "soak-run", str(BATCH)], env=env(), cwd=REPO,
                               capture_output=True, timeout=180)
        if done.returncode or clean.returncode:
            tally.fail("crashes", f"kill {point}: re-run failed: {(done.stderr or clean.stderr)[-500:]!r}")
            return
        got, want = ledger_rows(ledger, "soak-run"), ledger_rows(work / "clean", "soak-run")
        tally.c["rows"] += len(want)
        tally.c["lost"] += len(set(want) - set(got))
        tally.c["duplicated"] += len(got) - len(set(got))
        if got != want:
            tally.failures.append(f"kill {point}: resumed ledger differs from the uninterrupted one")
            tally.c["mismatched"] += 1
        leftovers = [p for p in ledger.rglob("*") if p.is_file() and (p.name.endswith(".tmp") or ".staging" in p.parts)]
        if leftovers:
            tally.fail("partial_files", f"kill {point}: {leftovers[:3]}")
    except subprocess.TimeoutExpired:
        tally.fail("hangs", f"kill {point}: a run exceeded its time bound")
    except Exception:
        tally.fail("crashes", f"kill {point}: " + traceback.format_exc(limit=3))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        tally.c["cases"] += 1
        tally.c[f"kill_{point}"] += 1


def fault_case(tally: Tally, tmp: Path, fixture_catalog: Path) -> None:
    """The remote-fault scenario: every failed service call is unavailable with its reason."""
    import re

    import test_remote_faults as faults
    from pytest_httpserver import HTTPServer

    from citeledger.engine import process_cache as workers
    from citeledger.ledger.query import run_query
    from citeledger.run import batches, finishing, planning

    work = Path(tempfile.mkdtemp(dir=tmp))
    srv = HTTPServer(host="127.0.0.1", threaded=True)
    srv.start()
    old = os.environ.get("CITELEDGER_CONFIG")
    try:
        srv.expect_request(re.compile(r"^/works/.*")).respond_with_handler(faults.crossref_handler)
        srv.expect_request("/api/query").respond_with_handler(faults.arxiv_handler)
        config = work / "citeledger.toml"
        service = ("min_interval_seconds = 0.0\nretries = 1\nbackoff_base_seconds = 0.01\nbackoff_max_seconds = 0.02\n"
                   "timeout_seconds = 0.5\ncircuit_failures = 100000\nmax_concurrency = 4\n")
        config.write_text(f'[remote]\nenabled = ["arxiv", "crossref"]\nmailto = "soak@example.org"\n'
                          f"[remote.arxiv]\n{service}[remote.crossref]\n{service}[endpoints]\n"
                          f'arxiv_api = "{srv.url_for("/api/query")}"\ncrossref_api = "{srv.url_for("").rstrip("/")}"\n')
        os.environ["CITELEDGER_CONFIG"] = str(config)
        workers.clear_caches()
        catalog = work / "catalog"
        shutil.copytree(fixture_catalog, catalog)
        refs, expected = faults.references()
        path = work / "refs.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in refs))
        started = time.monotonic()
        plan = planning.plan_run([path], catalog, work / "ledger", run_id="faults", batch_size=1, remote=True)
        for job in plan.pending:
            batches.run_batch(job)
        finishing.finish_run(plan)
        rows = run_query("select reference_index, status from observations", work / "ledger", catalog).fetchall()
        got = Counter(i for i, _ in rows)
        tally.c["rows"] += len(expected)
        tally.c["lost"] += len(set(expected) - set(got))
        tally.c["duplicated"] += sum(n - 1 for n in got.values() if n > 1)
        wrong = [(i, s, expected[i]) for i, s in rows if s != expected[i][0]]
        if wrong:
            tally.fail("wrong_state", f"faults: {wrong[:5]}")
        if time.monotonic() - started > 120:
            tally.fail("hangs", "fault scenario took over 120 s")
    except Exception:
        tally.fail("crashes", "faults: " + traceback.format_exc(limit=3))
    finally:
        if old is None:
            os.environ.pop("CITELEDGER_CONFIG", None)
        else:
            os.environ["CITELEDGER_CONFIG"] = old
        workers.clear_caches()
        srv.clear()
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
        tally.c["cases"] += 1
        tally.c["fault_runs"] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="citeledger-soak-"))
    from citeledger.catalog.catalog_store import CatalogStore
    from citeledger.engine import process_cache as workers

    default_catalog, fixture_catalog = tmp / "default-catalog", tmp / "fixture-catalog"
    CatalogStore(default_catalog).build(sorted((REPO / "data" / "sources").glob("*")))
    CatalogStore(fixture_catalog).build(sorted((REPO / "tests" / "fixtures" / "catalog").glob("*.jsonl")))
    inp = tmp / "refs.jsonl"
    inp.write_text("\n".join((REPO / "data" / "sample_references.jsonl").read_text().splitlines()[:60]) + "\n")
    catalog = workers.get_catalog(fixture_catalog)
    fuzzy = workers.get_fuzzy(catalog)
    tally = Tally()
    end = time.monotonic() + args.minutes * 60
    rounds = 0
    while time.monotonic() < end:
        rounds += 1
        for _ in range(20):
            fuzz_case(rng, tmp, tally, catalog, fuzzy)
            tally.c["fuzz_cases"] += 1
        kill_case(rng, tmp, tally, default_catalog, inp)
        if rounds % 3 == 1:
            fault_case(tally, tmp, fixture_catalog)
            catalog = workers.get_catalog(fixture_catalog)
            fuzzy = workers.get_fuzzy(catalog)
        print(f"[{time.strftime('%H:%M:%S')}] round {rounds}: {dict(tally.c)}", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    c = tally.c
    print(f"\nsoak {args.minutes:g} min, seed {seed}: {c['cases']} cases ({c['fuzz_cases']} fuzz files, "
          f"{sum(v for k, v in c.items() if k.startswith('kill_'))} kills, {c['fault_runs']} fault runs), "
          f"{c['rows']} rows checked, {c['lost']} lost, {c['duplicated']} duplicated, {c['crashes']} crashes, "
          f"{c['hangs']} hangs, {c['mismatched']} resumed ledgers differing, {c['partial_files']} partial files, "
          f"{c['wrong_state']} wrong states")
    for f in tally.failures:
        print("  " + f)
    bad = sum(c[k] for k in ("lost", "duplicated", "crashes", "hangs", "mismatched", "partial_files", "wrong_state"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
