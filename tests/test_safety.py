"""Safety: ids become file names safely, user SQL cannot change the ledger or read outside it,
input text is never interpolated into SQL, and input size limits are enforced with clear errors.

Decided for ``citeledger query``: one or more SELECT/EXPLAIN statements only (anything else is
refused before DuckDB runs it), on a connection that can only read files under the ledger and
catalog folders (``allowed_directories`` + ``enable_external_access=false``, then
``lock_configuration``), so ``read_csv('/etc/passwd')`` and ``COPY ... TO`` fail even inside a
SELECT-shaped statement.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeledger import pipeline
from citeledger.inputs import InputLimits, InputReject, read_references
from citeledger.store import check_run_id, run_query
from resolvers.errors import ConfigError, QueryRefused

REPO = Path(__file__).parent.parent

REFUSED = [
    "delete from observations", "DROP VIEW observations", "drop table works",
    "copy observations to '/tmp/stolen.csv'", "COPY (select * from observations) TO 'x.parquet'",
    "attach '/tmp/other.duckdb' as o", "install httpfs", "load httpfs", "pragma database_list",
    "set enable_external_access = true", "SET lock_configuration = false", "call pragma_version()",
    "export database '/tmp/dump'", "select 1; delete from observations", "select 1; drop view observations",
    "create table t as select 1", "insert into observations select * from observations",
    "update observations set status = 'x'", "vacuum", "checkpoint", "detach memory", "", "   ;  ",
]
OUTSIDE = ["select * from read_csv('/etc/passwd')", "select * from read_text('/etc/hostname')",
           "select * from read_parquet('/etc/*.parquet')", "select * from glob('/etc/*')"]


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".lock"}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, fixture_catalog):
    base = tmp_path_factory.mktemp("safety")
    path = base / "refs.jsonl"
    rows = [{"citing_paper": "p'); DROP TABLE observations; --", "reference_index": 1,
             "raw": "Robert'); DROP TABLE works;-- et al. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
            {"citing_paper": "q\"quoted\"", "reference_index": 2, "raw": "x' OR '1'='1 ; COPY works TO '/tmp/x'"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ledger = base / "led'ger"  # a quote in the path itself: paths go through sql_literal
    plan = pipeline.plan_run([path], fixture_catalog, ledger, run_id="safe")
    for job in plan.pending:
        pipeline.run_batch(job)
    pipeline.finish_run(plan)
    return ledger, fixture_catalog, rows


def test_input_text_is_stored_verbatim_never_executed(ledger):
    ledger_dir, catalog, rows = ledger
    got = run_query("select citing_paper, raw, status from observations order by reference_index",
                    ledger_dir, catalog).fetchall()
    assert [(r["citing_paper"], r["raw"]) for r in rows] == [g[:2] for g in got]
    assert got[0][2] == "verified_exact"
    assert run_query("select count(*) from works", ledger_dir, catalog).fetchall()[0][0] > 0


@pytest.mark.parametrize("sql", REFUSED)
def test_writes_and_settings_are_refused_and_the_ledger_is_unchanged(ledger, sql):
    ledger_dir, catalog, _ = ledger
    before = snapshot(ledger_dir)
    with pytest.raises((QueryRefused, duckdb.Error)):
        run_query(sql, ledger_dir, catalog).fetchall()
    assert snapshot(ledger_dir) == before
    assert run_query("select count(*) from observations", ledger_dir, catalog).fetchall() == [(2,)]


@pytest.mark.parametrize("sql", OUTSIDE)
def test_select_cannot_read_outside_the_ledger_and_catalog(ledger, sql):
    ledger_dir, catalog, _ = ledger
    with pytest.raises(duckdb.Error):
        run_query(sql, ledger_dir, catalog).fetchall()


def test_cli_query_refuses_delete_and_the_ledger_is_unchanged(ledger):
    ledger_dir, catalog, _ = ledger
    before = snapshot(ledger_dir)
    for sql in ("delete from observations", "drop view observations", "copy observations to '/tmp/x.csv'"):
        out = subprocess.run([sys.executable, "-m", "citeledger.cli", "query", sql, "--ledger", str(ledger_dir),
                              "--catalog", str(catalog)], capture_output=True, text=True, cwd=REPO, timeout=120)
        assert out.returncode != 0 and "only read-only queries" in out.stderr, out.stderr
    assert snapshot(ledger_dir) == before
    out = subprocess.run([sys.executable, "-m", "citeledger.cli", "query", "select count(*) as n from observations",
                          "--ledger", str(ledger_dir), "--catalog", str(catalog), "--format", "json"],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0 and json.loads(out.stdout) == {"n": 2}


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.sampled_from(["hep-th/9901001", "../../etc/passwd", "..", ".", "/", "",
                                                          "a" * 5000, "é/ü", "CON", ".hidden", "x\x00y"])))
def test_record_file_stem_is_a_safe_single_name(paper_id):
    stem = pipeline.record_file_stem(paper_id)
    assert stem and "/" not in stem and "\x00" not in stem and not stem.startswith(".")
    assert len(stem.encode()) <= 120 and stem.isascii()
    out = Path("/records")
    assert (out / f"{stem}.json").parent == out


@given(st.text(max_size=40), st.text(max_size=40))
def test_distinct_paper_ids_get_distinct_file_names(a, b):
    if a != b and pipeline.record_file_stem(a) == pipeline.record_file_stem(b):
        # only the leading dots that are stripped may collide (".x" and "x"): never two real ids
        assert a.lstrip(".") == b.lstrip(".") or not a.strip(".") or not b.strip(".")


@pytest.mark.parametrize("run_id", ["../x", "a/b", "..", "", "x" * 129, "ünï", "a b", "-lead", ".hidden", "a\x00"])
def test_unsafe_run_ids_are_refused(run_id):
    with pytest.raises(ConfigError):
        check_run_id(run_id)


def test_file_and_string_size_limits_are_enforced_with_clear_errors(tmp_path):
    path = tmp_path / "refs.jsonl"
    path.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "x" * 50}) + "\n")
    (reject,) = read_references(path, InputLimits(max_raw_chars=10))
    assert isinstance(reject, InputReject) and "max_raw_chars" in reject.reason and reject.field == "raw"
    (reject,) = read_references(path, InputLimits(max_file_bytes=10))
    assert isinstance(reject, InputReject) and "max_file_bytes" in reject.reason


def test_configured_file_size_limit_reaches_the_pipeline(tmp_path, fixture_catalog, monkeypatch):
    """``limits.max_input_bytes`` of the configuration (here its environment variable) is
    enforced by ``plan_run``: the file is one reject naming the limit, the run goes on."""
    monkeypatch.delenv("CITELEDGER_CONFIG", raising=False)
    monkeypatch.setenv("CITELEDGER_MAX_INPUT_BYTES", "10")
    path = tmp_path / "refs.jsonl"
    path.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "x" * 50}) + "\n")
    plan = pipeline.plan_run([path], fixture_catalog, tmp_path / "ledger", run_id="limited")
    pipeline.finish_run(plan)
    assert plan.references == 0 and len(plan.rejects) == 1 and "max_file_bytes" in plan.rejects[0].reason
