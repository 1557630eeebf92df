"""Test settings. Prefect's settings must be in the environment before anything imports prefect:
a temporary PREFECT_HOME (or cached results leak between runs), a generous start-up timeout for
its temporary API server on 2-core machines, and no analytics."""
import atexit
import os
import shutil
import tempfile

os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="citeledger-prefect-")
atexit.register(shutil.rmtree, os.environ["PREFECT_HOME"], True)  # the session's own, gone with it
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

pytest_plugins = ["record_writer_check"]  # every record a test writes: its JSON and JCS bytes checked

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
REPO = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def each_test_starts_clean():
    """What one process keeps between the commands a user runs in it (the ledger locks it holds,
    the runs it was stopped in) is given back after each test: one test's interrupted run is not
    the next test's."""
    yield
    from citeledger.run.planning import forget_interrupted_runs
    from citeledger.storage.locking import release_all_ledgers

    release_all_ledgers()
    forget_interrupted_runs()


@pytest.fixture(scope="session")
def fixture_catalog(tmp_path_factory) -> Path:
    """A small catalog built once from the fixture files of every work format."""
    from citeledger.catalog.catalog_store import CatalogStore

    directory = tmp_path_factory.mktemp("catalog")
    CatalogStore(directory).build(sorted((FIXTURES / "catalog").glob("*.jsonl")))
    return directory


@pytest.fixture(scope="session")
def default_catalog(tmp_path_factory) -> Path:
    """The embedded default catalog of data/sources, built into a temporary folder."""
    from citeledger.catalog.catalog_store import CatalogStore

    directory = tmp_path_factory.mktemp("default-catalog")
    CatalogStore(directory).build(sorted((REPO / "data" / "sources").glob("*")))
    return directory


def pytest_collection_finish(session) -> None:
    """When a collected test is marked ``flow``, start this process's temporary Prefect API server
    now, in a thread: it takes 20-30 s on a 2-core machine (a new process importing Prefect's
    server and migrating the session's new database), which then overlap the tests before the
    first flow instead of stalling it. The server is the one Prefect starts for a flow run here
    anyway (a singleton), under the CLI's parent watchdog; any other caller of its ``start``
    waits for this thread first, so nobody uses it before it answers."""
    if session.config.option.collectonly or not any(item.get_closest_marker("flow") for item in session.items):
        return
    from prefect.server.api.server import SubprocessASGIServer

    from citeledger.cli.prefect_env import watch_parent

    watch_parent()  # the server dies with this process, as a CLI flow run's does
    starter = threading.Thread(target=lambda: SubprocessASGIServer().start(), daemon=True,
                               name="prefect-server-start")
    real_start = SubprocessASGIServer.start

    def start(self, timeout=None):
        if threading.current_thread() is not starter:
            starter.join()
        return real_start(self, timeout)

    SubprocessASGIServer.start = start  # type: ignore[method-assign]
    starter.start()
