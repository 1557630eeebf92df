"""A run of 2,000 references with Crossref, arXiv and OpenAlex on, against a local server that
trickles every answer (a byte a second) or answers every request ``429`` with a ``Retry-After`` of
31,000 years. The stall bounds are the defaults (only the endpoints, the contact and the pacing
between requests are set): the run ends with every reference ``unavailable``, each service's
circuit named in the summary and in ``runs``; the next run, against the same server answering,
resolves them all.

The references are a third DOIs (Crossref lookups), a third arXiv ids (arXiv lookups) and a third
titles without an identifier (searched: Crossref, then OpenAlex, then arXiv). The healthy server
answers in the services' recorded shapes (``tests/fixtures/http``): a Crossref work message, an
arXiv Atom feed, a Crossref ``query.bibliographic`` list. The time the hostile run takes is
printed (``-s``) and measured by ``benchmarks/soak_breaker.py``; no assertion here is on time.
"""
from __future__ import annotations

import json
import re
import shutil
import time

import pytest
from remote_hostile import Sent, healthy_services, stalled_config, stalled_reference, trickle
from remote_server import server  # noqa: F401
from werkzeug import Response

from citeledger.cli import main
from citeledger.engine import process_cache
from citeledger.ledger.query import run_query

REFERENCES = 2000
HOSTILE = {
    "trickle": trickle(Sent(), every=1.0, count=3600),
    "retry_after": lambda request: Response("slow down", status=429, headers={"Retry-After": "999999999999"}),
}


@pytest.fixture
def stalled_env(server, tmp_path, monkeypatch):
    mode = {"now": "trickle"}
    server.expect_request(re.compile("^/.*")).respond_with_handler(
        lambda request: healthy_services(request) if mode["now"] == "healthy" else HOSTILE[mode["now"]](request))
    config = tmp_path / "citeledger.toml"
    config.write_text(stalled_config(server.url_for("").rstrip("/"), str(tmp_path / "state")))
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    process_cache.clear_caches()
    yield mode
    process_cache.forget_remote()
    process_cache.clear_caches()


def resolve(tmp_path, catalog, run_id: str, capsys) -> tuple[dict[str, int], str]:
    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps(stalled_reference(i)) + "\n" for i in range(REFERENCES)))
    started = time.monotonic()
    assert main(["resolve", str(refs), "--remote", "--catalog", str(catalog), "--ledger", str(tmp_path / "ledger"),
                 "--run-id", run_id]) == 0
    out = capsys.readouterr().out
    with capsys.disabled():  # shown with -s; the benchmark measures it
        print(f"{run_id}: {time.monotonic() - started:.1f} s")
    states = dict(run_query(f"select status, count(*) from observations where run_id = '{run_id}' group by 1",
                            tmp_path / "ledger", catalog).fetchall())
    return states, out


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_a_stalled_service_makes_2000_references_unavailable_and_the_next_run_resolves_them(
        hostile, stalled_env, tmp_path, fixture_catalog, capsys):
    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    stalled_env["now"] = hostile
    states, out = resolve(tmp_path, catalog, "stalled", capsys)
    assert states == {"unavailable": REFERENCES}, states
    for service in ("crossref", "arxiv", "openalex"):
        line = next((line for line in out.splitlines() if line.startswith(f"{service}: circuit open")), None)
        assert line is not None, out
        assert "unavailable, asked again on the next run" in line
    [(remote,)] = run_query("select remote from runs where run_id = 'stalled'", tmp_path / "ledger",
                            catalog).fetchall()
    breakers = json.loads(remote)["services"]
    assert set(breakers) == {"crossref", "arxiv", "openalex"}
    assert all(b["openings"] >= 1 and b["why"] for b in breakers.values()), breakers
    stalled_env["now"] = "healthy"
    process_cache.forget_remote()  # a new night: a new process
    states, out = resolve(tmp_path, catalog, "healthy", capsys)
    assert states.get("unavailable", 0) == 0 and "circuit open" not in out, (states, out)
    links = sum(n for s, n in states.items() if s in ("verified_exact", "verified_fuzzy"))
    assert links == REFERENCES, states


def test_the_runs_remote_time_bounds_a_run_whose_services_answer_slowly(server, tmp_path, fixture_catalog,
                                                                        monkeypatch, capsys):
    """Services that answer well but slowly (each answer held 0.3 s) and a run's remote time of 1 s
    (``remote.max_run_seconds``): a few requests are answered, then every later one is refused
    unsent (a request in flight then is cut); their references are ``unavailable`` saying why, the
    summary says so in one line with the counts, and ``runs`` keeps them. The server's count of requests shows the bound, not a clock."""
    asked = []

    def slow(request):
        asked.append(request.path)
        time.sleep(0.3)
        return healthy_services(request)

    server.expect_request(re.compile("^/.*")).respond_with_handler(slow)
    config = tmp_path / "citeledger.toml"
    config.write_text(stalled_config(server.url_for("").rstrip("/"), str(tmp_path / "state"),
                                     remote="max_run_seconds = 1.0\n"))
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps(stalled_reference(i)) + "\n" for i in range(0, 300, 3)))  # 100 DOIs
    process_cache.clear_caches()
    try:
        assert main(["resolve", str(refs), "--remote", "--catalog", str(catalog), "--ledger",
                     str(tmp_path / "ledger"), "--run-id", "bounded"]) == 0
    finally:
        process_cache.forget_remote()
        process_cache.clear_caches()
    out = capsys.readouterr().out
    ledger = tmp_path / "ledger"
    states = dict(run_query("select status, count(*) from observations group by 1", ledger, catalog).fetchall())
    assert states.get("unavailable", 0) > 50 and sum(states.values()) == 100, states
    assert len(asked) < 50, len(asked)  # each answer costs 0.3 s of the 1 s: most were never sent
    [(evidence,)] = run_query("select any_value(evidence) from observations where status = 'unavailable'", ledger,
                              catalog).fetchall()
    assert "max_run_seconds" in evidence, evidence
    line = next((line for line in out.splitlines() if line.startswith("remote time: ")), None)
    assert line is not None and "remote.max_run_seconds" in line and "requests cut" in line, out
    [(remote,)] = run_query("select remote from runs where run_id = 'bounded'", ledger, catalog).fetchall()
    report = json.loads(remote)
    assert report["max_run_seconds"] == 1.0 and report["cut"] + report["refused"] >= 1, report
    assert report["services"] == {}, report  # the run's bound is no failure of the services: no circuit opened
