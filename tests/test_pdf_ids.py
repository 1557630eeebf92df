"""A citing id for every PDF: its own arXiv id or DOI (metadata, then the first page), else its file
name; in the nightly a PDF is never rejected for its name, and a file rejected whole goes to
``rejected/``, never to ``processed/``."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_nightly_pdf import night

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.inputs.pdf_papers import forget_clients
from papers.pdf.ids import PdfId, own_id, pdf_id

FIXTURES = Path(__file__).parent / "fixtures"
ARXIV_PDF = FIXTURES / "peer_pdfs" / "refextract-2110.02751.pdf"  # arXiv's stamp on its first page
DOI_PDF = FIXTURES / "pdf_corpus" / "ALICE-InRu-linear-dispatch-rules.pdf"  # a DOI in its metadata
poppler = pytest.mark.skipif(shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None,
                             reason="poppler-utils (pdftotext, pdfinfo) is not installed")


def test_the_first_page_counts_arxiv_s_stamp_and_one_doi_only():
    assert own_id("arXiv:2501.00254v1  [cs.LG]  1 Jan 2025 as shown in arXiv:1706.03762", stamp_only=True) == \
        "2501.00254"
    assert own_id("arXiv:hep-th/9901001v2 [hep-th] 3 Feb 1999", stamp_only=True) == "hep-th/9901001"
    assert own_id("see arXiv:1706.03762 for more", stamp_only=True) is None  # a cited id, not the stamp
    assert own_id("DOI: 10.1103/PhysRevD.1.1 and https://doi.org/10.1103/physrevd.1.1", stamp_only=True) == \
        "10.1103/physrevd.1.1"
    assert own_id("doi:10.1000/a and doi:10.1000/b", stamp_only=True) is None  # two: which is its own?
    assert own_id("Annu. Rev. doi: 10.1146/tbd", stamp_only=True) is None  # a DOI still to come
    assert own_id("Subject: arXiv:2101.00001") == "2101.00001"  # metadata: any one arXiv id


@poppler
def test_a_pdf_s_own_id_comes_before_its_name():
    assert pdf_id("paper.pdf", ARXIV_PDF.read_bytes()) == PdfId("2110.02751", "first page")
    assert pdf_id("x/scan.pdf", DOI_PDF.read_bytes()) == PdfId("10.1007/s10951-017-0534-0", "metadata")
    assert pdf_id("inbox/hep-th_9901001.pdf", b"not a pdf") == PdfId("hep-th/9901001", "file name")
    assert pdf_id("inbox/my paper.pdf", b"not a pdf") == PdfId("my paper", "file name")


@pytest.fixture
def site(tmp_path, monkeypatch):
    dirs = {k: tmp_path / "data" / k for k in ("catalog", "ledger", "inbox", "processed")}
    CatalogStore(dirs["catalog"]).build([FIXTURES / "grobid" / "cited_works.jsonl"])
    dirs["inbox"].mkdir()
    monkeypatch.delenv("CITELEDGER_GROBID_URL", raising=False)
    forget_clients()
    yield dirs
    forget_clients()


@poppler
def test_a_pdf_named_paper_pdf_in_the_inbox_gets_its_id_from_its_content(site):
    shutil.copy(ARXIV_PDF, site["inbox"] / "paper.pdf")
    (site["inbox"] / "broken.tar.gz").write_bytes(b"this is no archive")
    summary = night(site)
    assert summary.run is not None and summary.run.references > 10
    import duckdb

    papers = duckdb.sql(f"select distinct citing_paper from read_parquet('{site['ledger']}/observations/**/*.parquet')"
                        ).fetchall()
    assert papers == [("2110.02751",)]
    run_id = summary.run.run_id
    assert [Path(f) for f in summary.files] == [site["processed"] / run_id / "paper.pdf"]
    rejected = site["processed"].parent / "rejected" / run_id / "broken.tar.gz"
    assert [Path(f) for f in summary.rejected] == [rejected] and rejected.is_file()
    assert not (site["processed"] / run_id / "broken.tar.gz").exists() and not list(site["inbox"].iterdir())
