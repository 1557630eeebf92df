"""Crash safety: SIGKILL a resolve run (mid-batch, during a Parquet write, while finishing) or a
catalog build (while indexing, between the generation's move and the pointer swap), then check
that nothing partial or duplicated is visible and that a re-run with the same run id ends with
exactly the ledger an uninterrupted run gives, row for row.

The run happens in a subprocess driving the pipeline functions (no Prefect server: fast, and the
kill points are exact). Each kill point is a monkeypatch inside that subprocess which writes a
"ready" file and then sleeps, so the test kills it at a known place.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).parent.parent
INPUT_ROWS = 60
BATCH = 8  # 8 batches: kills land between, inside and after them

DRIVER = r'''
import os, sys, time, types
from pathlib import Path
from citeledger.storage import atomic
from citeledger.run import batches, finishing, planning

point, ready = os.environ.get("CRASH_POINT", ""), Path(os.environ.get("CRASH_READY", "/nonexistent"))

def stop_here():
    """Tell the test we are at the kill point, then wait to be killed."""
    ready.write_text(str(os.getpid()))
    time.sleep(600)
    os._exit(3)  # never reached when the test kills us

if point == "mid_batch":  # killed while resolving the third batch (two are written)
    real = batches.apply_rule_chain
    calls = []
    def slow(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            stop_here()
        return real(*a, **k)
    batches.apply_rule_chain = slow
elif point in ("parquet_write", "finish"):  # killed with a written file not yet renamed into place
    kind = "observations" if point == "parquet_write" else "notices"
    seen = []
    class OsShim(types.ModuleType):
        def __getattr__(self, name):
            return getattr(os, name)
        @staticmethod
        def replace(src, dst):
            if f"/{kind}/" in str(dst):
                seen.append(dst)
                if len(seen) == (3 if kind == "observations" else 1):
                    stop_here()
            return os.replace(src, dst)
    atomic.os = OsShim("os")

inp, catalog, ledger, run_id, batch = sys.argv[1:6]
plan = planning.plan_run([inp], catalog, ledger, run_id=run_id, batch_size=int(batch))
for job in plan.pending:
    batches.run_batch(job)
summary = finishing.finish_run(plan)
print("DONE", summary.resumed, sum(summary.states.values()))
'''

BUILD_DRIVER = r'''
import os, sys, time
from pathlib import Path
from citeledger.catalog import catalog_store as catalog

point, ready = os.environ.get("CRASH_POINT", ""), Path(os.environ.get("CRASH_READY", "/nonexistent"))

def stop_here(*a, **k):
    ready.write_text(str(os.getpid()))
    time.sleep(600)

if point == "build_index":
    catalog.index = stop_here
elif point == "build_swap":  # the new generation is in place, CURRENT not yet swapped
    real = catalog.atomic_write_bytes
    def swap(path, data):
        if Path(path).name == "CURRENT" and (Path(path).parent / "gen-000001").exists():
            stop_here()
        return real(path, data)
    catalog.atomic_write_bytes = swap
report = catalog.CatalogStore(sys.argv[1]).build(sys.argv[2:])
print("DONE", report.generation, report.works)
'''


def env(**extra) -> dict[str, str]:
    e = {**os.environ, "PYTHONPATH": str(REPO), **extra}
    e.pop("CITELEDGER_CONFIG", None)
    return e


def run_driver(script: str, args: list[str], point: str = "", tmp: Path | None = None, timeout: float = 120):
    """Run the driver; with a kill point, SIGKILL it there. Returns stdout (None when killed)."""
    if not point:
        out = subprocess.run([sys.executable, "-c", script, *args], env=env(), capture_output=True, text=True,
                             timeout=timeout, cwd=REPO)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout
    ready = tmp / f"ready-{point}"
    ready.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", script, *args], env=env(CRASH_POINT=point, CRASH_READY=str(ready)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    deadline = time.monotonic() + timeout
    while not ready.exists():
        if proc.poll() is not None:
            raise AssertionError(f"driver ended before the kill point {point}: {proc.stderr.read()[-3000:]}")
        assert time.monotonic() < deadline, f"kill point {point} never reached"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return None


def ledger_rows(ledger: Path, run_id: str) -> list[tuple]:
    """The run's observations as the contract sees them (ids, digests, states, works), sorted."""
    con = duckdb.connect()
    try:
        return con.execute(
            "SELECT citing_paper, reference_index, observation_id, observation_digest, status, work_id, doi, "
            "arxiv_id FROM read_parquet(?, union_by_name=true) WHERE run_id = ? ORDER BY 1, 2",
            [str(ledger / "observations" / "**" / "*.parquet"), run_id]).fetchall()
    finally:
        con.close()


