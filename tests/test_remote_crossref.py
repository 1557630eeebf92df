"""Crossref works, agency, search and harvest; the RemoteResolver facade routing DOIs."""
from __future__ import annotations

import pytest
from remote_server import FakeClock, fast, fixture_bytes, fixture_json, server, test_config  # noqa: F401

from resolvers.errors import RemoteUnavailable
from resolvers.remote.checkpoint import MemoryCheckpoint
from resolvers.remote.crossref import message_relations, message_to_work
from resolvers.remote.facade import RemoteBatchUnavailable, build_remote

JSON = "application/json;charset=utf-8"
TYPICAL = "crossref/works_10.1021_acs.orglett.9b00971_typical.json"
PLOS = "recorded-crossref/api.crossref.org_works_10.1371_journal.pone.0033693__200__0c3b6a3057.json"
NOT_FOUND = "recorded-crossref/api.crossref.org_works_10.1371_notarealdoi__404__44fb017307.txt"


def remote(server, services=("arxiv", "crossref"), **settings):
    clock = FakeClock()
    config = test_config(server.url_for(""), remote=services, crossref=fast(**settings), arxiv=fast(**settings))
    return build_remote(config.remote_settings(), clock=clock, sleep=clock.sleep)


def serve_json(server, path, name, status=200):
    server.expect_request(path).respond_with_data(fixture_bytes(name), status=status, content_type=JSON)


def serve_404(server, path):
    server.expect_request(path).respond_with_data(fixture_bytes(NOT_FOUND), status=404, content_type="text/plain")


def test_work_200_with_mailto(server):
    serve_json(server, "/works/10.1021/acs.orglett.9b00971", TYPICAL)
    message = remote(server).crossref.work("10.1021/acs.orglett.9b00971")
    assert message["DOI"] == "10.1021/acs.orglett.9b00971"
    request = server.log[0][0]
    assert request.args["mailto"] == "tests@example.org"
    assert "mailto:tests@example.org" in request.headers["User-Agent"]


def test_plain_text_404_is_not_found(server):
    serve_404(server, "/works/10.1371/notarealdoi")
    assert fixture_bytes(NOT_FOUND) == b"Resource not found."
    assert remote(server).crossref.work("10.1371/notarealdoi") is None


def test_agency_reports_datacite(server):
    fragment = fixture_json("crossref/agency_10.48550_arXiv.1706.03762_datacite_fragment.json")
    envelope = fixture_json("crossref/agency_10.1037_crossref_envelope.json")
    envelope["message"] = {"DOI": "10.48550/arxiv.1706.03762", **fragment}  # the quoted fragment, full envelope
    server.expect_request("/works/10.48550/arXiv.1706.03762/agency").respond_with_json(envelope)
    serve_json(server, "/works/10.1126/science.169.3946.635/agency",
               "recorded-crossref/api.crossref.org_works_10.1126_science.169.3946.635_agency__200__679a87798e.json")
    client = remote(server).crossref
    assert client.agency("10.48550/arXiv.1706.03762") == "datacite"
    assert client.agency("10.1126/science.169.3946.635") == "crossref"


def test_message_to_work_fields():
    work = message_to_work(fixture_json(TYPICAL)["message"])
    assert work.work_id == "doi:10.1021/acs.orglett.9b00971" and work.doi == "10.1021/acs.orglett.9b00971"
    assert work.authors == ("Mansfield", "Smith", "Yong", "Garry", "Anderson")
    assert (work.year, work.venue, work.volume, work.first_page, work.type) == (
        2019, "Organic Letters", "21", "2918", "journal-article")
    unicode = message_to_work(fixture_json("crossref/works_10.1038_s43586-021-00024-3_unicode_articlenumber.json")["message"])
    assert unicode.authors[0] == "Kupče" and unicode.first_page == "27"  # article-number stands in for a page
    family_only = message_to_work(fixture_json("crossref/works_10.1038_d41586-020-02761-z_family_only_authors.json")["message"])
    assert family_only.authors == ("Sheherazade", "Ardiantiono")
    bogus = fixture_json("crossref/works_10.65215_nxvz2v36_bogus_duplicate_posted_content.json")["message"]
    copy = message_to_work(bogus)
    assert copy.title == "Attention Is All You Need" and copy.type == "posted-content" and copy.year == 2025
    assert message_relations(bogus)["relation"]["is-version-of"][0]["id"] == "10.65215/r5bs2d54"
    plos = fixture_json(PLOS)["message"]
    assert message_relations(plos)["updated-by"][0]["type"] == "correction"


def test_query_bibliographic_returns_candidates_unjudged(server):
    server.expect_request("/works", query_string={"query.bibliographic": "CRISPR base editing", "rows": "5",
                                                  "mailto": "tests@example.org"}).respond_with_data(
        fixture_bytes("crossref/works_query_bibliographic_worklist_select.json"), content_type=JSON)
    hits = remote(server).crossref.query_bibliographic("CRISPR base editing")
    assert [h["DOI"] for h in hits] == ["10.3791/20970"]


def _page(items, next_cursor):
    return {"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
            "message": {"items": items, "next-cursor": next_cursor, "total-results": 2, "items-per-page": 1}}


