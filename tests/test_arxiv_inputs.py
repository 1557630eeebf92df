"""``arXiv:ID`` inputs with ``--remote``: the e-print fetched (replayed by a local server: a real
paper's source from tests/fixtures/papers/), read with the papers package and kept under the
ledger so a re-run asks nothing; the PDF through GROBID when the source holds no bibliography;
arXiv down; no --remote."""
from __future__ import annotations

import tarfile
from pathlib import Path

import duckdb
import pytest
from archives import tar_bytes
from remote_server import server  # noqa: F401
from werkzeug import Request, Response

from citeledger import cli
from citeledger.inputs.pdf_papers import forget_clients

FIXTURES = Path(__file__).parent / "fixtures"
EPRINT = (FIXTURES / "papers" / "1911.13021.tar.gz").read_bytes()  # .bbl of 19 entries
PDF = (FIXTURES / "grobid" / "N18-3011.pdf").read_bytes()
TEI = (FIXTURES / "grobid" / "N18-3011.tei.xml").read_bytes()


def source_without_bibliography() -> bytes:
    """A source that holds no bibliography: one real table file of 1607.08237's source, tarred
    and gzipped as arXiv serves e-prints."""
    with tarfile.open(FIXTURES / "papers" / "1607.08237.tar.gz") as tar:
        member = tar.getmember("masstab.tex")
        data = tar.extractfile(member).read()  # type: ignore[union-attr]
    return tar_bytes({"masstab.tex": data})


@pytest.fixture
def arxiv_env(server, monkeypatch):
    """Every arXiv URL at the local server, no pause between requests, arXiv's API down (503:
    the references' own identifiers are then ``unavailable``, which these tests do not look at)."""
    base = server.url_for("")
    monkeypatch.setenv("CITELEDGER_ARXIV_EPRINT_URL", base + "e-print")
    monkeypatch.setenv("CITELEDGER_ARXIV_PDF_URL", base + "pdf")
    monkeypatch.setenv("CITELEDGER_ARXIV_URL", base + "api/query")
    monkeypatch.setenv("CITELEDGER_REMOTE", "arxiv")
    monkeypatch.setenv("CITELEDGER_ARXIV_MIN_INTERVAL_SECONDS", "0")
    monkeypatch.setenv("CITELEDGER_ARXIV_RETRIES", "0")
    monkeypatch.setenv("CITELEDGER_GROBID_URL", base.rstrip("/"))
    monkeypatch.setenv("CITELEDGER_GROBID_RETRIES", "0")
    forget_clients()
    server.expect_request("/api/query").respond_with_data("down", status=503)
    yield server
    forget_clients()


def observations(ledger: Path) -> list[dict]:
    files = [str(f) for f in (ledger / "observations").rglob("*.parquet")]
    if not files:
        return []
    rel = duckdb.sql(f"select * from read_parquet({files}, union_by_name=true) order by run_id, reference_index")
    return [dict(zip(rel.columns, r)) for r in rel.fetchall()]


def resolve(ledger: Path, catalog: Path, *inputs: str) -> int:
    return cli.main(["resolve", *inputs, "--catalog", str(catalog), "--ledger", str(ledger), "--remote"])


def fetched(server) -> list[str]:
    return [r.path for r, _ in server.log if not r.path.startswith("/api/query")]


def test_arxiv_id_fetches_the_eprint_once_and_reads_its_bibliography(arxiv_env, tmp_path, default_catalog):
    server = arxiv_env
    server.expect_request("/e-print/1911.13021").respond_with_data(EPRINT, content_type="application/x-eprint-tar")
    ledger = tmp_path / "ledger"
    assert resolve(ledger, default_catalog, "arXiv:1911.13021") == 0
    rows = observations(ledger)
    assert len(rows) == 19 and [r["reference_index"] for r in rows] == list(range(1, 20))
    assert {r["citing_paper"] for r in rows} == {"1911.13021"} and {r["source"] for r in rows} == {"arxiv_source"}
    assert fetched(server) == ["/e-print/1911.13021"]
    agent = next(r for r, _ in server.log if r.path.startswith("/e-print")).headers["User-Agent"]
    assert agent.startswith("citeledger/")
    # kept under the ledger: a re-run asks arXiv nothing, even with arXiv gone
    server.stop()
    assert resolve(ledger, default_catalog, "arXiv:1911.13021") == 0
    assert len(observations(ledger)) == 2 * 19
    assert (ledger / "_cache" / "arxiv" / "1911.13021.eprint").read_bytes() == EPRINT


