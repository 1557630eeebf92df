"""arXiv API lookups and the OAI-PMH harvest, against a local server replaying recorded payloads."""
from __future__ import annotations

import pytest
from remote_server import FakeClock, fast, fixture_bytes, server, test_config  # noqa: F401
from werkzeug import Response

from resolvers.errors import ArxivQueryError, RateLimited, RemoteUnavailable
from resolvers.remote.arxiv import parse_feed, split_arxiv_id
from resolvers.remote.checkpoint import MemoryCheckpoint
from resolvers.remote.facade import build_remote

ATOM = "application/atom+xml; charset=utf-8"
MISSING_BATCH = ["2201.13455", "2201.13452", "2201.13453", "2201.13454"]


def arxiv_client(server, clock=None, **settings):
    clock = clock or FakeClock()
    config = test_config(server.url_for(""), remote=("arxiv",), arxiv=fast(**settings))
    return build_remote(config.remote_settings(), clock=clock, sleep=clock.sleep).arxiv


def expect_ids(server, ids, payload_name, status=200):
    server.expect_request(
        "/api/query", query_string={"id_list": ",".join(ids), "start": "0", "max_results": str(len(ids))}
    ).respond_with_data(fixture_bytes(payload_name), status=status, content_type=ATOM)


@pytest.mark.parametrize(
    "payload",
    ["arxiv/api_2025-11_new_idlist_partial_missing.xml", "arxiv/api_2025-08_legacy_idlist_stub_entries.xml"],
)
def test_found_and_missing_in_both_shapes(server, payload):
    expect_ids(server, MISSING_BATCH, payload)
    detailed = arxiv_client(server).lookup_detailed(MISSING_BATCH)
    assert {k: v.status for k, v in detailed.items()} == {
        "2201.13455": "missing", "2201.13452": "found", "2201.13453": "missing", "2201.13454": "missing",
    }
    work = detailed["2201.13452"].work
    assert work.work_id == "arxiv:2201.13452" and work.arxiv_id == "2201.13452"
    assert work.title == "Asymptotic Analysis for a Nonlinear Reaction-Diffusion System Modeling an Infectious Disease"
    assert work.authors == ("Hong-Ming Yin", "Jun Zou") and work.year == 2022 and not work.withdrawn
    assert len(server.log) == 1  # one batched query


def test_total_results_is_not_trusted():
    """Legacy: totalResults=1 with no entry; stubs counted in totalResults."""
    empty = parse_feed(fixture_bytes("arxiv/api_2025-08_legacy_idlist_nonexistent.xml"))
    assert empty.total_results == 1 and empty.entries == []
    stubs = parse_feed(fixture_bytes("arxiv/api_2025-08_legacy_idlist_stub_entries.xml"))
    assert stubs.total_results == 4 and len(stubs.entries) == 1 and stubs.stubs == 3
    new_empty = parse_feed(fixture_bytes("arxiv/api_2025-11_new_idlist_nonexistent.xml"))
    assert new_empty.total_results == 0 and new_empty.entries == [] and new_empty.errors == {}


def test_withdrawn_out_of_order_versions_and_journal_doi(server):
    # versions are stripped from the query so that arXiv answers with the latest version
    expect_ids(server, ["2609.32356", "1207.7214"], "arxiv/api_2026-10_new_withdrawn_versions_jref_doi.xml")
    result = arxiv_client(server).lookup(["2609.32356v1", "2609.32356v3", "1207.7214"])
    assert result["2609.32356v1"] == result["2609.32356v3"]  # one work, whichever version was cited
    withdrawn = result["2609.32356v1"]
    assert withdrawn.withdrawn is True and withdrawn.arxiv_id == "2609.32356" and withdrawn.year == 2026
    higgs = result["1207.7214"]
    assert higgs.withdrawn is False
    assert higgs.authors == ("The ATLAS Collaboration",)
    assert higgs.alt_dois == ("10.1016/j.physletb.2012.08.020", "10.48550/arxiv.1207.7214")
    assert higgs.year == 2012


def test_malformed_ids_are_not_sent(server):
    expect_ids(server, ["1706.03762"], "arxiv/api_2026-07_new_1706.03762_attention.xml")
    detailed = arxiv_client(server).lookup_detailed(["arXiv:1501.1234", "1706.03762", "1201.56789"])
    assert detailed["arXiv:1501.1234"].status == "malformed"
    assert detailed["1201.56789"].status == "malformed"  # five digits in 2012
    assert detailed["1706.03762"].work.title == "Attention Is All You Need"
    assert server.log[0][0].args["id_list"] == "1706.03762"


def test_error_entry_marks_that_id_malformed_and_requeries_the_rest(server):
    """Legacy backends answered a batch holding a bad id with only the Error entry. The recorded
    Error entry (for 1234.12345) is replayed with the id of this batch's second member."""
    error = fixture_bytes("arxiv/api_legacy_doc_error_incorrect_id_format.xml").replace(b"1234.12345", b"2201.13455")
    server.expect_request("/api/query", query_string={"id_list": "1706.03762,2201.13455", "start": "0", "max_results": "2"}).respond_with_data(error, content_type=ATOM)
    expect_ids(server, ["1706.03762"], "arxiv/api_2026-07_new_1706.03762_attention.xml")
    detailed = arxiv_client(server).lookup_detailed(["1706.03762", "2201.13455"])
    assert detailed["2201.13455"].status == "malformed"
    assert "incorrect id format" in detailed["2201.13455"].why
    assert detailed["1706.03762"].status == "found"  # not called missing by the error response
    assert len(server.log) == 2


