"""A PDF dropped in the nightly inbox: read through GROBID when one is configured (replayed by a
local server, see tests/fixtures/grobid/PROVENANCE.md), while it is down the file stays in the inbox,
rejected with the reason, and the next night reads it; with no GROBID configured the built-in reader
(poppler's pdftotext) reads it the same night."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from remote_server import server  # noqa: F401
from test_pdf_papers import rows
from werkzeug import Request, Response

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.inputs.pdf_papers import forget_clients
from citeledger.nightly import steps as nightly
from citeledger.run import batches

FIXTURES = Path(__file__).parent / "fixtures"
PDF = (FIXTURES / "grobid" / "N18-3011.pdf").read_bytes()
TEI = (FIXTURES / "grobid" / "N18-3011.tei.xml").read_bytes()


@pytest.fixture
def site(tmp_path, monkeypatch):
    dirs = {k: tmp_path / k for k in ("catalog", "ledger", "inbox", "processed")}
    CatalogStore(dirs["catalog"]).build([FIXTURES / "grobid" / "cited_works.jsonl"])
    dirs["inbox"].mkdir()
    (dirs["inbox"] / "1805.02262.pdf").write_bytes(PDF)
    monkeypatch.setenv("CITELEDGER_GROBID_RETRIES", "0")
    monkeypatch.delenv("CITELEDGER_GROBID_URL", raising=False)
    forget_clients()
    yield dirs
    forget_clients()


def night(site) -> nightly.NightlySummary:
    work = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=10)
    if work.plan is None:
        return nightly.idle_nightly(work, site["ledger"], site["catalog"], site["processed"], False)
    for job in work.plan.pending:
        batches.run_batch(job)
    return nightly.complete_nightly(work, site["processed"])


def grobid(request: Request) -> Response:
    return Response(TEI if request.files["input"].read() == PDF else b"", content_type="application/xml")


def test_pdf_in_the_inbox_waits_while_grobid_is_down_then_is_read(site, server, monkeypatch):
    pdf = site["inbox"] / "1805.02262.pdf"
    # GROBID configured but down: unavailable, the file stays (the built-in reader does not step in)
    monkeypatch.setenv("CITELEDGER_GROBID_URL", server.url_for("").rstrip("/"))
    forget_clients()
    server.stop()
    second = night(site)
    assert second.run is not None and "unavailable: GROBID could not answer" in second.run.reject_messages[0]
    assert pdf.exists() and second.files == []
    # GROBID back: the next night reads the PDF, links what the catalog holds, moves the file
    server.start()
    server.expect_request("/api/processReferences", method="POST").respond_with_handler(grobid)
    third = night(site)
    assert third.run is not None and third.run.references == 27 and third.run.rejects == 0
    assert third.run.states["verified_fuzzy"] == 4
    assert not pdf.exists() and [Path(f).name for f in third.files] == ["1805.02262.pdf"]
    assert len(server.log) == 1  # read twice that night (the nightly's look, then the run): asked once
    assert night(site).run is None  # nothing new: nothing written


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (Debian package poppler-utils) is not installed")
def test_pdf_in_the_inbox_without_grobid_is_read_by_the_built_in_reader(site):
    first = night(site)
    assert first.run is not None and first.run.references == 27 and first.run.rejects == 0
    assert not (site["inbox"] / "1805.02262.pdf").exists() and [Path(f).name for f in first.files] == ["1805.02262.pdf"]
    assert {r["source"] for r in rows(site["ledger"], "observations")} == {"pdf_text"}
