"""The flows as an operator runs them: a real Prefect server (its own port, home and database), a
process work pool and worker, the deployments of prefect.yaml (``prefect deploy --all``), then a
nightly run read back through Prefect's client: the step task runs by name, the flow run named by
the ledger run id (kept in the ``runs`` row), the table artifacts, a refused parameter, and a
failing step written into ``runs``. Every wait is bounded; server and worker die with the test."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import httpx
import pytest

pytestmark = pytest.mark.flow

REPO = Path(__file__).parent.parent
PREFECT = str(Path(sys.executable).parent / "prefect")
REFS = [
    {"citing_paper": "paper-a", "reference_index": 1,
     "raw": "Kawai K. Endoscopic sphincterotomy of the ampulla of Vater. Gastrointest Endosc 1974;20:148. "
            "doi:10.1016/S0016-5107(74)73914-1"},
    {"citing_paper": "paper-a", "reference_index": 2,
     "raw": "Streinu I, Theran L. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
    {"citing_paper": "paper-a", "reference_index": 3,
     "raw": "Doe J. Nothing to see in this volume. Proceedings of Nowhere. 1999;1:1-2."},
]
STEPS = ["intake", "refresh-catalog", "select-rerun", "notices", "settle-run", "records", "write-run"]
SERVER_START = 120  # seconds: a new server migrates its database (20-30 s on a loaded 2-core machine)
RUN_WAIT = 150  # seconds for one flow run: the worker's poll, a new process importing Prefect, the night


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """The process and everything it started (its own process group), SIGTERM then SIGKILL."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


def _wait_healthy(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"prefect server exited {server.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"prefect server not healthy after {SERVER_START} s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A Prefect server and a process worker of the ``citeledger`` pool, with prefect.yaml deployed."""
    home = tmp_path_factory.mktemp("prefect-server")
    url = f"http://127.0.0.1:{_free_port()}/api"
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_API_URL": url,
           "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{home / 'prefect.db'}",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "PREFECT_WORKER_QUERY_SECONDS": "1",
           "PREFECT_LOGGING_LEVEL": "INFO", "PYTHONPATH": str(REPO), "PREFECT_UI_ENABLED": "false"}
    processes: list[subprocess.Popen] = []
    try:
        port = url.split(":")[2].split("/")[0]
        log = home / "server.log"
        processes.append(subprocess.Popen([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", port],
                                          env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                          start_new_session=True))
        _wait_healthy(url, processes[0], log)
        subprocess.run([PREFECT, "work-pool", "create", "citeledger", "--type", "process"], env=env, cwd=REPO,
                       check=True, capture_output=True, timeout=90)
        deployed = subprocess.run([PREFECT, "--no-prompt", "deploy", "--all"], env=env, cwd=REPO,
                                  capture_output=True, text=True, timeout=120)
        assert deployed.returncode == 0, deployed.stdout[-3000:] + deployed.stderr[-3000:]
        worker_log = home / "worker.log"
        processes.append(subprocess.Popen([PREFECT, "worker", "start", "--pool", "citeledger", "--type", "process"],
                                          env=env, cwd=REPO, stdout=worker_log.open("wb"),
                                          stderr=subprocess.STDOUT, start_new_session=True))
        yield {"url": url, "home": home, "worker_log": worker_log}
    finally:
        for process in reversed(processes):
            _stop(process)


@pytest.fixture
def client(server):
    from prefect import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: server["url"]}), get_client(sync_client=True) as c:
        yield c


def _site(tmp_path: Path, fixture_catalog: Path) -> dict[str, str]:
    dirs = {k: tmp_path / k for k in ("catalog", "ledger", "inbox", "processed")}
    shutil.copytree(fixture_catalog, dirs["catalog"])
    dirs["inbox"].mkdir()
    (dirs["inbox"] / "refs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in REFS))
    return {k: str(v) for k, v in dirs.items()}


def roots(folder: Path) -> dict[str, str]:
    """The flow run's environment that lets a night's folders lie under ``folder`` (``nightly.roots``)."""
    return {"CITELEDGER_NIGHTLY_ROOTS": str(folder)}


def _run(client, server, parameters: dict, env: dict | None = None):
    """Start a run of the nightly deployment (``env``: the flow run's extra environment) and wait
    (bounded) for its end; the flow run."""
    from prefect.deployments import run_deployment

    started = run_deployment("nightly/nightly", parameters=parameters, timeout=0, client=client,
                             job_variables={"env": env} if env else None)
    deadline = time.monotonic() + RUN_WAIT
    while time.monotonic() < deadline:
        flow_run = client.read_flow_run(started.id)
        if flow_run.state is not None and flow_run.state.is_final():
            return flow_run
        time.sleep(1)
    raise AssertionError(f"flow run {started.id} not over after {RUN_WAIT} s; worker: "
                         f"{server['worker_log'].read_text()[-3000:]}")


def _runs_rows(ledger: str) -> list[dict]:
    """The ledger's ``runs`` view, as ``citeledger query`` sees it."""
    from citeledger.ledger.ledger_store import connect_views

    con = connect_views(ledger, None)
    try:
        cur = con.execute("SELECT * FROM runs")
        return [dict(zip([d[0] for d in cur.description], row)) for row in cur.fetchall()]
    finally:
        con.close()


def _task_runs(client, flow_run_id: UUID) -> dict[str, object]:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    return {t.name: t for t in runs}


def _artifacts(client, flow_run_id: UUID) -> dict[str, object]:
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    found = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))
    return {a.key: a for a in found}


