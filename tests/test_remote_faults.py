"""Remote faults at volume against a local server: bursts of 429 and 5xx, slow answers, truncated
and garbled bodies, wrong content types. The run finishes; every reference whose service failed
is ``unavailable`` with the reason in ``evidence``; only a real "no such work" is ``unresolved``.

Each DOI names its fault (``10.5555/fault.<kind>.<n>``) so the expected state of every row is
known. Batches of one reference keep one fault from deciding its neighbours (a service that
fails mid-batch leaves the rest of that batch unavailable too, by design).
"""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from remote_server import Holding, fixture_bytes, server  # noqa: F401  # noqa: F401
from werkzeug.wrappers import Response

from citeledger.engine import process_cache as workers
from citeledger.ledger.query import run_query
from citeledger.run import batches, finishing, planning

CROSSREF_FAULTS = ("e500", "e502", "e503", "e429", "slow", "truncated", "html", "badjson", "garbled", "nomessage")
ARXIV_FAULTS = {"2301.00001": "e503", "2301.00002": "html", "2301.00003": "truncated", "2301.00004": "e400garbage",
                "2301.00005": "e429", "2301.00006": "notatom"}
PER_KIND = 4
HELD = Holding()


def crossref_message(doi: str) -> dict:
    return {"DOI": doi, "title": [f"Work {doi}"], "author": [{"family": "Doe"}], "issued": {"date-parts": [[2020]]},
            "container-title": ["Journal"], "type": "journal-article"}


def crossref_handler(request):
    doi = request.path.split("/works/", 1)[1].removesuffix("/agency")
    kind = doi.split(".")[2] if doi.startswith("10.5555/fault.") else "ok"
    if kind == "ok":
        return Response(json.dumps({"status": "ok", "message": crossref_message(doi)}), content_type="application/json")
    if kind == "missing":
        return Response("Resource not found.", status=404, content_type="text/plain")
    if kind.startswith("e"):
        headers = {"Retry-After": "0"} if kind == "e429" else {}
        return Response("busy", status=int(kind[1:]), headers=headers, content_type="text/plain")
    if kind == "slow":
        HELD.hold()  # answers only after the client's timeout, however loaded the machine
        return Response(json.dumps({"message": crossref_message(doi)}), content_type="application/json")
    if kind == "truncated":
        body = json.dumps({"message": crossref_message(doi)})
        return Response(body[: len(body) // 2], content_type="application/json")
    if kind == "html":
        return Response("<html><body>Service maintenance</body></html>", content_type="text/html")
    if kind == "badjson":
        return Response("{'message': nope", content_type="application/json")
    if kind == "garbled":
        return Response(json.dumps({"message": {"title": 5, "author": ["x", 3]}}), content_type="application/json")
    if kind == "nomessage":
        return Response(json.dumps({"status": "ok", "items": []}), content_type="application/json")
    raise AssertionError(kind)


def arxiv_handler(request):
    ids = request.args.get("id_list", "")
    if ids == "1706.03762":
        return Response(fixture_bytes("arxiv/api_2026-07_new_1706.03762_attention.xml"),
                        content_type="application/atom+xml")
    kind = ARXIV_FAULTS.get(ids, "missing")
    if kind == "missing":
        return Response(fixture_bytes("arxiv/api_2025-11_new_idlist_nonexistent.xml"), content_type="application/atom+xml")
    if kind == "e503":
        return Response("down", status=503)
    if kind == "e429":
        return Response(fixture_bytes("arxiv/api_rate_exceeded_429_body.txt"), status=429, headers={"Retry-After": "0"})
    if kind == "html":
        return Response("<html><body>arXiv is down</body></html>", content_type="text/html")
    if kind == "truncated":
        body = fixture_bytes("arxiv/api_2026-07_new_1706.03762_attention.xml")
        return Response(body[: len(body) // 2], content_type="application/atom+xml")
    if kind == "e400garbage":
        return Response("Bad Request <<garbled>>", status=400, content_type="text/plain")
    if kind == "notatom":
        return Response("<?xml version='1.0'?><rss><channel/></rss>", content_type="application/xml")
    raise AssertionError(kind)


@pytest.fixture
def faulty_remote(server, tmp_path, monkeypatch):
    server.expect_request(re.compile(r"^/works/.*")).respond_with_handler(crossref_handler)
    server.expect_request("/api/query").respond_with_handler(arxiv_handler)
    config = tmp_path / "citeledger.toml"
    service = """min_interval_seconds = 0.0
retries = 1
backoff_base_seconds = 0.01
backoff_max_seconds = 0.02
timeout_seconds = 0.5
circuit_failures = 100000
circuit_openings = 100000
circuit_cooldown_seconds = 0.0
max_concurrency = 4
"""
    config.write_text(f"""
[remote]
enabled = ["arxiv", "crossref"]
mailto = "tests@example.org"
[remote.arxiv]
{service}
[remote.crossref]
{service}
[endpoints]
arxiv_api = "{server.url_for('/api/query')}"
crossref_api = "{server.url_for('').rstrip('/')}"
""")
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    workers.clear_caches()
    HELD.released.clear()
    yield server
    HELD.release()
    workers.clear_caches()


def references() -> list[dict]:
    refs, expected = [], {}

    def add(raw, want):
        refs.append({"citing_paper": "faulty", "reference_index": len(refs) + 1, "raw": raw})
        expected[len(refs)] = want

    for n in range(PER_KIND):
        for kind in CROSSREF_FAULTS:
            add(f"Doe J. A study of faults number {n}. Journal 2020. doi:10.5555/fault.{kind}.{n}", ("unavailable", kind))
        add(f"Doe J. A real work {n}. Journal 2020. https://doi.org/10.5555/fine.{n}", ("verified_exact", "ok"))
        add(f"Doe J. An absent work {n}. Journal 2020. doi:10.5555/fault.missing.{n}", ("unresolved", "missing"))
    for arxiv_id, kind in ARXIV_FAULTS.items():
        add(f"Roe R. Preprint about {kind}. arXiv:{arxiv_id}", ("unavailable", kind))
    add("Vaswani A, et al. Attention is all you need. NeurIPS 2017. arXiv:1706.03762", ("verified_exact", "ok"))
    add("Roe R. A preprint nobody posted. arXiv:2301.09999", ("unresolved", "missing"))
    return refs, expected


def test_faults_at_volume_are_unavailable_never_unresolved(faulty_remote, tmp_path, fixture_catalog):
    import shutil

    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    refs, expected = references()
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in refs))
    plan = planning.plan_run([path], catalog, tmp_path / "ledger", run_id="faults", batch_size=1, remote=True)
    for job in plan.pending:
        batches.run_batch(job)
    summary = finishing.finish_run(plan)
    rows = {r[0]: r[1:] for r in run_query(
        "select reference_index, status, evidence from observations where run_id = 'faults'",
        tmp_path / "ledger", catalog).fetchall()}
    assert len(rows) == len(refs) and sum(summary.states.values()) == len(refs)
    wrong = {}
    for index, (want, kind) in expected.items():
        status, evidence = rows[index]
        if status != want:
            wrong[index] = (kind, want, status)
        elif want == "unavailable":
            failed = json.loads(evidence)["failed"]
            assert failed and all(why for why in failed.values()), evidence  # the reason is kept
    assert wrong == {}, {i: rows[i][1][:300] for i in wrong}
    counts = Counter(status for status, _ in rows.values())
    assert counts["unavailable"] == PER_KIND * len(CROSSREF_FAULTS) + len(ARXIV_FAULTS)
