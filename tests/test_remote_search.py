"""Search-based matching against a real local server replaying recorded search answers
(``fixtures/http/search``, see PROVENANCE.md): a found work links, a near-miss list is too close to
call, a notice twin is never linked, faults are ``unavailable`` (and asked again), answers are
cached on disk, strings likely to fail are not sent, the run's budget holds."""
from __future__ import annotations

import dataclasses
import json

import pytest
from remote_server import ResetServer, fast, fixture_bytes, fixture_json, holding, http_response, server, test_config  # noqa: F401

from citeledger.run import batches, finishing, planning, remote_run
from citeledger.run.task_runners import choose_task_runner
from citeledger.storage.remote_state import SearchCacheDir
from resolvers.candidates.fuzzy import FuzzyResolver
from resolvers.candidates.retrieval import InMemoryRetriever
from resolvers.catalog import InMemoryCatalog
from resolvers.errors import ConfigError
from resolvers.model import Reference, Work
from resolvers.remote.facade import build_remote
from resolvers.remote.settings import SearchSettings
from resolvers.resolution import apply_rule_chain
from resolvers.search_step import SearchStep

CRISPR = ("Kantor A, McClements ME, MacLaren RE. CRISPR-Mediated Base Editing Tools: A Genome Editing "
          "Technique to Induce Targeted Base Substitution. J Vis Exp. 2026.")
GAMES = ("Perkins TA, Boettiger C, Phillips BL. After the games are over: life-history trade-offs drive "
         "dispersal attenuation following range expansion. 2016.")
GAMES_JOURNAL = ("Perkins TA, Boettiger C, Phillips BL. After the games are over: life-history trade-offs drive "
                 "dispersal attenuation following range expansion. Ecology and Evolution. 2016;6(18):6425-6434.")
PINENE = ("Vander Wall AC, Perraud V, Wingen LM, Finlayson-Pitts BJ. Enhanced gas uptake during alpha-pinene "
          "ozonolysis points to a burying mechanism. ACS Earth Space Chem. 2024.")
PROTON = ("I. T. Lorenz, H.-W. Hammer, U.-G. Meissner, The size of the proton - closing in on the radius puzzle, "
          "Eur. Phys. J. A 48 (2012) 151.")
STATE_OA = ("Piwowar H, Priem J, Lariviere V, Alperin JP, Matthias L, Norlander B, et al. The state of OA: a "
            "large-scale analysis of the prevalence and impact of Open Access articles. PeerJ. 2018;6:e4375.")


def remote_for(server, services=("crossref",), cache=None, crossref=None, **search):
    base = server.url_for("").rstrip("/")
    config = test_config(base, remote=services, crossref=crossref or fast())
    settings = dataclasses.replace(config.remote_settings(), openalex=fast(),
                                   endpoints=dataclasses.replace(config.endpoints, openalex_api=base + "/openalex"),
                                   search=SearchSettings(services=tuple(services), **search))
    return build_remote(settings, search_cache=cache)


def resolve(remote, raws, works=(), run_id="t", budget=None):
    refs = [Reference("p", i + 1, raw) for i, raw in enumerate(raws)]
    step = SearchStep(remote.search, remote.search.budget(run_id, budget))
    fuzzy = FuzzyResolver(InMemoryRetriever(list(works)))
    return [r.verdict for r in apply_rule_chain(refs, InMemoryCatalog(works), fuzzy, remote, step)]


def serve_crossref(server, name):
    server.expect_request("/works").respond_with_json(fixture_json(f"search/{name}"))


def test_a_found_work_links_with_the_query_and_candidates_as_evidence(server):
    serve_crossref(server, "crossref_query_bibliographic_crispr_select.json")
    verdict, = resolve(remote_for(server), [CRISPR])
    assert (verdict.status.value, verdict.resolver_source, verdict.work.work_id) == \
        ("verified_fuzzy", "crossref_search", "doi:10.3791/20970")
    search = verdict.evidence["search"][0]
    assert search["service"] == "crossref" and search["query"] == CRISPR
    assert search["candidates"][0]["work_id"] == "doi:10.3791/20970" and search["fetched_at"]
    request, _ = server.log[0]
    assert request.args["query.bibliographic"] == CRISPR and request.args["rows"] == "5"
    assert "DOI" in request.args["select"].split(",") and request.args["mailto"] == "tests@example.org"
    assert request.headers["User-Agent"].startswith("citeledger/") and "mailto:" in request.headers["User-Agent"]


