"""GROBID's processReferences through the polite client, against a local server replaying the TEI
GROBID gave for a real PDF (tests/fixtures/grobid/PROVENANCE.md), and GROBID's faults."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from remote_server import FakeClock, ResetServer, fast, holding, server  # noqa: F401  # noqa: F401
from werkzeug import Request, Response

from resolvers.errors import PdfUnreadable, RateLimited, RemoteUnavailable
from resolvers.remote.grobid import GrobidClient, parse_tei
from resolvers.remote.http import PoliteClient

GROBID = Path(__file__).parent / "fixtures" / "grobid"
PDF = (GROBID / "N18-3011.pdf").read_bytes()
TEI = (GROBID / "N18-3011.tei.xml").read_bytes()
ACL_TEI = (GROBID / "2020.acl-main.207.tei.xml").read_bytes()
# the body GROBID's service sends with a 500 (GrobidExceptionsTranslationUtility.buildJson)
BAD_PDF = json.dumps({"type": "org.grobid.core.exceptions.GrobidException",
                      "description": "org.grobid.core.exceptions.GrobidException:[BAD_INPUT_DATA] PDF to XML "
                                     "conversion failed with error code: 1", "code": 500, "requestUri": None})


def client(url: str, clock: FakeClock | None = None, **settings) -> GrobidClient:
    kwargs = {"clock": clock, "sleep": clock.sleep} if clock else {}
    return GrobidClient(PoliteClient("grobid", fast(**settings), **kwargs), url)


def replay(request: Request) -> Response:
    """What a GROBID service does for processReferences: the TEI of the PDF it was sent."""
    if request.files["input"].read() != PDF or request.form.get("includeRawCitations") != "1" \
            or request.form.get("consolidateCitations") != "0":
        return Response("unexpected request", status=400)
    return Response(TEI, content_type="application/xml")


def test_tei_of_a_real_pdf_gives_every_reference_in_order():
    refs = parse_tei(TEI)
    assert len(refs) == 27  # the PDF's reference list: 27 entries (the header's biblStruct is not one)
    first = refs[0]
    assert first.raw.startswith("Waleed Ammar, Matthew E. Peters, Chandra Bhagavat- ula, and Russell Power. 2017.")
    assert first.title.startswith("The ai2 system at semeval-2017 task 10")
    assert first.authors == ("Ammar", "Peters", "Bhagavatula", "Power")
    assert first.year == 2017 and first.venue == "ACL workshop (SemEval)"
    assert all(r.raw_from_pdf for r in refs)
    assert first.fields()["author"] == "Ammar and Peters and Bhagavatula and Power"


def test_tei_identifiers_doi_and_corr_arxiv_ids():
    refs = parse_tei(ACL_TEI)
    assert len(refs) == 57
    assert "10.1162/tacl_a_00051" in {r.doi for r in refs}
    holmer = next(r for r in refs if r.authors[:1] == ("Holmer",))
    assert holmer.arxiv_id == "1806.01620" and holmer.fields()["eprint"] == "1806.01620"
    assert "1711.04168" in {r.arxiv_id for r in refs}  # "abs/1711.04168v3": version dropped


def test_not_tei_is_a_value_error():
    with pytest.raises(ValueError):
        parse_tei(b"<html>proxy error</html>")
    with pytest.raises(ValueError):
        parse_tei(b"\x00\x01 not xml")
    assert parse_tei(b"") == []


def test_processreferences_replayed(server):
    server.expect_request("/api/processReferences", method="POST").respond_with_handler(replay)
    tei = client(server.url_for("")).process_references(PDF, "N18-3011.pdf")
    assert len(parse_tei(tei)) == 27


def test_503_busy_is_retried_then_answers(server):
    server.expect_ordered_request("/api/processReferences").respond_with_data("busy", status=503)
    server.expect_ordered_request("/api/processReferences").respond_with_handler(replay)
    assert client(server.url_for("")).process_references(PDF) == TEI
    assert len(server.log) == 2


def test_429_retry_after_is_honoured(server):
    clock = FakeClock()
    server.expect_ordered_request("/api/processReferences").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "3"})
    server.expect_ordered_request("/api/processReferences").respond_with_handler(replay)
    assert client(server.url_for(""), clock).process_references(PDF) == TEI
    assert 3.0 in clock.sleeps


def test_429_for_ever_is_rate_limited_unavailable(server):
    server.expect_request("/api/processReferences").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "1"})
    with pytest.raises(RateLimited):
        client(server.url_for(""), FakeClock(), retries=1).process_references(PDF)


def test_unreadable_pdf_is_permanent_and_asked_once(server):
    server.expect_request("/api/processReferences").respond_with_data(
        BAD_PDF, status=500, content_type="application/json")
    with pytest.raises(PdfUnreadable, match="BAD_INPUT_DATA"):
        client(server.url_for("")).process_references(b"%PDF-1.4 truncated")
    assert len(server.log) == 1  # never retried: it would fail the same way


def test_other_500_is_unavailable_after_retries(server):
    server.expect_request("/api/processReferences").respond_with_data(
        '{"description": "java.lang.OutOfMemoryError"}', status=500)
    with pytest.raises(RemoteUnavailable) as info:
        client(server.url_for(""), retries=2).process_references(PDF)
    assert not isinstance(info.value, PdfUnreadable) and info.value.service == "grobid"
    assert len(server.log) == 3


def test_wrong_url_404_is_unavailable_not_a_reject(server):
    server.expect_request("/grobid/api/processReferences").respond_with_data("nope", status=404)
    with pytest.raises(RemoteUnavailable, match="HTTP 404"):
        client(server.url_for("/grobid")).process_references(PDF)


def test_204_means_no_reference_list(server):
    server.expect_request("/api/processReferences").respond_with_data("", status=204)
    assert client(server.url_for("")).process_references(PDF) == b""


def test_timeout_is_unavailable(server, holding):
    server.expect_request("/api/processReferences").respond_with_handler(
        lambda request: (holding.hold(), Response(TEI))[1])
    with pytest.raises(RemoteUnavailable, match="timeout"):
        client(server.url_for(""), timeout_seconds=0.2, retries=1).process_references(PDF)


def test_connection_reset_is_retried():
    reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " + str(len(TEI)).encode()
             + b"\r\nConnection: close\r\n\r\n" + TEI)
    with ResetServer(resets=1, reply=reply) as reset:
        assert client(reset.url).process_references(PDF) == TEI
        assert reset.connections == 2


def test_server_stopped_is_unavailable(server):
    url = server.url_for("")
    server.stop()
    with pytest.raises(RemoteUnavailable, match="transport error"):
        client(url, retries=1).process_references(PDF)
