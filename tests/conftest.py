"""Test settings. Prefect's settings must be in the environment before anything imports prefect:
a temporary PREFECT_HOME (or cached results leak between runs), a generous start-up timeout for
its temporary API server on 2-core machines, and no analytics."""
import os
import tempfile

os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="citeledger-prefect-")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

pytest_plugins = ["record_writer_check"]  # every record a test writes: its JSON and JCS bytes checked

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
REPO = Path(__file__).parent.parent


@pytest.fixture(scope="session")
def fixture_catalog(tmp_path_factory) -> Path:
    """A small catalog built once from the fixture files of every work format."""
    from citeledger.catalog import CatalogStore

    directory = tmp_path_factory.mktemp("catalog")
    CatalogStore(directory).build(sorted((FIXTURES / "catalog").glob("*.jsonl")))
    return directory


@pytest.fixture(scope="session")
def default_catalog(tmp_path_factory) -> Path:
    """The embedded default catalog of data/sources, built into a temporary folder."""
    from citeledger.catalog import CatalogStore

    directory = tmp_path_factory.mktemp("default-catalog")
    CatalogStore(directory).build(sorted((REPO / "data" / "sources").glob("*")))
    return directory