def test_a_near_miss_list_is_too_close_to_call_and_details_settle_it(server):
    """The recorded list holds a journal article and its preprint (same title and authors)."""
    serve_crossref(server, "crossref_query_ecology_boettiger_selected.json")
    close, clear = resolve(remote_for(server), [GAMES, GAMES_JOURNAL])
    assert (close.status.value, close.reason.value) == ("unresolved", "too_close_to_call")
    assert {close.evidence["fuzzy"]["best"]["work_id"], close.evidence["fuzzy"]["runner_up"]["work_id"]} == \
        {"doi:10.1002/ece3.2314", "doi:10.1101/014852"}
    assert (clear.status.value, clear.work.work_id) == ("verified_fuzzy", "doi:10.1002/ece3.2314")


def test_a_notice_twin_is_never_linked(server):
    serve_crossref(server, "crossref_search_correction_notice_constructed.json")
    verdict, = resolve(remote_for(server), [PINENE])
    assert verdict.status.value == "unresolved" and verdict.work is None
    assert verdict.evidence["fuzzy"]["search"][0]["candidates"][0]["title"].startswith("Correction to")


def test_arxiv_search_on_title_and_first_author(server):
    server.expect_request("/api/query").respond_with_data(
        fixture_bytes("search/arxiv_search_electron_proton.xml"), content_type="application/atom+xml")
    verdict, = resolve(remote_for(server, services=("arxiv",)), [PROTON])
    assert (verdict.status.value, verdict.resolver_source, verdict.work.work_id) == \
        ("verified_fuzzy", "arxiv_search", "arxiv:1205.6628")
    assert server.log[0][0].args["search_query"] == 'ti:"the size of the proton closing in on the radius puzzle" ' \
                                                   'AND au:lorenz'


def test_openalex_search_when_crossref_has_nothing(server):
    server.expect_request("/works").respond_with_json(
        {"status": "ok", "message-type": "work-list", "message": {"items": [], "total-results": 0}})
    server.expect_request("/openalex/works").respond_with_json(
        fixture_json("search/openalex_search_state_of_oa_constructed.json"))
    verdict, = resolve(remote_for(server, services=("crossref", "openalex")), [STATE_OA])
    assert (verdict.status.value, verdict.resolver_source, verdict.work.work_id) == \
        ("verified_fuzzy", "openalex_search", "doi:10.7717/peerj.4375")
    assert [s["service"] for s in verdict.evidence["search"]] == ["crossref", "openalex"]
    assert server.log[1][0].args["mailto"] == "tests@example.org"


@pytest.mark.parametrize("fault", ["429", "503", "timeout"])
def test_faults_are_unavailable_and_asked_again_next_run(server, tmp_path, fault, holding):
    handler = server.expect_request("/works")
    if fault == "429":
        handler.respond_with_data("Too Many Requests", status=429, headers={"Retry-After": "0"})
    elif fault == "503":
        handler.respond_with_data("Service Unavailable", status=503)
    else:
        handler.respond_with_handler(holding)
    cache = SearchCacheDir(tmp_path / "cache")
    verdict, = resolve(remote_for(server, cache=cache, crossref=fast(timeout_seconds=0.2, retries=1)), [CRISPR])
    assert (verdict.status.value, verdict.reason.value) == ("unavailable", "remote_unavailable")
    assert "crossref" in verdict.evidence["search_failed"] and verdict.evidence["retry"] == "next run"
    server.clear()
    serve_crossref(server, "crossref_query_bibliographic_crispr_select.json")
    verdict, = resolve(remote_for(server, cache=cache), [CRISPR], run_id="next")  # the failure was not cached
    assert verdict.status.value == "verified_fuzzy"


def test_a_reset_connection_is_unavailable(tmp_path):
    with ResetServer(resets=10, reply=http_response("200 OK", b"{}", "application/json")) as reset:
        config = test_config(reset.url, remote=("crossref",), crossref=fast(retries=1))
        settings = dataclasses.replace(config.remote_settings(), search=SearchSettings(services=("crossref",)))
        verdict, = resolve(build_remote(settings), [CRISPR])
    assert verdict.status.value == "unavailable" and "transport error" in verdict.evidence["search_failed"]["crossref"]


