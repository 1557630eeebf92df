"""prefect.yaml checked without a server: every entrypoint loads, its parameters validate against
the flow's own signature, schedules parse (with Prefect's own schedule model: croniter is no
longer a Prefect dependency), every deployment goes to the one process work pool."""
from pathlib import Path

import pytest
import yaml
from prefect.client.schemas.schedules import CronSchedule
from prefect.flows import load_flow_from_entrypoint
from prefect.utilities.callables import parameter_schema
from prefect.utilities.schema_tools import validate

REPO = Path(__file__).parent.parent
CONFIG = yaml.safe_load((REPO / "prefect.yaml").read_text())
DEPLOYMENTS = {d["name"]: d for d in CONFIG["deployments"]}
FLOW_NAMES = {"nightly": "nightly", "resolve": "resolve-references", "refresh-catalog": "refresh-catalog",
              "build-records": "build-records"}


def test_the_four_deployments_are_there():
    assert set(DEPLOYMENTS) == set(FLOW_NAMES)


@pytest.mark.parametrize("name", sorted(FLOW_NAMES))
def test_entrypoint_loads_and_parameters_validate(name, monkeypatch):
    monkeypatch.chdir(REPO)  # entrypoints are relative to the project root, as for the worker
    deployment = DEPLOYMENTS[name]
    flow = load_flow_from_entrypoint(deployment["entrypoint"])
    assert flow.name == FLOW_NAMES[name]
    schema = parameter_schema(flow).model_dump_for_openapi()
    params = deployment.get("parameters", {})
    assert set(params) <= set(schema["properties"]), f"unknown parameters {set(params) - set(schema['properties'])}"
    assert validate(params, schema, raise_on_error=False) == []
    # the check can fail: a wrong type is refused
    if "remote" in params:
        assert validate({**params, "remote": "sometimes"}, schema) != []


def test_the_resolve_deployment_takes_inputs_catalog_ledger_remote():
    assert {"inputs", "catalog", "ledger", "remote"} <= set(DEPLOYMENTS["resolve"]["parameters"])
    assert not DEPLOYMENTS["resolve"].get("schedules")  # manual


def test_nightly_schedule_and_concurrency():
    nightly = DEPLOYMENTS["nightly"]
    assert nightly["concurrency_limit"] == 1
    (schedule,) = nightly["schedules"]
    parsed = CronSchedule(cron=schedule["cron"], timezone=schedule["timezone"])  # raises when either is wrong
    assert parsed.timezone == "Europe/Berlin" and schedule["cron"].split()[:2] == ["30", "2"]
    with pytest.raises(ValueError):
        CronSchedule(cron=schedule["cron"], timezone="Europe/Atlantis")
    with pytest.raises(ValueError):
        CronSchedule(cron="30 25 * * *", timezone=schedule["timezone"])
    assert nightly["parameters"]["remote"] is False  # no network unless someone turns it on


def test_every_deployment_uses_the_process_pool():
    pools = CONFIG["definitions"]["work_pools"]
    for d in DEPLOYMENTS.values():
        assert d["work_pool"]["name"] == "citeledger" and d["work_pool"] in pools.values()
    assert CONFIG["pull"][0]["prefect.deployments.steps.set_working_directory"]["directory"]


@pytest.mark.parametrize("name", ["nightly", "resolve"])
def test_parameters_are_described_typed_and_bounded(name, monkeypatch):
    """Prefect's form shows a description for every parameter, offers the task runners as a choice
    and refuses a bad one (or a batch size out of bounds) before a run exists."""
    monkeypatch.chdir(REPO)
    flow = load_flow_from_entrypoint(DEPLOYMENTS[name]["entrypoint"])
    schema = parameter_schema(flow).model_dump_for_openapi()
    props = schema["properties"]
    assert [p for p, spec in props.items() if not spec.get("description")] == []
    runner = schema["definitions"].get("task_runner") or props["task_runner"]
    assert set(runner.get("enum", [])) == {"auto", "threads", "processes", "dask"}
    assert props["batch_size"]["minimum"] == 1 and props["dask_workers"]["minimum"] == 1
    params = DEPLOYMENTS[name].get("parameters", {})
    for bad in ({"task_runner": "bogus"}, {"batch_size": 0}, {"dask_workers": 0}):
        assert validate({**params, **bad}, schema, raise_on_error=False) != []


def test_one_batch_size_default_everywhere():
    from citeledger.cli.arguments import build_parser
    from citeledger.config import ResourceLimits
    from citeledger.run.planning import DEFAULT_BATCH_SIZE
    from flows.nightly import nightly
    from flows.resolve import resolve_references

    assert ResourceLimits().batch_size == DEFAULT_BATCH_SIZE
    for flow in (nightly, resolve_references):
        assert parameter_schema(flow).model_dump_for_openapi()["properties"]["batch_size"]["default"] == DEFAULT_BATCH_SIZE
    for command in ("resolve", "nightly"):  # without --batch-size: limits.batch_size of the configuration
        assert build_parser().parse_args([command, *(["x.jsonl"] if command == "resolve" else [])]).batch_size is None
    assert f"| `batch_size` | `CITELEDGER_BATCH_SIZE` | {DEFAULT_BATCH_SIZE} |" in (REPO / "docs" / "reference" / "configuration.md").read_text()


def test_the_nightly_timeout_is_a_setting(monkeypatch):
    from flows.flow_options import NightlySettings
    from flows.nightly import nightly  # loaded before the environment changes below, as a worker loads it

    loaded = NightlySettings().timeout_seconds  # what the flow got when this process loaded it
    monkeypatch.delenv("CITELEDGER_NIGHTLY_TIMEOUT_SECONDS", raising=False)
    assert NightlySettings().timeout_seconds == 6 * 3600
    monkeypatch.setenv("CITELEDGER_NIGHTLY_TIMEOUT_SECONDS", "90")
    assert NightlySettings().timeout_seconds == 90
    monkeypatch.setenv("CITELEDGER_NIGHTLY_TIMEOUT_SECONDS", "0")
    with pytest.raises(ValueError):
        NightlySettings()
    assert nightly.timeout_seconds == loaded
