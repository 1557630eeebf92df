"""PDF papers through GROBID, end to end through the CLI: a local server replays the TEI GROBID
gave for a real PDF (tests/fixtures/grobid/PROVENANCE.md); GROBID stopped, then back; a PDF GROBID
cannot read; no GROBID configured."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from remote_server import (
    fast,
    server,  # noqa: F401
)
from werkzeug import Request, Response

from citeledger import cli
from citeledger.inputs.pdf_papers import PdfService, forget_clients, read_pdf
from papers.paper_model import ExtractedReference, PaperReferences
from resolvers.remote.grobid import GrobidClient
from resolvers.remote.http import PoliteClient

GROBID = Path(__file__).parent / "fixtures" / "grobid"
PDF = (GROBID / "N18-3011.pdf").read_bytes()
TEI = (GROBID / "N18-3011.tei.xml").read_bytes()
BAD_PDF = json.dumps({"type": "org.grobid.core.exceptions.GrobidException", "code": 500, "requestUri": None,
                      "description": "org.grobid.core.exceptions.GrobidException:[BAD_INPUT_DATA] PDF to XML "
                                     "conversion failed with error code: 1"})


def replay(request: Request) -> Response:
    if request.files["input"].read() == PDF:
        return Response(TEI, content_type="application/xml")
    return Response(BAD_PDF, status=500, content_type="application/json")


@pytest.fixture
def grobid_env(monkeypatch):
    """Quick retries; CITELEDGER_GROBID_URL set here so the --grobid the CLI sets is undone after."""
    monkeypatch.setenv("CITELEDGER_GROBID_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CITELEDGER_GROBID_RETRIES", "1")
    monkeypatch.setenv("CITELEDGER_GROBID_BACKOFF_BASE_SECONDS", "0.01")
    monkeypatch.setenv("CITELEDGER_GROBID_TIMEOUT_SECONDS", "5")
    forget_clients()
    yield
    forget_clients()


def rows(ledger: Path, view: str) -> list[dict]:
    files = list((ledger / view).rglob("*.parquet"))
    if not files:
        return []
    rel = duckdb.sql(f"select * from read_parquet({[str(f) for f in files]}, union_by_name=true)")
    return [dict(zip(rel.columns, r)) for r in rel.fetchall()]


def resolve(pdf: Path, ledger: Path, catalog: Path, *extra: str) -> int:
    return cli.main(["resolve", str(pdf), "--catalog", str(catalog), "--ledger", str(ledger),
                     "--citing-paper", "1805.02262", *extra])


def test_pdf_unavailable_while_grobid_is_stopped_then_resolves_when_back(server, grobid_env, tmp_path,
                                                                         default_catalog, capsys):
    pdf, ledger, url = tmp_path / "N18-3011.pdf", tmp_path / "ledger", server.url_for("")
    pdf.write_bytes(PDF)
    server.stop()
    assert resolve(pdf, ledger, default_catalog, "--grobid", url) == 3  # no input row could be read (yet)
    out = capsys.readouterr().out
    assert "unavailable: GROBID could not answer" in out and "next run" in out
    assert rows(ledger, "observations") == []
    [reject] = rows(ledger, "rejects")
    assert reject["file"] == str(pdf) and reject["reason"].startswith("unavailable: GROBID could not answer")

    server.start()
    server.expect_request("/api/processReferences", method="POST").respond_with_handler(replay)
    assert resolve(pdf, ledger, default_catalog, "--grobid", url) == 0
    observed = rows(ledger, "observations")
    assert len(observed) == 27  # every entry of the PDF's reference list, once
    assert {r["source"] for r in observed} == {"pdf_text"} and {r["citing_paper"] for r in observed} == {"1805.02262"}
    assert sorted(r["reference_index"] for r in observed) == list(range(1, 28))
    first = next(r for r in observed if r["reference_index"] == 1)
    assert first["raw"].startswith("Waleed Ammar, Matthew E. Peters")
    assert len(server.log) == 1

    # the TEI is kept under the ledger: a re-run asks GROBID nothing, even with GROBID gone
    server.stop()
    assert resolve(pdf, ledger, default_catalog, "--grobid", url) == 0
    assert "could not answer" not in capsys.readouterr().out
    assert len(rows(ledger, "observations")) == 2 * 27  # two runs, each with every reference


def test_pdf_grobid_cannot_read_is_a_reject_and_the_run_goes_on(server, grobid_env, tmp_path, default_catalog,
                                                                capsys):
    server.expect_request("/api/processReferences", method="POST").respond_with_handler(replay)
    broken, ledger = tmp_path / "2501.00254.pdf", tmp_path / "ledger"
    broken.write_bytes(PDF[:2000])  # a truncated PDF
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "Vaswani et al. Attention is all "
                                "you need. NeurIPS 2017."}) + "\n")
    assert cli.main(["resolve", str(broken), str(refs), "--catalog", str(default_catalog), "--ledger", str(ledger),
                     "--grobid", server.url_for(""), "--citing-paper", "2501.00254"]) == 0
    [reject] = rows(ledger, "rejects")
    assert reject["file"] == str(broken)
    assert reject["reason"].startswith("pdf_unreadable: GROBID cannot read this PDF (BAD_INPUT_DATA)")
    assert len(rows(ledger, "observations")) == 1
    assert len(server.log) == 1  # a PDF GROBID cannot read is not sent again


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (Debian package poppler-utils) is not installed")
def test_pdf_without_grobid_is_read_by_the_built_in_reader(tmp_path, default_catalog, monkeypatch):
    monkeypatch.delenv("CITELEDGER_GROBID_URL", raising=False)
    forget_clients()
    pdf, ledger = tmp_path / "1805.02262.pdf", tmp_path / "ledger"
    pdf.write_bytes(PDF)
    assert cli.main(["resolve", str(pdf), "--catalog", str(default_catalog), "--ledger", str(ledger),
                     "--citing-paper", "1805.02262"]) == 0
    observed = rows(ledger, "observations")
    assert rows(ledger, "rejects") == [] and len(observed) == 27  # the hand count of its reference list
    assert {r["source"] for r in observed} == {"pdf_text"} and [r["reference_index"] for r in observed] == \
        sorted(r["reference_index"] for r in observed)


def test_pdf_without_grobid_or_pdftotext_waits_for_a_later_run(tmp_path, default_catalog, monkeypatch):
    monkeypatch.delenv("CITELEDGER_GROBID_URL", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no pdftotext on the path
    forget_clients()
    pdf, ledger = tmp_path / "1805.02262.pdf", tmp_path / "ledger"
    pdf.write_bytes(PDF)
    cli.main(["resolve", str(pdf), "--catalog", str(default_catalog), "--ledger", str(ledger),
              "--citing-paper", "1805.02262"])  # (its exit code: that no row could be read)
    [reject] = rows(ledger, "rejects")
    assert reject["reason"].startswith("pdf_text_unavailable")


def test_read_pdf_keeps_grobids_fields_beside_the_raw_string(server):
    server.expect_request("/api/processReferences", method="POST").respond_with_handler(replay)
    service = PdfService(GrobidClient(PoliteClient("grobid", fast()), server.url_for("")))
    paper = read_pdf("N18-3011.pdf", PDF, "1805.02262", service)
    assert [r.order for r in paper.references] == list(range(1, 28)) and not paper.rejects
    collobert = next(r for r in paper.references if r.raw.startswith("Ronan Collobert"))
    assert collobert.fields["title"] == "Natural language processing (almost) from scratch"
    assert collobert.fields["author"].startswith("Collobert and Weston")
    assert collobert.source == "pdf_text"
    # the papers package's own records (before: copies of them, PdfPaper and PdfReference)
    assert isinstance(paper, PaperReferences) and isinstance(collobert, ExtractedReference)
    assert (paper.form, collobert.kind, collobert.member) == ("pdf", "pdf", None)


def test_pdf_references_link_and_grobids_fields_reach_the_verifier(server, grobid_env, tmp_path, capsys):
    """Four works the PDF cites are in the catalog: those four references link (verified_fuzzy),
    the other 23 stay unresolved; GROBID's fields travel with each reference through the batches
    to the parser (the hyphen a line break left in the raw title is gone in GROBID's title)."""
    catalog, ledger, pdf = tmp_path / "catalog", tmp_path / "ledger", tmp_path / "N18-3011.pdf"
    pdf.write_bytes(PDF)
    assert cli.main(["catalog", "build", "--catalog", str(catalog), str(GROBID / "cited_works.jsonl")]) == 0
    server.expect_request("/api/processReferences", method="POST").respond_with_handler(replay)
    assert resolve(pdf, ledger, catalog, "--grobid", server.url_for(""), "--batch-size", "10") == 0
    linked = {r["reference_index"]: r["work_id"] for r in rows(ledger, "observations")
              if r["status"] == "verified_fuzzy"}
    assert linked == {5: "arxiv:1103.0398", 7: "arxiv:0907.1815", 12: "doi:10.1162/neco.1997.9.8.1735",
                      18: "doi:10.1162/tacl_a_00141"}


def test_fields_survive_the_batch_payload_and_win_over_the_parse():
    from citeledger.run.batch_codec import pack_references
    from citeledger.run.planning import BatchJob
    from resolvers.model import Reference
    from resolvers.parsing.fields import apply_fields, parse_reference

    raw = "Hal Daumé. 2007. Frustratingly easy domain adapta- tion. In ACL."
    fields = (("author", "Daumé"), ("journal", "ACL"), ("title", "Frustratingly easy domain adaptation"),
              ("year", "2007"))
    refs = [Reference("p", 1, raw, "pdf_text", fields=fields), Reference("p", 2, "no fields", "bbl")]
    job = BatchJob("r", "part", "c", "l", None, "f", pack_references(refs), 2)  # type: ignore[arg-type]
    assert job.references == tuple(refs)
    assert parse_reference(raw).title == "Frustratingly easy domain adapta- tion"
    parsed = apply_fields(parse_reference(raw), dict(fields))
    assert parsed.title == "Frustratingly easy domain adaptation" and parsed.authors == ["Daumé"]
    assert parsed.venue == "ACL" and parsed.year == 2007


def test_without_grobid_or_remote_no_byte_leaves_the_machine(tmp_path, default_catalog, monkeypatch, capsys):
    import os
    import socket

    attempts: list = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise AssertionError("network connection attempted")

    for key in [k for k in os.environ if k.startswith("CITELEDGER_")]:
        monkeypatch.delenv(key)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    forget_clients()
    pdf, ids, ledger = tmp_path / "1805.02262.pdf", tmp_path / "ids.txt", tmp_path / "ledger"
    pdf.write_bytes(PDF)
    ids.write_text("arXiv:1805.02262\n")
    common = ["--catalog", str(default_catalog), "--ledger", str(ledger)]
    assert cli.main(["resolve", str(pdf), *common]) == 0
    assert cli.main(["resolve", "arXiv:1805.02262", *common]) == 2
    assert cli.main(["resolve", str(ids), *common]) == 2
    assert capsys.readouterr().err.count("needs --remote") == 2
    assert attempts == []
    assert not (ledger / "_cache").exists()  # nothing was fetched, so nothing was kept