def test_answers_are_cached_on_disk_with_service_and_time(server, tmp_path):
    serve_crossref(server, "crossref_query_bibliographic_crispr_select.json")
    cache = SearchCacheDir(tmp_path / "cache")
    resolve(remote_for(server, cache=cache), [CRISPR])
    entry = json.loads(cache.path("crossref", CRISPR).read_text())
    assert (entry["service"], entry["query"], entry["works"][0]["doi"]) == ("crossref", CRISPR, "10.3791/20970")
    assert entry["fetched_at"].startswith("20")
    server.clear()  # a new process (another run): the disk answers, nobody is asked
    remote = remote_for(server, cache=cache)
    verdict, = resolve(remote, [CRISPR], run_id="again")
    assert verdict.status.value == "verified_fuzzy" and len(server.log) == 0
    assert remote.search.budget("again").report()["cache_hits"] == {"crossref": 1}


def test_one_query_per_distinct_string_and_unlikely_strings_are_not_sent(server):
    serve_crossref(server, "crossref_query_bibliographic_crispr_select.json")
    raws = [CRISPR, CRISPR, "Smith J. 2019.", "E., and Stoica, I.", "Phys. Rev. Lett. 96, 010401 (2006)"]
    verdicts = resolve(remote_for(server), raws)
    assert [v.status.value for v in verdicts[:2]] == ["verified_fuzzy"] * 2
    assert all(v.status.value in ("unresolved", "parse_uncertain") for v in verdicts[2:])
    assert len(server.log) == 1


def test_the_run_budget_is_spent_then_unavailable(server):
    serve_crossref(server, "crossref_query_ecology_boettiger_selected.json")
    remote = remote_for(server, threads=1)
    first, second = resolve(remote, [GAMES_JOURNAL, CRISPR], budget=1)
    assert first.status.value == "verified_fuzzy"
    assert second.status.value == "unavailable" and "budget" in second.evidence["search_failed"]["crossref"]
    assert remote.search.budget("t").report()["total"] == 1 and len(server.log) == 1


def test_nightly_local_reruns_are_not_searched(server):
    serve_crossref(server, "crossref_query_bibliographic_crispr_select.json")
    remote = remote_for(server)
    step = remote_run.search_step(remote, "night", 10, skip_files=("rerun.jsonl",))
    refs = [Reference("p", 1, CRISPR, file="rerun.jsonl"), Reference("p", 2, CRISPR.replace("2026", "2026;"), file="new.jsonl")]
    fuzzy = FuzzyResolver(InMemoryRetriever([]))
    old, new = [r.verdict for r in apply_rule_chain(refs, InMemoryCatalog([]), fuzzy, remote, step)]
    assert old.status.value == "unresolved" and new.status.value == "verified_fuzzy" and len(server.log) == 1


def test_a_local_link_asks_nobody(server):
    work = Work("doi:10.3791/20970", doi="10.3791/20970", title="CRISPR-Mediated Base Editing Tools: A Genome "
                "Editing Technique to Induce Targeted Base Substitution", year=2026, venue="J Vis Exp")
    verdict, = resolve(remote_for(server), [CRISPR], works=[work])
    assert verdict.resolver_source == "raw_fallback" and len(server.log) == 0


def test_remote_runs_stay_in_one_process():
    assert choose_task_runner("auto", 10**6, cpus=8, remote=True) == "threads"
    assert choose_task_runner("processes", 10, remote=True) == "threads"
    with pytest.raises(ConfigError):
        choose_task_runner("dask", 10, remote=True)


def test_a_searched_work_joins_the_catalog_and_the_next_run_asks_nobody(server, tmp_path, monkeypatch,
                                                                       fixture_catalog):
    import shutil

    from citeledger.catalog.catalog_store import ParquetCatalog
    from citeledger.engine import process_cache as workers
    from citeledger.ledger.query import run_query

    config = tmp_path / "citeledger.toml"
    config.write_text(f"""state_dir = "{tmp_path / 'state'}"
[remote]
enabled = ["crossref"]
mailto = "tests@example.org"
[remote.crossref]
min_interval_seconds = 0.0
retries = 0
[endpoints]
crossref_api = "{server.url_for('').rstrip('/')}"
[search]
services = ["crossref"]
""")
    monkeypatch.setenv("CITELEDGER_CONFIG", str(config))
    workers.clear_caches()
    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": CRISPR}) + "\n")
    serve_crossref(server, "crossref_query_bibliographic_crispr_select.json")

    def run(run_id):
        plan = planning.plan_run([refs], catalog, tmp_path / "ledger", run_id=run_id, remote=True)
        for job in plan.pending:
            batches.run_batch(job)
        summary = finishing.finish_run(plan)
        row = run_query(f"select status, resolver_source, work_id from observations where run_id = '{run_id}'",
                        tmp_path / "ledger", catalog).fetchall()[0]
        return row, summary

    try:
        row, summary = run("r1")
        assert row == ("verified_fuzzy", "crossref_search", "doi:10.3791/20970")
        assert summary.search["requests"] == {"crossref": 1}
        fetched = [json.loads(line) for f in (tmp_path / "ledger").rglob("fetched/*/*.jsonl") for line in f.open()]
        assert fetched[0]["fetched_from"]["service"] == "crossref" and fetched[0]["fetched_from"]["query"] == CRISPR
        assert ParquetCatalog(catalog).works_by_doi(["10.3791/20970"])  # joined the catalog
        server.clear()
        workers.clear_caches()  # the next night's process
        row, summary = run("r2")
        assert row == ("verified_fuzzy", "raw_fallback", "doi:10.3791/20970") and len(server.log) == 0
        assert summary.search.get("total", 0) == 0
    finally:
        workers.clear_caches()