def test_works_harvest_by_cursor_resumes_after_failure(server, tmp_path):
    recorded = fixture_json("recorded-crossref/api.crossref.org_works_rows_2__200__662e52f84b.json")["message"]["items"]
    base = {"filter": "from-index-date:2025-03-01", "rows": "1", "mailto": "tests@example.org"}
    server.expect_request("/works", query_string={**base, "cursor": "*"}).respond_with_json(_page(recorded[:1], "C1"))
    server.expect_request("/works", query_string={**base, "cursor": "C1"}).respond_with_data("down", status=503)
    checkpoint = MemoryCheckpoint()
    seen = []
    client = remote(server, retries=0).crossref
    with pytest.raises(RemoteUnavailable):
        for item in client.harvest("2025-03-01", rows=1, checkpoint=checkpoint):
            seen.append(item["DOI"])
    assert seen == [recorded[0]["DOI"]] and checkpoint.read()["cursor"] == "C1"

    server.clear()
    server.expect_request("/works", query_string={**base, "cursor": "C1"}).respond_with_json(_page(recorded[1:], "C2"))
    server.expect_request("/works", query_string={**base, "cursor": "C2"}).respond_with_json(_page([], "C3"))
    for item in client.harvest("2025-03-01", rows=1, checkpoint=checkpoint):
        seen.append(item["DOI"])
    assert seen == [i["DOI"] for i in recorded]
    assert [r.args["cursor"] for r, _ in server.log] == ["C1", "C2"]
    assert checkpoint.read()["completed"] is True


# -- the facade ------------------------------------------------------------------------------


def test_lookup_doi_crossref_found_and_not_found(server):
    serve_json(server, "/works/10.1021/acs.orglett.9b00971", TYPICAL)
    serve_404(server, "/works/10.1371/notarealdoi")
    serve_404(server, "/works/10.1371/notarealdoi/agency")
    result = remote(server).lookup_doi(["10.1021/ACS.ORGLETT.9B00971", "10.1371/notarealdoi"])
    assert result["10.1021/acs.orglett.9b00971"].title.startswith("A General Copper-Catalyzed")
    assert result["10.1371/notarealdoi"] is None


def test_arxiv_doi_is_routed_to_the_arxiv_api(server):
    server.expect_request("/api/query", query_string={"id_list": "1706.03762", "start": "0", "max_results": "1"}).respond_with_data(
        fixture_bytes("arxiv/api_2026-07_new_1706.03762_attention.xml"), content_type="application/atom+xml")
    result = remote(server).lookup_doi(["10.48550/arXiv.1706.03762"])
    assert result["10.48550/arxiv.1706.03762"].work_id == "arxiv:1706.03762"
    assert [r.path for r, _ in server.log] == ["/api/query"]  # Crossref was not asked: it would 404


def test_datacite_doi_crossref_cannot_check_is_left_unanswered(server):
    fragment = fixture_json("crossref/agency_10.48550_arXiv.1706.03762_datacite_fragment.json")
    serve_404(server, "/works/10.5281/zenodo.1234")
    server.expect_request("/works/10.5281/zenodo.1234/agency").respond_with_json({"status": "ok", "message": fragment})
    assert remote(server).lookup_doi(["10.5281/zenodo.1234"]) == {}  # not "not found": not checkable


def test_failure_mid_batch_keeps_what_was_answered(server):
    serve_json(server, "/works/10.1021/acs.orglett.9b00971", TYPICAL)
    server.expect_request("/works/10.1371/journal.pone.0033693").respond_with_data("oops", status=500)
    resolver = remote(server, retries=1)
    with pytest.raises(RemoteBatchUnavailable) as info:
        resolver.lookup_doi(["10.1021/acs.orglett.9b00971", "10.1371/journal.pone.0033693"])
    assert isinstance(info.value, RemoteUnavailable) and info.value.service == "crossref"
    assert list(info.value.answered) == ["10.1021/acs.orglett.9b00971"]
    assert info.value.unanswered == ["10.1371/journal.pone.0033693"]
    # next run, the service is back: the cached answer is not fetched again, the other is (the
    # run of 500s opened the circuit for this run; the next run starts with it closed)
    server.clear()
    serve_json(server, "/works/10.1371/journal.pone.0033693", PLOS)
    resolver.begin_run("next")
    result = resolver.lookup_doi(["10.1021/acs.orglett.9b00971", "10.1371/journal.pone.0033693"])
    assert result["10.1371/journal.pone.0033693"].year == 2012
    assert [r.path for r, _ in server.log] == ["/works/10.1371/journal.pone.0033693"]


def test_server_stopped_is_unavailable_then_resolves_when_back(server):
    port = server.port
    resolver = remote(server, retries=1)
    server.stop()
    with pytest.raises(RemoteUnavailable) as info:
        resolver.lookup_arxiv(["1706.03762"])
    assert info.value.service == "arxiv"
    server.start()  # same port
    assert server.port == port
    server.expect_request("/api/query").respond_with_data(
        fixture_bytes("arxiv/api_2026-07_new_1706.03762_attention.xml"), content_type="application/atom+xml")
    assert resolver.lookup_arxiv(["1706.03762"])["1706.03762"].title == "Attention Is All You Need"


def test_disabled_service_answers_nothing(server):
    only_arxiv = remote(server, services=("arxiv",))
    assert only_arxiv.crossref is None
    assert only_arxiv.lookup_doi(["10.1021/acs.orglett.9b00971"]) == {}
    assert len(server.log) == 0
