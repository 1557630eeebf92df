"""``resolve --remote`` against a hostile Crossref on 127.0.0.1: huge bodies (declared and
streamed), a gzip bomb, a trickled body, stacked encodings, a Retry-After of 31,000 years,
redirect loops and a redirect to another host. The run finishes, every such reference is
``unavailable`` with its fault in the evidence, the others are linked, and a re-run does the same
(a fault is never remembered as an answer).

Each DOI names its fault (``10.5555/hostile.<kind>``); batches of one reference keep one fault
from deciding its neighbours.
"""
from __future__ import annotations

import json
import re

import pytest
from pytest_httpserver import HTTPServer
from remote_hostile import Sent, gzip_bomb, huge, redirect, stacked_gzip, trickle
from remote_server import server  # noqa: F401
from werkzeug import Request, Response

from citeledger.engine import process_cache as workers
from citeledger.ledger.query import run_query
from citeledger.run import batches, finishing, planning

# kind -> the fault its reference's evidence names
HOSTILE = {"huge": "answer too large", "endless": "answer too large", "bomb": "answer too large",
           "trickle": "deadline passed", "stacked": "content encoding refused", "retryafter": "rate limited",
           "loop": "redirect refused", "away": "redirect refused"}
FINE = ("ok", "moved")  # "moved": redirected within the host, then answered


def message(doi: str) -> dict:
    return {"DOI": doi, "title": [f"Hostile world number {doi.rsplit('.', 1)[1]}"], "author": [{"family": "Doe"}],
            "issued": {"date-parts": [[2020]]}, "container-title": ["Journal"], "type": "journal-article"}


def crossref(elsewhere: HTTPServer, sent: Sent):
    def handler(request: Request) -> Response:
        doi = request.path.split("/works/", 1)[1]
        kind = doi.split(".")[2]
        ok = Response(json.dumps({"status": "ok", "message": message(doi)}), content_type="application/json")
        if kind == "ok" or request.args.get("via") == "redirect":
            return ok
        hostile = {
            "huge": huge(sent), "endless": huge(sent, declared=None), "bomb": gzip_bomb(sent),
            "trickle": trickle(sent, every=0.05, count=400), "stacked": stacked_gzip(ok.get_data()),
            "loop": redirect(request.path), "away": redirect(elsewhere.url_for(request.path)),
            "moved": redirect(request.path + "?via=redirect", 301),
            "retryafter": lambda r: Response("slow down", status=429, headers={"Retry-After": "999999999999"}),
        }
        return hostile[kind](request)

    return handler


@pytest.fixture
def hostile_remote(server, tmp_path, monkeypatch):
    elsewhere = HTTPServer(host="127.0.0.1")
    elsewhere.start()
    elsewhere.expect_request(re.compile(r"^/works/.*")).respond_with_json({"status": "ok", "message": {}})
    server.expect_request(re.compile(r"^/works/.*")).respond_with_handler(crossref(elsewhere, Sent()))
    config = tmp_path / "citeledger.toml"
    config.write_text(f"""
[remote]
enabled = ["crossref"]
mailto = "tests@example.org"
[remote.crossref]
min_interval_seconds = 0.0
retries = 1
backoff_base_seconds = 0.01
backoff_max_seconds = 0.02
timeout_seconds = 5.0
deadline_seconds = 3.0
max_retry_after_seconds = 0.5
max_body_bytes = 1048576
circuit_failures = 100000
circuit_openings = 100000
circuit_cooldown_seconds = 0.0
[endpoints]
crossref_api = "{server.url_for('').rstrip('/')}"
""")
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    workers.clear_caches()
    yield server, elsewhere
    workers.clear_caches()
    elsewhere.clear()
    elsewhere.stop()


def references() -> list[dict]:
    kinds = list(HOSTILE) + list(FINE)
    return [{"citing_paper": "hostile", "reference_index": i + 1,
             "raw": f"Doe J. Hostile world number {i}. Journal 2020. doi:10.5555/hostile.{kind}.{i}"}
            for i, kind in enumerate(kinds)]


def run(tmp_path, catalog, run_id: str) -> dict[int, tuple[str, dict]]:
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in references()))
    plan = planning.plan_run([path], catalog, tmp_path / "ledger", run_id=run_id, batch_size=1, remote=True)
    for job in plan.pending:
        batches.run_batch(job)
    finishing.finish_run(plan)
    rows = run_query(f"select reference_index, status, evidence from observations where run_id = '{run_id}'",
                     tmp_path / "ledger", catalog).fetchall()
    return {index: (status, json.loads(evidence)) for index, status, evidence in rows}


def test_hostile_answers_are_unavailable_with_their_fault_run_after_run(hostile_remote, tmp_path, fixture_catalog):
    import shutil

    server, elsewhere = hostile_remote
    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    kinds = list(HOSTILE) + list(FINE)
    for run_id in ("first", "again"):
        rows = run(tmp_path, catalog, run_id)
        assert len(rows) == len(kinds)
        for index, (status, evidence) in rows.items():
            kind = kinds[index - 1]
            if kind in FINE:
                assert status == "verified_exact", (kind, status, evidence)
                continue
            assert status == "unavailable", (kind, status, evidence)
            assert any(why.startswith(f"crossref: {HOSTILE[kind]}") for why in evidence["failed"].values()), \
                (kind, evidence)
    assert len(elsewhere.log) == 0  # the contact e-mail never left the configured host