def test_source_without_bibliography_falls_back_to_the_pdf_through_grobid(arxiv_env, tmp_path, default_catalog):
    server = arxiv_env
    server.expect_request("/e-print/1805.02262").respond_with_data(source_without_bibliography())
    server.expect_request("/pdf/1805.02262").respond_with_data(PDF, content_type="application/pdf")

    def grobid(request: Request) -> Response:
        ok = request.files["input"].read() == PDF
        return Response(TEI if ok else "unexpected", status=200 if ok else 400, content_type="application/xml")

    server.expect_request("/api/processReferences", method="POST").respond_with_handler(grobid)
    ids = tmp_path / "ids.txt"
    ids.write_text("arXiv:1805.02262\n")  # a file of ids
    ledger = tmp_path / "ledger"
    assert resolve(ledger, default_catalog, str(ids)) == 0
    rows = observations(ledger)
    assert len(rows) == 27 and {r["source"] for r in rows} == {"pdf_text"}
    assert {r["citing_paper"] for r in rows} == {"1805.02262"}
    assert fetched(server) == ["/e-print/1805.02262", "/pdf/1805.02262", "/api/processReferences"]


def test_arxiv_down_is_an_unavailable_reject_and_the_run_goes_on(arxiv_env, tmp_path, default_catalog, capsys):
    server = arxiv_env
    server.expect_request("/e-print/1911.13021").respond_with_data("busy", status=503)
    server.expect_request("/e-print/2006.02250").respond_with_data(
        (FIXTURES / "papers" / "2006.02250.tar.gz").read_bytes())
    assert resolve(tmp_path / "ledger", default_catalog, "arXiv:1911.13021", "arXiv:2006.02250") == 0
    out = capsys.readouterr().out
    assert "rejected arXiv:1911.13021: unavailable: arXiv could not answer" in out
    assert {r["citing_paper"] for r in observations(tmp_path / "ledger")} == {"2006.02250"}


def test_arxiv_id_without_remote_is_a_user_error(tmp_path, default_catalog, capsys):
    assert cli.main(["resolve", "arXiv:1911.13021", "--catalog", str(default_catalog),
                     "--ledger", str(tmp_path / "ledger")]) == 2
    assert "needs --remote" in capsys.readouterr().err
    assert cli.main(["resolve", "arXiv:1501.1234", "--remote", "--catalog", str(default_catalog),
                     "--ledger", str(tmp_path / "ledger")]) == 2
    assert "not a well-formed arXiv id" in capsys.readouterr().err


@pytest.mark.parametrize("payload, source, count", [
    ("papers/1202.3665.gz", "arxiv_source", 34),  # a single-file submission: one gzipped .tex
    ("grobid/N18-3011.pdf", "pdf_text", 27),  # a PDF-only submission: the e-print is the PDF
])
def test_eprint_kind_is_told_by_its_bytes(arxiv_env, tmp_path, default_catalog, payload, source, count):
    server = arxiv_env
    server.expect_request("/e-print/1202.3665").respond_with_data((FIXTURES / payload).read_bytes())
    server.expect_request("/api/processReferences", method="POST").respond_with_data(
        TEI, content_type="application/xml")
    assert resolve(tmp_path / "ledger", default_catalog, "arXiv:1202.3665") == 0
    rows = observations(tmp_path / "ledger")
    assert len(rows) == count and {r["source"] for r in rows} == {source}
    assert "/pdf/1202.3665" not in fetched(server)  # a PDF e-print is not fetched twice


def test_eprint_downloads_and_arxiv_lookups_share_one_polite_client(arxiv_env):
    """Before: pdf_papers built a second client for arXiv, so e-print downloads and the API's
    lookups kept two rate gates, two circuit breakers: arXiv asked twice as often as its
    three seconds allow."""
    from citeledger.engine.process_cache import get_remote
    from citeledger.inputs.pdf_papers import arxiv_files

    remote = get_remote(True)
    assert remote.arxiv is not None and arxiv_files().http is remote.arxiv.http
