"""The resolve flow through Prefect, driven by the CLI exactly as a user runs it."""
import json
from pathlib import Path

import duckdb
import pytest

from citeledger.cli.entry import main

pytestmark = pytest.mark.flow


def test_cli_builds_resolves_and_queries_through_the_flow(tmp_path, capsys):
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "catalog"
    catalog, ledger = tmp_path / "catalog", tmp_path / "ledger"
    assert main(["catalog", "build", "--catalog", str(catalog), *map(str, sorted(fixtures.glob("*.jsonl")))]) == 0
    out = capsys.readouterr().out
    assert "arxiv_snapshot" in out and "works (+" in out

    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps(r) + "\n" for r in [
        {"citing_paper": "p", "reference_index": 1, "raw": "Streinu I, Theran L. Sparsity-certifying graph "
                                                             "decompositions. arXiv:0704.0002"},
        {"citing_paper": "p", "reference_index": 2, "raw": "Doe J. Nothing to see. J Nowhere. 1999;1:1-2."},
    ]) + "not json\n")
    assert main(["resolve", str(refs), "--catalog", str(catalog), "--ledger", str(ledger), "--run-id", "flow-1",
                 "--batch-size", "1"]) == 0
    out = capsys.readouterr().out
    assert "run flow-1: 2 references, 1 rejected rows" in out
    assert "verified_exact" in out and "references/s" in out
    assert ":3: bad JSON" in out

    rows = duckdb.sql(f"select reference_index, status, work_id from read_parquet('{ledger}/observations/**/*.parquet',"
                      " union_by_name=true) order by 1").fetchall()
    assert rows[0] == (1, "verified_exact", "arxiv:0704.0002")
    assert rows[1][1] == "unresolved"

    assert main(["query", "select status, count(*) as n from current group by 1 order by 1", "--ledger", str(ledger),
                 "--catalog", str(catalog), "--format", "json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"status": "verified_exact", "n": 1} in lines

    assert main(["query", "delete from observations", "--ledger", str(ledger), "--catalog", str(catalog)]) == 2
    assert "only read-only queries" in capsys.readouterr().err



def _worker_api() -> dict:
    """Where a process-pool worker reports, and whether it runs a temporary server of its own."""
    import os

    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL

    return {"url": PREFECT_API_URL.value(), "own_server": SubprocessASGIServer().running, "pid": os.getpid()}


def test_process_pool_workers_use_the_flows_api():
    """Without a Prefect server each flow process serves a temporary API; a pool worker that is not
    told its address starts one of its own (5-17 s, and a core for the whole run)."""
    import os

    from prefect import flow, task

    from citeledger.run.task_runners import flow_api_url, make_task_runner, workers_report_here

    probe = task(_worker_api, name="probe")

    @flow
    def probe_flow():
        with workers_report_here(), make_task_runner("processes", dask_workers=1) as runner:
            return flow_api_url(), runner.submit(probe, {}).result()

    url, seen = probe_flow()
    assert url and seen["pid"] != os.getpid()
    assert seen["url"] == url and not seen["own_server"]


def test_process_pool_workers_report_to_the_flows_api_and_match_the_thread_runner(tmp_path, default_catalog):
    """``--task-runner processes`` gives the same observations as the thread runner, and every batch
    is a completed task run of the flow run."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    from flows.resolve import resolve_references

    refs = tmp_path / "refs.jsonl"
    lines = (Path(__file__).parent.parent / "data" / "sample_references.jsonl").read_text().splitlines()[:60]
    refs.write_text("\n".join(lines) + "\n")

    def observations(ledger):
        return duckdb.sql(f"select citing_paper, reference_index, status, work_id, observation_id from "
                          f"read_parquet('{ledger}/observations/**/*.parquet', union_by_name=true) "
                          f"order by 1, 2").fetchall()

    common = dict(inputs=[str(refs)], catalog=str(default_catalog), batch_size=20, records=False)
    resolve_references(ledger=str(tmp_path / "threads"), run_id="r", **common)
    state = resolve_references(ledger=str(tmp_path / "processes"), run_id="r", task_runner="processes",
                               dask_workers=2, return_state=True, **common)
    assert state.is_completed()
    assert observations(tmp_path / "processes") == observations(tmp_path / "threads")
    assert len(observations(tmp_path / "threads")) == 60

    with get_client(sync_client=True) as client:
        task_runs = client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[state.state_details.flow_run_id])))
    batches = [t for t in task_runs if t.name.startswith("resolve-batch")]
    assert len(batches) == 3 and all(t.state.is_completed() for t in batches)
    assert sorted(t.name for t in batches) == [f"resolve-batch-{n}-of-3-20-refs" for n in (1, 2, 3)]
    with get_client(sync_client=True) as client:
        flow_run = client.read_flow_run(state.state_details.flow_run_id)
    assert flow_run.name == "r"  # the ledger run id
    runs = duckdb.sql(f"select run_id, flow_run_id from read_parquet('{tmp_path}/processes/runs/*/*.parquet')")
    assert runs.fetchall() == [("r", str(flow_run.id))]


def test_a_failed_resolve_run_is_in_runs_with_its_message(tmp_path):
    """The resolve flow's failure hook: a run that cannot start (no catalog) is in ``runs`` as failed,
    under the flow run's name, the ledger run id."""
    from flows.resolve import resolve_references

    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"citing_paper": "p", "reference_index": 1, "raw": "Doe J. Nothing. 1999."}\n')
    state = resolve_references(inputs=[str(refs)], catalog=str(tmp_path / "none"), ledger=str(tmp_path / "ledger"),
                               run_id="broken", return_state=True)
    assert state.is_failed()
    ((run_id, finished_at, errors, flow_run_id),) = duckdb.sql(
        f"select run_id, finished_at, errors, flow_run_id from read_parquet('{tmp_path}/ledger/runs/*/*.parquet')"
    ).fetchall()
    assert (run_id, finished_at, flow_run_id) == ("broken", None, str(state.state_details.flow_run_id))
    assert "no catalog" in json.loads(errors)[0]


def test_auto_runner_takes_processes_for_large_runs_on_several_cores():
    from citeledger.run.task_runners import AUTO_PROCESSES_FROM, choose_task_runner

    assert choose_task_runner("auto", AUTO_PROCESSES_FROM, cpus=2) == "processes"
    assert choose_task_runner("auto", AUTO_PROCESSES_FROM - 1, cpus=8) == "threads"
    assert choose_task_runner("auto", 10 * AUTO_PROCESSES_FROM, cpus=1) == "threads"
    assert choose_task_runner("threads", 10 * AUTO_PROCESSES_FROM, cpus=8) == "threads"
    assert choose_task_runner("dask", 10, cpus=1) == "dask"
