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
