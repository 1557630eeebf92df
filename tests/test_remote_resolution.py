"""Remote resolvers inside the resolve pipeline, against a real local server replaying recorded
payloads: identifiers missing from the catalog become links, a stopped server makes them
``unavailable`` (never ``unresolved``), and the next run resolves them once it is back."""
from __future__ import annotations

import json

import pytest
from remote_server import fixture_bytes, fixture_json, server  # noqa: F401

from citeledger.catalog.catalog_store import ParquetCatalog
from citeledger.engine import process_cache as workers
from citeledger.ledger.query import run_query
from citeledger.run import batches, finishing, planning

ATOM = "application/atom+xml; charset=utf-8"
REFS = [
    {"citing_paper": "p", "reference_index": 1,
     "raw": "Vaswani A, et al. Attention is all you need. NeurIPS 2017. arXiv:1706.03762"},
    {"citing_paper": "p", "reference_index": 2,
     "raw": "Xu S et al. Org. Lett. 2019, 21, 9, 3234. https://doi.org/10.1021/acs.orglett.9b00971"},
    {"citing_paper": "p", "reference_index": 3,
     "raw": "Sparsity-certifying graph decompositions. arXiv:0704.0002"},
]


@pytest.fixture
def remote_env(server, tmp_path, monkeypatch):
    config = tmp_path / "citeledger.toml"
    config.write_text(f"""
[remote]
enabled = ["arxiv", "crossref"]
mailto = "tests@example.org"
[remote.arxiv]
min_interval_seconds = 0.0
retries = 1
backoff_base_seconds = 0.01
timeout_seconds = 2.0
[remote.crossref]
min_interval_seconds = 0.0
retries = 1
backoff_base_seconds = 0.01
timeout_seconds = 2.0
[endpoints]
arxiv_api = "{server.url_for('/api/query')}"
crossref_api = "{server.url_for('').rstrip('/')}"
""")
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    workers.clear_caches()  # a fresh remote resolver (and its cache) for this configuration
    yield server
    workers.clear_caches()


def serve_payloads(server):
    server.expect_request("/api/query", query_string={"id_list": "1706.03762", "start": "0", "max_results": "1"}) \
        .respond_with_data(fixture_bytes("arxiv/api_2026-07_new_1706.03762_attention.xml"), content_type=ATOM)
    server.expect_request("/works/10.1021/acs.orglett.9b00971").respond_with_json(
        fixture_json("crossref/works_10.1021_acs.orglett.9b00971_typical.json"))


def run(tmp_path, catalog, run_id, remote=True):
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in REFS))
    plan = planning.plan_run([path], catalog, tmp_path / "ledger", run_id=run_id, remote=remote)
    for job in plan.pending:
        batches.run_batch(job)
    finishing.finish_run(plan)
    return {r[0]: r[1:] for r in run_query(
        f"select reference_index, status, resolver_source, work_id, evidence from observations "
        f"where run_id = '{run_id}'", tmp_path / "ledger", catalog).fetchall()}


def copy_catalog(fixture_catalog, tmp_path):
    import shutil

    target = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, target)
    return target


def test_identifiers_missing_from_the_catalog_resolve_remotely(remote_env, tmp_path, fixture_catalog):
    serve_payloads(remote_env)
    catalog = copy_catalog(fixture_catalog, tmp_path)
    got = run(tmp_path, catalog, "r1")
    assert got[1][:3] == ("verified_exact", "arxiv_api", "arxiv:1706.03762")
    assert got[2][:3] == ("verified_exact", "crossref_api", "doi:10.1021/acs.orglett.9b00971")
    assert got[3][:3] == ("verified_exact", "arxiv_id", "arxiv:0704.0002")  # the catalog answered
    # fetched works joined the catalog: the next run asks nobody
    cat = ParquetCatalog(catalog)
    assert cat.works_by_arxiv_id(["1706.03762"])["1706.03762"].title == "Attention Is All You Need"
    remote_env.clear()
    got = run(tmp_path, catalog, "r2")
    assert [got[i][:2] for i in (1, 2)] == [("verified_exact", "arxiv_id"), ("verified_exact", "doi")]
    assert len(remote_env.log) == 0


def test_stopped_server_means_unavailable_then_resolved_next_run(remote_env, tmp_path, fixture_catalog):
    catalog = copy_catalog(fixture_catalog, tmp_path)
    remote_env.stop()
    got = run(tmp_path, catalog, "down")
    assert got[1][0] == "unavailable" and got[2][0] == "unavailable"
    assert json.loads(got[1][3])["failed"]["1706.03762"]
    assert got[3][0] == "verified_exact"  # references the catalog settles need no remote
    remote_env.start()
    serve_payloads(remote_env)
    workers.clear_caches()  # a new process on the next night
    got = run(tmp_path, catalog, "back")
    assert got[1][0] == "verified_exact" and got[2][0] == "verified_exact"


def test_not_found_remotely_is_unresolved_not_unavailable(remote_env, tmp_path, fixture_catalog):
    remote_env.expect_request("/api/query").respond_with_data(
        fixture_bytes("arxiv/api_2025-11_new_idlist_nonexistent.xml"), content_type=ATOM)
    remote_env.expect_request("/works/10.1021/acs.orglett.9b00971").respond_with_data(
        fixture_bytes("crossref/works_404_body.txt"), status=404, content_type="text/plain")
    remote_env.expect_request("/works/10.1021/acs.orglett.9b00971/agency").respond_with_data(
        fixture_bytes("crossref/works_404_body.txt"), status=404, content_type="text/plain")
    got = run(tmp_path, copy_catalog(fixture_catalog, tmp_path), "r1")
    assert got[1][0] == "unresolved" and got[2][0] == "unresolved"


def test_default_configuration_opens_no_connection(tmp_path, fixture_catalog, monkeypatch):
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.delenv("CITELEDGER_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    workers.clear_caches()
    got = run(tmp_path, fixture_catalog, "offline", remote=False)
    assert got[1][0] == "unresolved" and got[3][0] == "verified_exact"
