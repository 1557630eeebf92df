"""Start-up as a budget: what a read-only command imports, read from ``python -X importtime`` (module
names, never times, so a loaded machine cannot fail it). ``citeledger query`` loads no catalog
builder, no Prefect, no pydantic and no pyarrow; ``runs`` no catalog and no writer; no module does
work at import that a command pays for without using it (benchmarks/bench_cli.py has the times)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citeledger.ledger import views
from citeledger.ledger.ledger_store import PITH_OBSERVATION_SCHEMA, PITH_RECORD_SCHEMA, arrow_schema
from citeledger.pith import pith_reader

REPO = Path(__file__).parent.parent
REFS = ('{"citing_paper": "p", "reference_index": 1, "raw": "Yuri N. Kartashov, Invariance principle for additive '
        'functionals of Markov chains, arXiv preprint arXiv:0704.0508, 2007."}\n')


RUN = """import json, runpy, sys
sys.argv = ["citeledger", *json.loads(sys.argv[1])]
code = 0
try:
    runpy.run_module("citeledger.cli", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
sys.stderr.write("loaded modules: " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""


def imported(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> set[str]:
    """Every module ``citeledger ARGV`` loaded, run under ``python -X importtime`` (whose lines also
    list imports that were tried and failed, so the modules loaded are read from ``sys.modules`` at
    the end); the command must succeed."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", RUN, json.dumps(argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in (env or os.environ).items() if not k.startswith("CITELEDGER_")})
    assert done.returncode == 0, done.stderr[-2000:]
    tried = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    loaded = set(json.loads(done.stderr.split("loaded modules: ", 1)[1].splitlines()[0]))
    assert "citeledger.cli.entry" in tried & loaded
    return loaded


def roots(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, default_catalog) -> Path:
    root = tmp_path_factory.mktemp("startup")
    (root / "refs.jsonl").write_text(REFS)
    done = subprocess.run([sys.executable, "-m", "citeledger.cli", "resolve", "refs.jsonl", "--catalog",
                           str(default_catalog), "--ledger", "ledger"], cwd=root, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return root / "ledger"


def test_query_imports_no_builder_prefect_pydantic_or_pyarrow(ledger, default_catalog, tmp_path):
    modules = imported(["query", "select status, count(*) from current group by 1", "--ledger", str(ledger),
                        "--catalog", str(default_catalog)], tmp_path)
    assert "duckdb" in modules and "citeledger.ledger.query" in modules
    assert not roots(modules) & {"prefect", "pydantic", "pydantic_settings", "pyarrow", "numpy", "httpx", "rich",
                                 "jsonschema", "cryptography"}
    assert not {m for m in modules if m.startswith(("citeledger.catalog", "citeledger.index", "citeledger.sources",
                                                    "citeledger.ledger.ledger_store", "citeledger.engine", "papers.reader"))}


def test_a_query_of_a_big_view_reads_it_through_pyarrow(ledger, default_catalog, tmp_path):
    """The embedded catalog's works table passes ``STREAM_BYTES``: a query naming it reads it as a
    pyarrow dataset (only the columns it needs); one that does not name it loads no pyarrow."""
    from citeledger.ledger.query import STREAM_BYTES

    works = next(default_catalog.glob("gen-*/works.parquet"))
    assert works.stat().st_size > STREAM_BYTES
    modules = imported(["query", "select count(*) from current join works using (work_id)", "--ledger", str(ledger),
                        "--catalog", str(default_catalog)], tmp_path)
    assert "pyarrow.dataset" in modules and not roots(modules) & {"prefect", "pydantic"}


def test_settings_of_paths_only_load_no_model(ledger, default_catalog, tmp_path):
    (tmp_path / "citeledger.toml").write_text(f'ledger = "{ledger}"\ncatalog = "{default_catalog}"\n')
    modules = imported(["query", "select count(*) from current"], tmp_path)
    assert "citeledger.config" in modules and not roots(modules) & {"pydantic", "pydantic_settings"}
    (tmp_path / "citeledger.toml").write_text(f'ledger = "{ledger}"\n[query]\ntimeout_seconds = 30\n')
    assert "citeledger.config_model" in imported(["query", "select 1"], tmp_path)  # a value the model checks


def test_runs_reads_the_ledger_without_the_writer(ledger, tmp_path):
    modules = imported(["runs", "--ledger", str(ledger)], tmp_path)
    assert not roots(modules) & {"prefect", "pydantic", "pyarrow", "numpy", "httpx", "jsonschema"}
    assert not {m for m in modules if m.startswith(("citeledger.catalog", "citeledger.ledger.ledger_store"))}


def test_record_loads_no_schema_library_builder_or_remote(ledger, default_catalog, tmp_path):
    """``citeledger record`` opens the catalog and reads the ledger: no jsonschema (the builder's
    records are validated by the tests), no cryptography for a ledger without a key, no Arrow
    compute kernels or datasets, no HTTP clients, no catalog builder, no Pith reader without an import."""
    modules = imported(["record", "p", "--ledger", str(ledger), "--catalog", str(default_catalog)], tmp_path)
    assert "citeledger.records.record_files" in modules and "duckdb" in modules
    assert not roots(modules) & {"prefect", "pydantic", "pydantic_settings", "jsonschema", "cryptography", "httpx",
                                 "rich", "pandas"}
    assert not modules & {"pyarrow.compute", "pyarrow.dataset", "citeledger.catalog.extract_parts", "citeledger.index.terms",
                          "citeledger.pith.pith_reader", "citeledger.ledger.pith_rows", "resolvers.remote.http"}


def test_a_one_reference_run_loads_no_remote_clients_or_schema_library(default_catalog, tmp_path):
    """A one-reference ``resolve`` (no --remote) loads no HTTP clients, no schema library (a write of
    a few records validates none: ``records.record_files.validated``), no cryptography without a key, no
    Prefect, no settings model, no catalog builder."""
    (tmp_path / "one.jsonl").write_text(REFS)
    modules = imported(["resolve", "one.jsonl", "--catalog", str(default_catalog), "--ledger", "ledger"], tmp_path)
    assert "citeledger.run.batches" in modules and "citeledger.records.record_files" in modules
    assert not roots(modules) & {"prefect", "pydantic", "pydantic_settings", "jsonschema", "cryptography", "httpx",
                                 "rich", "click", "pygments"}
    assert not modules & {"citeledger.catalog.extract_parts", "citeledger.index.terms", "resolvers.remote.http",
                          "resolvers.remote.search", "citeledger.pith.pith_reader"}


def test_help_and_version_load_nothing_heavy(tmp_path):
    for argv in (["--help"], ["--version"], ["query", "--version"][-1:]):
        assert not roots(imported(argv, tmp_path)) & {"duckdb", "pyarrow", "prefect", "pydantic", "numpy"}


def test_the_pith_columns_are_the_pith_reader_s():
    """``views`` says the Pith rows' columns without importing the Pith reader; they are its columns, in order."""
    named = PITH_OBSERVATION_SCHEMA.names
    assert named[:len(pith_reader.LEDGER_COLUMNS)] == list(pith_reader.LEDGER_COLUMNS)
    assert named[len(pith_reader.LEDGER_COLUMNS):][:len(pith_reader.PITH_COLUMNS)] == list(pith_reader.PITH_COLUMNS)
    assert PITH_RECORD_SCHEMA == arrow_schema(views.PITH_RECORD_COLUMNS)


def test_streams_and_datasets_give_the_same_answers(ledger, default_catalog, monkeypatch):
    """A view read as an Arrow stream (small) and as a pyarrow dataset (big) answers alike."""
    from citeledger.ledger import query

    sqls = ["select status, reason, count(*) from current group by all order by all",
            "select c.work_id, w.title from current c join works w using (work_id) order by 1",
            "select count(*), max(checked_at) is not null from notices", "select run_id, \"references\" from runs",
            "select * from transitions", "select count(*) from rejects", "select count(*) from pith_observations"]

    def answers(stream_bytes: int) -> list:
        monkeypatch.setattr(query, "STREAM_BYTES", stream_bytes)
        return [query.run_query(sql, ledger, default_catalog).fetchall() for sql in sqls]

    assert answers(0) == answers(1 << 40)
