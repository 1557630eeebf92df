"""What the flows share: their parameter types (Prefect's form offers the choices and bounds, and
refuses other values before a run is created), the nightly's settings, the flow run's identity
(named by the ledger run id), the failure hook that writes a failed run into the ledger, and the
reports a flow run leaves in the Prefect UI (a markdown artifact, tables)."""
from __future__ import annotations

import inspect
from typing import Annotated, Any

from prefect import get_client
from prefect.artifacts import MarkdownArtifact
from prefect.context import FlowRunContext
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from citeledger.run.finishing import record_failure
from citeledger.run.task_runners import TaskRunnerName
from resolvers.redaction import redact

TaskRunner = TaskRunnerName  # auto | threads | processes | dask
BatchSize = Annotated[int, Field(ge=1, le=1_000_000)]
Workers = Annotated[int, Field(ge=1, le=256)]
MaxRawChars = Annotated[int, Field(ge=100, le=100_000_000)]


class NightlySettings(BaseSettings):
    """The nightly flow's settings an operator changes without a code change, from the
    environment of the worker (or of a deployment: ``job_variables.env`` in prefect.yaml).
    Read when the flow is loaded, i.e. at the start of every flow run a worker starts."""

    model_config = SettingsConfigDict(env_prefix="CITELEDGER_NIGHTLY_", extra="ignore")

    # a night that runs longer is failed (TimedOut), given up and resumed by the next night
    timeout_seconds: float = Field(default=6 * 3600, gt=0)


def this_flow_run() -> tuple[str, str | None]:
    """The current flow run's name (the ledger run id, see ``flow_run_name``) and id."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise RuntimeError("this_flow_run: not inside a flow run")
    return context.flow_run.name, str(context.flow_run.id)


def rename_flow_run(name: str) -> None:
    """Name the current flow run after the ledger run it turned out to be (a resumed run keeps
    its first id); the failure hook then records the failure under that id."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None or context.flow_run.name == name:
        return
    with get_client(sync_client=True) as client:
        client.set_flow_run_name(context.flow_run.id, name)
    context.flow_run.name = name


def record_failed_run(flow: Any, flow_run: Any, state: Any) -> None:
    """``on_failure`` hook: the failure (a failed step, a timeout) as the run's row in the ledger's
    ``runs`` (``finished_at`` null, ``errors`` the message) and as a markdown artifact. Only a flow
    run named by a ledger run id (``<trigger>-...``) writes to the ledger: a run that failed before
    it got its name (its parameters refused) has no ledger run; nor does a night whose ledger lies
    outside the nightly's roots (its artifact says so)."""
    logger = flow_run_logger(flow_run, flow)
    trigger = "nightly" if flow.name == "nightly" else "resolve"
    message = redact(state.message or state.name)  # a failed step's message may name a URL with credentials
    ledger = flow_run.parameters.get("ledger") or _default(flow, "ledger")
    lines = [f"# citeledger {flow.name} failed", "", f"flow run `{flow_run.name}`: {state.name}", "",
             f"    {message}"]
    if trigger == "nightly" and not _confined(ledger):  # a ledger given outside the nightly's roots: not written
        lines += ["", f"ledger `{ledger}` is outside the nightly's roots (`nightly.roots`): the failure is not "
                      "written there"]
    elif flow_run.name.startswith(("nightly-", "run-")) or flow_run.parameters.get("run_id") == flow_run.name:
        try:
            record_failure(ledger, flow_run.name, message, trigger, str(flow_run.id))
            lines += ["", f"`runs` of ledger `{ledger}`: run `{flow_run.name}` failed (finished_at null); "
                          "the next run resumes it"]
        except Exception as exc:  # noqa: BLE001 - the hook reports; it must not hide the failure itself
            logger.warning("could not write the failure into ledger %s: %s", ledger, exc)
    try:
        MarkdownArtifact(markdown="\n".join(lines), key=f"{flow.name}-failure",
                         description=f"citeledger {flow.name} {flow_run.name} failed",
                         flow_run_id=flow_run.id).create()
    except Exception as exc:  # noqa: BLE001 - as above
        logger.warning("could not write the failure artifact: %s", exc)


def _confined(ledger: str) -> bool:
    """Whether a nightly's ledger lies under the configured ``nightly.roots``."""
    from citeledger.config import load_config
    from citeledger.nightly.folders import within_roots

    return within_roots(ledger, load_config().nightly_roots)


def flow_run_logger(flow_run: Any, flow: Any) -> Any:
    from prefect.logging.loggers import flow_run_logger as prefect_logger

    return prefect_logger(flow_run=flow_run, flow=flow)


def _default(flow: Any, name: str) -> Any:
    return inspect.signature(flow.fn).parameters[name].default


def publish_artifact(markdown: str, key: str, description: str, logger: Any) -> None:
    """A flow run's markdown report in the Prefect UI; a report never fails a run."""
    try:
        from prefect.artifacts import create_markdown_artifact

        create_markdown_artifact(markdown=markdown, key=key, description=description)
    except Exception as exc:  # noqa: BLE001 - an artifact is a report, never a reason to fail a run
        logger.warning("could not write the run artifact: %s", exc)


def publish_table(rows: list[dict[str, Any]], key: str, description: str, logger: Any) -> None:
    """A flow run's table (a list of rows) in the Prefect UI; a report never fails a run."""
    try:
        from prefect.artifacts import create_table_artifact

        create_table_artifact(table=rows, key=key, description=description)
    except Exception as exc:  # noqa: BLE001 - an artifact is a report, never a reason to fail a run
        logger.warning("could not write the %s table: %s", key, exc)