def test_a_deployed_night_shows_its_steps_runs_and_tables(server, client, tmp_path, fixture_catalog):
    site = _site(tmp_path, fixture_catalog)
    flow_run = _run(client, server, {**site, "catalog_inbox": None, "batch_size": 2, "task_runner": "threads",
                                     "site": str(tmp_path / "html")}, env=roots(tmp_path))
    assert flow_run.state.is_completed(), flow_run.state.message
    assert (tmp_path / "html" / "index.html").is_file()  # the site step, asked for, ran last

    (row,) = _runs_rows(site["ledger"])
    assert flow_run.name == row["run_id"] and row["run_id"].startswith("nightly-")
    assert row["flow_run_id"] == str(flow_run.id) and row["finished_at"] is not None

    tasks = _task_runs(client, flow_run.id)
    assert set(STEPS) <= set(tasks)
    batches = sorted(name for name in tasks if name.startswith("resolve-batch"))
    assert batches == ["resolve-batch-1-of-2-2-refs", "resolve-batch-2-of-2-1-refs"]
    assert all(t.state.is_completed() for t in tasks.values())
    # the graph's edges: each step takes what the one before returned
    assert {str(i.id) for i in tasks["select-rerun"].task_inputs["intake"]} == {str(tasks["intake"].id)}
    assert {str(i.id) for i in tasks["write-run"].task_inputs["notices"]} == {str(tasks["notices"].id)}

    artifacts = _artifacts(client, flow_run.id)
    states = artifacts["nightly-states"]
    assert states.type == "table"
    table = json.loads(states.data) if isinstance(states.data, str) else states.data
    counts = {r["state"]: r["references"] for r in table}
    assert sum(counts.values()) == 3 and counts["verified_exact"] >= 1 and counts["unresolved"] >= 1
    steps = artifacts["nightly-steps"]
    rows = json.loads(steps.data) if isinstance(steps.data, str) else steps.data
    assert [r["step"] for r in rows][:3] == ["intake", "refresh-catalog", "select-rerun"]
    assert "resolve-batches" in [r["step"] for r in rows] and rows[0]["counts"].startswith("1 new files")
    assert rows[-1]["step"] == "site" and rows[-1]["counts"].startswith("1 papers, ")
    assert artifacts["nightly-summary"].type == "markdown"


def test_a_bad_parameter_is_refused_before_a_run_exists(server, client):
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
    from prefect.deployments import run_deployment

    def nightly_runs() -> int:
        return len(client.read_flow_runs(deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=["nightly"]))))

    before = nightly_runs()
    for bad in ({"task_runner": "bogus"}, {"batch_size": 0}, {"dask_workers": -1}):
        with pytest.raises(Exception, match="(?i)validation"):
            run_deployment("nightly/nightly", parameters=bad, timeout=0, client=client)
    assert nightly_runs() == before


def _failure_hook_done(client, server, flow_run_id: UUID) -> None:
    """Wait (bounded) for the failure hook's artifact, its last act: Prefect sets the failed state
    first and runs the ``on_failure`` hooks after it, so a final state alone does not mean the
    ``runs`` row is written yet."""
    deadline = time.monotonic() + RUN_WAIT
    while time.monotonic() < deadline:
        if "nightly-failure" in _artifacts(client, flow_run_id):
            return
        time.sleep(0.5)
    raise AssertionError(f"no failure artifact after {RUN_WAIT} s; worker: {server['worker_log'].read_text()[-3000:]}")


def test_a_failing_step_is_written_into_the_runs_row(server, client, tmp_path, fixture_catalog):
    site = _site(tmp_path, fixture_catalog)
    site["catalog"] = str(tmp_path / "no-catalog")  # the select step finds no catalog: the night fails
    flow_run = _run(client, server, {**site, "catalog_inbox": None, "batch_size": 2}, env=roots(tmp_path))
    assert flow_run.state.is_failed()
    _failure_hook_done(client, server, flow_run.id)
    assert "no catalog" in flow_run.state.message

    (row,) = _runs_rows(site["ledger"])
    assert row["run_id"] == flow_run.name and row["flow_run_id"] == str(flow_run.id)
    assert row["finished_at"] is None and "no catalog" in json.loads(row["errors"])[0]
    tasks = _task_runs(client, flow_run.id)
    failed = [name for name, t in tasks.items() if t.state.is_failed()]
    assert failed == ["select-rerun"] and {"intake", "refresh-catalog"} <= set(tasks)
    assert "nightly-failure" in _artifacts(client, flow_run.id)
    assert os.listdir(site["inbox"]) == ["refs.jsonl"]  # nothing read is lost: the file waits for the next night


def test_a_night_past_its_timeout_fails_into_the_runs_row(server, client, tmp_path, fixture_catalog):
    """The timeout is the worker's setting, here set for one run through its job variables: a
    millisecond, so the night times out before its first step is done."""
    site = _site(tmp_path, fixture_catalog)
    flow_run = _run(client, server, {**site, "catalog_inbox": None},
                    env={**roots(tmp_path), "CITELEDGER_NIGHTLY_TIMEOUT_SECONDS": "0.001"})
    assert flow_run.state.name == "TimedOut" and flow_run.state.is_failed()
    _failure_hook_done(client, server, flow_run.id)
    (row,) = _runs_rows(site["ledger"])
    assert row["run_id"] == flow_run.name and row["finished_at"] is None
    assert "timeout" in json.loads(row["errors"])[0].lower()
    assert os.listdir(site["inbox"]) == ["refs.jsonl"]