def test_nightly_searches_new_references_and_retries_within_its_budget(tmp_path, monkeypatch):
    from citeledger.nightly import steps as nightly

    monkeypatch.setenv("CITELEDGER_SEARCH_NIGHTLY_REQUEST_BUDGET", "7")
    selection = nightly.RerunSelection()
    selection.add(Reference("p", 1, "old unresolved"), "unresolved_new_works")
    selection.add(Reference("p", 2, "could not check"), "retry_unavailable")
    inputs, search = nightly.rerun_inputs(tmp_path, "nightly-x", selection, remote=True)
    assert [p.name for p in inputs] == ["nightly-x.jsonl", "nightly-x-retry.jsonl"]
    assert search == {"budget": 7, "skip_files": [str(inputs[0])]}
    assert nightly.rerun_inputs(tmp_path, "nightly-y", selection, remote=False)[1] is None


def test_search_configuration_from_file_and_environment(tmp_path):
    from citeledger.config import load_config

    (tmp_path / "citeledger.toml").write_text('[search]\nservices = ["openalex", "crossref"]\nrows = 3\n')
    config = load_config(env={"CITELEDGER_SEARCH_NIGHTLY_REQUEST_BUDGET": "10"}, cwd=tmp_path)
    assert config.search.services == ("openalex", "crossref") and config.search.rows == 3
    assert config.search.nightly_request_budget == 10
    assert config.crossref.min_interval_seconds == 0.5 and config.openalex.min_interval_seconds == 0.1
    assert load_config(env={"CITELEDGER_MAILTO": "a@b.org"}, cwd=tmp_path).crossref.min_interval_seconds == 0.2
    for bad in ('[search]\nservices = ["google"]\n', "[search]\nrows = 0\n", "[search]\nfoo = 1\n"):
        (tmp_path / "citeledger.toml").write_text(bad)
        with pytest.raises(ConfigError):
            load_config(env={}, cwd=tmp_path)
    (tmp_path / "citeledger.toml").write_text("")
    assert build_remote(load_config(env={}, cwd=tmp_path).remote_settings()) is None  # off by default


def test_the_rate_slot_is_taken_inside_the_concurrency_slot():
    """Threads that waited for a free connection must still wait for their turn: taking the rate
    slot first let the threads freed together send in a burst (bench_search.py --rate measured
    10 Crossref requests in one second at a 5/s limit before this order)."""
    import httpx

    from resolvers.remote.http import PoliteClient

    client = PoliteClient("crossref", fast(max_concurrency=2),
                          transport=httpx.MockTransport(lambda request: httpx.Response(200, json={})))
    held: list[int] = []
    acquire = client.limiter.acquire
    client.limiter.acquire = lambda *a: (held.append(client.gate.free()), acquire(*a))[1]  # type: ignore[method-assign]
    client.get("http://127.0.0.1:9/works")
    assert held == [1]  # one of the two connection slots was taken when the rate slot was


def test_a_write_starts_an_interval_after_the_previous_write_ended():
    """The gate measures from the end of the previous write: a write delayed after its slot
    cannot land right beside the next one (the server would count both in one interval)."""
    from remote_server import FakeClock

    from resolvers.remote.http import RateLimiter

    clock = FakeClock()
    limiter = RateLimiter(1.0, clock, clock.sleep)
    limiter.gate()
    clock.now += 0.3  # the first write took a while (a descheduled thread)
    limiter.sent()
    limiter.gate()
    assert clock.sleeps == [1.0] and clock.now == 1001.3
    limiter.sent()
