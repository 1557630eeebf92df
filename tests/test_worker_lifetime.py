"""Worker processes never outlive the command that started them: after SIGKILL of a resolve on the
process pool its workers and the resource tracker end within seconds (each worker watches its
parent), and SIGTERM is an interrupt that stops the workers and names the run to re-run. Local
processes only; every wait is bounded in time, and whatever the test started is killed after it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
MAIN = "import sys; from citeledger.cli.entry import main; sys.exit(main(sys.argv[1:]))"
REFERENCES = 20_000  # enough for a run of many seconds on the pool, so it is stopped mid-way


def big_input(path: Path) -> Path:
    rows = [json.loads(line) for line in (REPO / "data" / "sample_references.jsonl").read_text().splitlines()]
    with open(path, "w") as fh:
        for i in range(REFERENCES):
            fh.write(json.dumps({"citing_paper": f"paper-{i // 40}", "reference_index": i % 40 + 1,
                                 "raw": rows[i % len(rows)]["raw"]}) + "\n")
    return path


def children(pid: int) -> dict[int, str]:
    """The live processes whose parent is ``pid``, with their command lines."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                out[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@contextmanager
def group_killed_after(proc: subprocess.Popen):
    """The block's process and its group killed (SIGKILL) when the block ends, however it ends."""
    try:
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


def assert_interrupted(proc: subprocess.Popen, text: str, signum: int, run_id: str) -> None:
    """A command stopped by ``signum``: exit 128 + N, one line naming the run to re-run, no traceback."""
    assert proc.returncode == 128 + signum, text
    assert f"citeledger: interrupted; re-run with --run-id {run_id} to finish" in text.splitlines(), text
    assert "Traceback" not in text and "internal error" not in text, text


def wait_for(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


@pytest.fixture
def pool_run(tmp_path, fixture_catalog):
    """A resolve on a pool of two worker processes, started and running: (process, its children)."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to see the worker processes")
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PYTHONPATH"] = str(REPO)
    refs = big_input(tmp_path / "big.jsonl")
    proc = subprocess.Popen([sys.executable, "-c", MAIN, "resolve", str(refs), "--catalog", str(fixture_catalog),
                             "--ledger", str(tmp_path / "ledger"), "--run-id", "r-pool", "--task-runner", "processes",
                             "--dask-workers", "2"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seen: dict[int, str] = {}
    try:
        def workers_up() -> bool:
            seen.update(children(proc.pid))
            return sum("spawn_main" in cmd for cmd in seen.values()) >= 2
        if not wait_for(workers_up, 90):
            pytest.fail(f"no worker processes started: {proc.poll()} {seen}")
        time.sleep(1.0)  # the workers past their start-up, resolving
        assert proc.poll() is None, "the run ended before it could be stopped"
        seen.update(children(proc.pid))  # the resource tracker, if started after the workers
        yield proc, seen
    finally:
        for pid in [proc.pid, *seen]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.communicate(timeout=30)


def test_sigkill_of_a_pool_run_takes_its_workers_with_it(pool_run):
    proc, started = pool_run
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert wait_for(lambda: not any(alive(pid) for pid in started), 10), \
        {pid: cmd for pid, cmd in started.items() if alive(pid)}


def test_sigterm_of_a_pool_run_stops_its_workers_and_names_the_run(pool_run):
    proc, started = pool_run
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1] == "citeledger: interrupted; re-run with --run-id r-pool to finish", err
    assert "Traceback" not in err
    assert wait_for(lambda: not any(alive(pid) for pid in started), 10), \
        {pid: cmd for pid, cmd in started.items() if alive(pid)}


def test_a_worker_ends_when_its_parent_is_gone(tmp_path):
    """``die_with_parent`` in a process whose parent then dies (a grandchild of this test)."""
    code = ("import os, sys, time\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    from citeledger.processes import die_with_parent\n"
            "    die_with_parent()\n"
            "    print(os.getpid(), flush=True)\n"
            "    time.sleep(60)\n"
            "    os._exit(0)\n"
            "time.sleep(0.5)\n"
            "os._exit(0)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    grandchild = int(done.stdout.split()[0])
    try:
        assert wait_for(lambda: not alive(grandchild), 5)
    finally:
        if alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)
