"""SIGTERM and Ctrl-C end a ``resolve --remote`` that waits on a stalled service at once, as they
end a local run: the requests in flight are cut (their sockets shut down), the requests waiting
behind them fail without being sent, the run is left unfinished (its batches not written) and the
command says how to finish it, exit 128 + the signal.

The stalled service here would hold each request ten minutes (its stall window, its deadline and
its read timeout are set that long), so a command that ends within the test's bound ended because
of the signal. A local server only; every wait is bounded and the process is killed after the test.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading

import pytest
from remote_hostile import Sent, trickle
from remote_server import server  # noqa: F401
from test_worker_lifetime import MAIN, REPO, assert_interrupted, group_killed_after

REFERENCES = 40


@pytest.fixture
def stalled(server, tmp_path):
    arrived = threading.Event()
    slow = trickle(Sent(), every=1.0, count=900)

    def handler(request):
        arrived.set()
        return slow(request)

    server.expect_request(re.compile("^/.*")).respond_with_handler(handler)
    config = tmp_path / "citeledger.toml"
    long_stall = ("min_interval_seconds = 0.0\nmax_concurrency = 1\nstall_seconds = 600.0\n"
                  "deadline_seconds = 900.0\ntimeout_seconds = 600.0\n")
    config.write_text(f"""state_dir = "{tmp_path / 'state'}"
[remote]
enabled = ["crossref"]
mailto = "tests@example.org"
[remote.crossref]
{long_stall}
[endpoints]
crossref_api = "{server.url_for('').rstrip('/')}"
""")
    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps({"citing_paper": "p", "reference_index": i + 1,
                                        "raw": f"Doe J. Stalled {i}. J. 2020. doi:10.5555/stalled.{i}"}) + "\n"
                            for i in range(REFERENCES)))
    return arrived, config, refs


def _ctrl_c_as_at_a_terminal() -> None:
    """A command started in the background (by a shell without job control, as the test runner
    may be) inherits SIGINT ignored; at a terminal Ctrl-C reaches it with its default action."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_run_waiting_on_a_stalled_service_at_once(signum, stalled, tmp_path, fixture_catalog):
    arrived, config, refs = stalled
    env = {**{k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}, "PYTHONPATH": str(REPO),
           "CITELEDGER_CONFIG": str(config)}
    err_path = tmp_path / "stderr"
    with open(err_path, "w") as err:
        # batches of 10: four batches, two at a time, each waiting on the one connection
        proc = subprocess.Popen([sys.executable, "-c", MAIN, "resolve", str(refs), "--remote", "--catalog",
                                 str(fixture_catalog), "--ledger", str(tmp_path / "ledger"), "--run-id", "r-stalled",
                                 "--batch-size", "10"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True, preexec_fn=_ctrl_c_as_at_a_terminal)
    with group_killed_after(proc):
        assert arrived.wait(120), err_path.read_text()
        assert proc.poll() is None
        os.kill(proc.pid, signum)
        proc.wait(timeout=60)  # without the stop: ten minutes per request in flight
    assert_interrupted(proc, err_path.read_text(), signum, "r-stalled")
    assert not list((tmp_path / "ledger").glob("observations/**/*.parquet"))  # no batch written as unavailable
