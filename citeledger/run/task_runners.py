"""Task runners for the resolve and nightly flows, chosen by a flow parameter.

``auto`` (the default) is ``processes`` for runs of 20,000 references or more on a machine with two
cores or more, else ``threads`` (``choose_task_runner``).
``threads`` keeps the flow's own thread pool: one process, one catalog index.
``processes`` uses Prefect's process pool on this machine: ``dask_workers`` processes, each
loading the catalog index once, for CPU-bound resolution on several cores without a cluster; the
workers report to the flow's own API (``workers_report_here``), never to servers of their own.
``dask`` fans the batches out over a Dask cluster through prefect-dask: at ``dask_address`` (an
existing scheduler, e.g. ``tcp://10.0.0.5:8786``) or a temporary local cluster of
``dask_workers`` single-threaded worker processes. Each worker process loads the catalog index
once (``process_cache.get_catalog``/``get_fuzzy`` cache per process) and writes its own part files
into the one ledger, whose layout (one file per batch, renamed into place) needs no coordination.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Literal, get_args

from resolvers.errors import ConfigError

# the flows' parameter type: Prefect's form offers these and refuses anything else
TaskRunnerName = Literal["auto", "threads", "processes", "dask"]
TASK_RUNNERS: tuple[str, ...] = get_args(TaskRunnerName)
# ``auto`` takes the process pool from this many references to resolve: below it, starting the
# workers (about 5 s each: Prefect's import, the catalog index) costs more than a second core gains
# (1M-work catalog, 2 cores: threads 738 references/s, processes 1,092-1,173).
AUTO_PROCESSES_FROM = 20_000


def choose_task_runner(task_runner: str, references: int, cpus: int | None = None, remote: bool = False) -> str:
    """The runner ``auto`` stands for: ``processes`` for a run of at least AUTO_PROCESSES_FROM
    references on a machine with two cores or more, else ``threads``. Others stay as given.

    A run with remote resolvers on keeps its batches in the threads of one process (``auto`` and
    ``processes`` both give ``threads``; ``dask`` is refused): each service's rate limit, circuit
    breaker and the run's search budget are objects of one process, shared by its threads, and a
    pool of N processes would send N times the configured rate (the services' limits are per
    client, and waiting on the network needs no second core)."""
    if remote:
        if task_runner == "dask":
            raise ConfigError("remote resolvers run in one process so their rate limits hold: "
                              "use --task-runner threads (or auto) with --remote")
        return "threads"
    if task_runner != "auto":
        return task_runner
    import os

    cpus = os.cpu_count() if cpus is None else cpus
    return "processes" if references >= AUTO_PROCESSES_FROM and (cpus or 1) >= 2 else "threads"


def make_task_runner(task_runner: str = "threads", dask_address: str | None = None,
                     dask_workers: int = 2) -> Any:
    """None for ``threads`` (use the flow's own runner), else a ``ProcessPoolTaskRunner`` or a
    ``DaskTaskRunner`` (``auto`` is resolved by ``choose_task_runner`` first)."""
    if task_runner == "threads":
        return None
    if task_runner == "processes":
        if dask_workers < 1:
            raise ConfigError("dask_workers must be >= 1")
        from prefect.task_runners import ProcessPoolTaskRunner

        from citeledger.processes import die_with_parent

        return ProcessPoolTaskRunner(max_workers=dask_workers, initializer=die_with_parent)
    if task_runner != "dask":
        raise ConfigError(f"task_runner must be one of {TASK_RUNNERS}, not {task_runner!r}")
    from prefect_dask import DaskTaskRunner

    if dask_address:
        return DaskTaskRunner(address=dask_address)
    if dask_workers < 1:
        raise ConfigError("dask_workers must be >= 1")
    # resolution is CPU-bound Python: one thread per worker process, workers = cores to use
    return DaskTaskRunner(cluster_kwargs={"n_workers": dask_workers, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": None, "env": worker_env()})


def flow_api_url() -> str | None:
    """The Prefect API this process reports to: ``PREFECT_API_URL``, else the address of the
    temporary server Prefect started in this process (none outside a flow run)."""
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        from prefect.server.api.server import SubprocessASGIServer

        server = SubprocessASGIServer()  # the temporary server of this process (a singleton)
        if server.running:
            url = server.api_url
    return url or None


def worker_env() -> dict[str, str]:
    """The environment of local worker processes. Without ``PREFECT_API_URL`` (a flow run outside
    a server) Prefect serves a temporary API in this process; a worker process that does not know
    its address starts one of its own (5-17 s each on 2 cores, and a third and fourth Python
    process competing for the cores for the rest of the run) and reports its task runs through it.
    So hand the workers this process's API address."""
    import os

    env = {k: v for k, v in os.environ.items() if k.startswith("PREFECT_") or k == "DO_NOT_TRACK"}
    url = flow_api_url()
    if url:
        env["PREFECT_API_URL"] = url
    return env


@contextmanager
def workers_report_here() -> Iterator[None]:
    """While the process pool runs, the settings its workers inherit name this process's API
    (``ProcessPoolTaskRunner`` hands each task the current settings as environment variables)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    url = flow_api_url()
    if not url or PREFECT_API_URL.value() == url:
        yield
        return
    with temporary_settings(updates={PREFECT_API_URL: url}):
        yield
