"""Planning a run reads the configuration once: the input limits, the GROBID client and arXiv's
client all come from that one load (before: three loads, four with ``--remote``)."""
from __future__ import annotations

from pathlib import Path

import pytest

import citeledger.config as config_module
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.inputs.pdf_papers import forget_clients
from citeledger.run import finishing, planning

REPO = Path(__file__).parent.parent


@pytest.fixture
def loads(monkeypatch):
    """How many times the configuration was loaded (every load reads its file, or finds none)."""
    count = []
    real = config_module.read_config_file
    monkeypatch.setattr(config_module, "read_config_file", lambda file: count.append(file) or real(file))
    forget_clients()  # the arXiv client is built (once per process) from the loaded configuration
    yield count
    forget_clients()


@pytest.mark.parametrize("remote", [False, True], ids=["local", "remote"])
def test_plan_run_loads_the_configuration_once(loads, tmp_path, monkeypatch, remote):
    monkeypatch.setenv("CITELEDGER_REMOTE", "arxiv")
    monkeypatch.setenv("CITELEDGER_ARXIV_URL", "http://127.0.0.1:9/api/query")  # never asked: nothing is resolved
    catalog, ledger = tmp_path / "catalog", tmp_path / "ledger"
    CatalogStore(catalog).build([REPO / "tests" / "fixtures" / "grobid" / "cited_works.jsonl"])
    loads.clear()
    plan = planning.plan_run([REPO / "data" / "sample_references.jsonl"], catalog, ledger, remote=remote)
    finishing.abandon_run(plan)
    assert plan.references > 0 and len(loads) == 1
