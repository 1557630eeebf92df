"""A flow run (``--flow``) stopped by SIGTERM sent to its whole process group (the command, its
workers and Prefect's temporary server at once, as a service manager or ``timeout`` does) ends with
one line naming the run to re-run, exit 143: no Prefect traceback, no "internal error". Local
processes only; every wait is bounded, and the process group is killed after the test."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from prefect_homes import copy_of_session_home
from test_worker_lifetime import MAIN, REPO, assert_interrupted, big_input, group_killed_after, wait_for


@pytest.mark.flow
def test_sigterm_to_a_flow_runs_group_is_one_line_naming_the_run(tmp_path, fixture_catalog):
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PYTHONPATH=str(REPO), PREFECT_LOGGING_LEVEL="INFO",
               PREFECT_HOME=str(copy_of_session_home(tmp_path / "prefect-home")))  # the "resolving" line tells the pool is busy
    refs = big_input(tmp_path / "big.jsonl")
    err_path = tmp_path / "stderr"
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-c", MAIN, "resolve", str(refs), "--catalog", str(fixture_catalog),
                                 "--ledger", str(tmp_path / "ledger"), "--run-id", "r-flow", "--flow",
                                 "--task-runner", "processes", "--dask-workers", "2"],
                                cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    with group_killed_after(proc):
        assert wait_for(lambda: "resolving 20 batches" in err_path.read_text(), 240), err_path.read_text()
        time.sleep(3)  # batches running in the pool
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=120)  # Prefect retries each call to its stopped server (twice, by default) first
    assert_interrupted(proc, err_path.read_text(), signal.SIGTERM, "r-flow")