def assert_no_partial_files(root: Path) -> None:
    """Nothing half-written is visible: no temp or staging files, and every Parquet file reads."""
    leftovers = [p for p in root.rglob("*") if p.is_file() and (p.name.endswith(".tmp") or ".staging" in p.parts
                                                                 or ".building-" in str(p))]
    assert leftovers == []
    con = duckdb.connect()
    try:
        for path in root.rglob("*.parquet"):
            con.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()
    finally:
        con.close()


@pytest.fixture(scope="module")
def setup(tmp_path_factory, default_catalog):
    """The input: 60 sample references."""
    base = tmp_path_factory.mktemp("crash")
    inp = base / "refs.jsonl"
    lines = (REPO / "data" / "sample_references.jsonl").read_text().splitlines()[:INPUT_ROWS]
    inp.write_text("\n".join(lines) + "\n")
    return inp, default_catalog


@pytest.fixture(scope="module")
def uninterrupted(setup, tmp_path_factory) -> list[tuple]:
    """The ledger rows of a run that is never killed, run once for every kill point (the same
    input, catalog, run id and code as each resumed run of this session)."""
    inp, catalog = setup
    ledger = tmp_path_factory.mktemp("uninterrupted") / "clean-ledger"
    run_driver(DRIVER, [str(inp), str(catalog), str(ledger), "crash-run", str(BATCH)])
    expected = ledger_rows(ledger, "crash-run")
    assert len(expected) == INPUT_ROWS
    return expected


@pytest.mark.parametrize("point", ["mid_batch", "parquet_write", "finish"])
def test_killed_run_resumes_to_the_uninterrupted_ledger(setup, uninterrupted, tmp_path, point):
    inp, catalog = setup
    ledger = tmp_path / "ledger"
    run_driver(DRIVER, [str(inp), str(catalog), str(ledger), "crash-run", str(BATCH)], point=point, tmp=tmp_path)
    # what a reader sees right after the crash: only whole batches, no duplicates
    after_crash = ledger_rows(ledger, "crash-run")
    assert (len(after_crash) % BATCH == 0 or len(after_crash) == INPUT_ROWS) and len(set(after_crash)) == len(after_crash)
    if point == "parquet_write":  # the killed write's file is in staging, not in the ledger
        assert any((ledger / ".staging").iterdir()) and len(after_crash) == 2 * BATCH
    out = run_driver(DRIVER, [str(inp), str(catalog), str(ledger), "crash-run", str(BATCH)])
    assert out.startswith("DONE True")
    expected = uninterrupted
    assert set(after_crash) <= set(expected)
    assert ledger_rows(ledger, "crash-run") == expected
    assert_no_partial_files(ledger)
    runs = list((ledger / "runs").rglob("*.parquet"))
    assert len(runs) == 1  # one run row, not one per attempt
    parts = sorted(p.name for p in (ledger / "observations" / "crash-run").iterdir())
    assert len(parts) == -(-INPUT_ROWS // BATCH) and all(p.endswith(".parquet") for p in parts)


SOURCES = sorted((REPO / "tests" / "fixtures" / "catalog").glob("*.jsonl"))
MORE = sorted((REPO / "data" / "sources").glob("*.jsonl.gz"))[:1]


@pytest.fixture(scope="module")
def clean_fingerprint(tmp_path_factory) -> str:
    """The fingerprint of the catalog two uninterrupted builds give (SOURCES, then MORE), built
    once for every kill point."""
    from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog

    clean = tmp_path_factory.mktemp("clean") / "clean"
    CatalogStore(clean).build(SOURCES)
    CatalogStore(clean).build(MORE)
    return ParquetCatalog(clean).fingerprint


@pytest.mark.parametrize("point", ["build_index", "build_swap"])
def test_killed_catalog_build_leaves_the_previous_catalog_and_rebuilds(tmp_path, clean_fingerprint, point):
    """A build killed at any point leaves ``CURRENT`` on the previous, intact generation; the next
    build clears the debris and gives the catalog an uninterrupted build gives."""
    from citeledger.catalog.catalog_store import CatalogStore, ParquetCatalog

    more = MORE
    crashed = tmp_path / "crashed"
    CatalogStore(crashed).build(SOURCES)
    before = ParquetCatalog(crashed).fingerprint
    run_driver(BUILD_DRIVER, [str(crashed), *map(str, more)], point=point, tmp=tmp_path)
    assert ParquetCatalog(crashed).fingerprint == before  # readers still see the old catalog, whole
    out = run_driver(BUILD_DRIVER, [str(crashed), *map(str, more)])
    assert out.startswith("DONE")
    assert ParquetCatalog(crashed).fingerprint == clean_fingerprint
    assert_no_partial_files(crashed)
    gens = sorted(p.name for p in crashed.iterdir() if p.name.startswith("gen-"))
    assert gens[-1] == (crashed / "CURRENT").read_text().strip() and len(gens) <= 2