def test_query_level_error_entry_is_a_permanent_error(server):
    expect_ids(server, ["1706.03762"], "arxiv/api_2026-07_error_entry_start_not_int.xml")
    with pytest.raises(ArxivQueryError):
        arxiv_client(server).lookup(["1706.03762"])


def test_plain_text_429_body_becomes_rate_limited(server):
    server.expect_request("/api/query").respond_with_data(
        fixture_bytes("arxiv/api_rate_exceeded_429_body.txt"), status=429, content_type="text/plain",
        headers={"Retry-After": "3"},
    )
    with pytest.raises(RateLimited) as info:
        arxiv_client(server, retries=1).lookup(["1706.03762"])
    assert info.value.retry_after == 3.0 and len(server.log) == 2


def test_503_then_success_loses_nothing(server):
    attention = fixture_bytes("arxiv/api_2026-07_new_1706.03762_attention.xml")
    calls = []

    def handler(request):
        calls.append(1)
        if len(calls) == 1:
            return Response("busy", status=503)
        return Response(attention, content_type=ATOM)

    server.expect_request("/api/query").respond_with_handler(handler)
    assert arxiv_client(server).lookup(["1706.03762"])["1706.03762"].title == "Attention Is All You Need"
    assert len(calls) == 2


def test_batches_follow_the_configured_size(server):
    expect_ids(server, ["1706.03762"], "arxiv/api_2026-07_new_1706.03762_attention.xml")
    expect_ids(server, ["2206.06921"], "arxiv/api_2025-11_new_single_with_doi_journalref.xml")
    client = arxiv_client(server)
    client.batch_size = 1
    result = client.lookup(["1706.03762", "2206.06921"])
    assert result["1706.03762"].arxiv_id == "1706.03762" and result["2206.06921"].arxiv_id == "2206.06921"
    assert len(server.log) == 2


def test_old_style_ids():
    feed = parse_feed(fixture_bytes("arxiv/api_legacy_doc_typical_response.xml"))
    assert feed.entries[0].arxiv_id == "hep-ex/0307015" and feed.entries[0].version is None
    assert split_arxiv_id("math.GT/0309136v2") == ("math/0309136", 2)


# -- OAI-PMH -----------------------------------------------------------------------------------

FIRST_PAGE = {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": "2013-04-16", "until": "2013-04-16"}
NEXT_PAGE = {"verb": "ListRecords", "resumptionToken": "6960524|1001"}
OAI_XML = "text/xml; charset=utf-8"


def test_oai_harvest_across_two_resumption_pages(server, tmp_path):
    server.expect_request("/oai", query_string=FIRST_PAGE).respond_with_data(
        fixture_bytes("arxiv/oai_listrecords_page1_constructed.xml"), content_type=OAI_XML)
    server.expect_request("/oai", query_string=NEXT_PAGE).respond_with_data(
        fixture_bytes("arxiv/oai_listrecords_page2_constructed.xml"), content_type=OAI_XML)
    checkpoint = MemoryCheckpoint()
    records = list(arxiv_client(server).harvest(from_date="2013-04-16", until_date="2013-04-16", checkpoint=checkpoint))
    assert [r["id"] for r in records] == ["1304.4214", "1009.3186"]
    first, second = records
    assert first["title"] == "Neutron Scattering and Its Application to Strongly Correlated Systems"
    assert first["authors"] == "Igor A. Zaliznyak and John M. Tranquada"
    assert first["versions"] == [{"version": "v1", "created": "Mon, 15 Apr 2013 19:33:21 GMT"}]
    assert first["categories"] == "cond-mat.str-el" and first["journal-ref"] is None
    assert second["doi"] == "10.1109/TIT.2011.2148691" and [v["version"] for v in second["versions"]] == ["v1", "v2"]
    state = checkpoint.read()
    assert state["completed"] is True and state["last_completed_until"] == "2013-04-16"


def test_oai_harvest_resumes_after_a_failure_mid_harvest(server, tmp_path):
    server.expect_request("/oai", query_string=FIRST_PAGE).respond_with_data(
        fixture_bytes("arxiv/oai_listrecords_page1_constructed.xml"), content_type=OAI_XML)
    server.expect_request("/oai", query_string=NEXT_PAGE).respond_with_data("down", status=500)
    checkpoint = MemoryCheckpoint()
    seen = []
    with pytest.raises(RemoteUnavailable):
        for record in arxiv_client(server, retries=0).harvest(from_date="2013-04-16", until_date="2013-04-16", checkpoint=checkpoint):
            seen.append(record["id"])
    assert seen == ["1304.4214"]
    assert checkpoint.read()["resumption_token"] == "6960524|1001"

    server.clear()
    server.expect_request("/oai", query_string=NEXT_PAGE).respond_with_data(
        fixture_bytes("arxiv/oai_listrecords_page2_constructed.xml"), content_type=OAI_XML)
    for record in arxiv_client(server).harvest(from_date="2013-04-16", until_date="2013-04-16", checkpoint=checkpoint):
        seen.append(record["id"])
    assert seen == ["1304.4214", "1009.3186"]  # nothing lost, nothing fetched twice
    assert len(server.log) == 1 and server.log[0][0].args["resumptionToken"] == "6960524|1001"
    assert checkpoint.read()["completed"] is True


def test_oai_no_records_match_is_an_empty_harvest(server, tmp_path):
    body = (b'<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
            b'<responseDate>2026-01-01T00:00:00Z</responseDate><request verb="ListRecords">x</request>'
            b'<error code="noRecordsMatch">no records</error></OAI-PMH>')
    server.expect_request("/oai").respond_with_data(body, content_type=OAI_XML)
    assert list(arxiv_client(server).harvest(from_date="2030-01-01", checkpoint=MemoryCheckpoint())) == []
