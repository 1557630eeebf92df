"""A citing paper's own title, read from its source when a run reads the paper: the ``\\title`` of an
e-print's main file (its macros expanded; ``\\thanks``, spacing and line breaks out; a class that
reads a metadata file itself), a PDF's Title metadata when it reads as one, else the largest type at
the top of its first page; kept in the ledger (``titles/<run>/``) for the site's index."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from citeledger import cli
from citeledger.ledger.reads import paper_titles
from papers.reader import read_paper
from papers.titles import first_page_title, metadata_title, tex_title

FIXTURES = Path(__file__).parent / "fixtures"


def tarball(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


BIB = "\\begin{thebibliography}{1}\\bibitem{a} A. Author, A title, J. Things 1 (2001) 1.\\end{thebibliography}"


def test_an_eprints_title_is_read_with_its_macros_and_without_its_notes():
    main = ("\\documentclass{article}\\newcommand{\\Prog}{FooBar}\n"
            "\\title[Short]{%\n\\vspace{-2em}The \\Prog\\ method: fast\\thanks{Funded by X.} \\\\[2pt] and "
            "\\emph{exact} \\texorpdfstring{$\\alpha$}{alpha}-solutions\\label{t}}\n"
            "\\begin{document}\\maketitle\n" + BIB + "\\end{document}\n")
    paper = read_paper("2501.00001.tar.gz", tarball({"ms.tex": main}))
    assert (paper.title, paper.title_source) == ("The FooBar method: fast and exact α-solutions", "LaTeX \\title")
    assert len(paper.references) == 1


def test_a_title_a_class_reads_from_its_own_metadata_file():
    """ReScience's class reads metadata.tex itself: the main file never inputs it."""
    main = "\\documentclass{rescience}\n\\begin{document}\\maketitle\n" + BIB + "\\end{document}\n"
    meta = "\\def \\articleTITLE{[Re] A replication of something}\n\\title{\\articleTITLE}\n"
    paper = read_paper("2501.00002.tar.gz", tarball({"article.tex": main, "metadata.tex": meta}))
    assert paper.title == "[Re] A replication of something"


def test_no_title_when_the_source_has_none():
    assert read_paper("2501.00003.bbl", BIB.encode()).title is None
    assert tex_title("\\documentclass{article}\\begin{document}x\\end{document}") is None


def test_a_pdfs_metadata_title_only_when_it_reads_as_one():
    assert metadata_title("[Re] Mathematical analysis of depolarization block") == \
        "[Re] Mathematical analysis of depolarization block"
    for junk in ("Microsoft Word - draft7.docx", "paper.dvi", "untitled", "main", "arXiv:2101.00001", "",
                 "https://example.org/x", "manuscript_final_version_2"):
        assert metadata_title(junk) is None, junk


def test_the_first_pages_title_is_its_largest_type_at_the_top():
    lines = [  # (x0, y0, x1, y1, text, type size), as pdftotext's boxes give them
        (90, 29, 210, 37, "Draft version August 4, 2022", 8.0),
        (90, 39, 357, 48, "Typeset using LaTeX twocolumn style in AASTeX631", 9.7),
        (10, 200, 30, 700, "arXiv:2201.00001v1 [astro-ph.HE] 1 Jan 2022", 20.0),  # the stamp, set upright
        (110, 85, 501, 95, "LEGWORK: A python package for computing the evolution and detectability", 10.0),
        (130, 98, 480, 108, "of stellar-origin gravitational-wave sources", 10.0),
        (200, 117, 300, 127, "T. Wagg, 1, 2, 3 K. Breivik", 9.0),
        (90, 300, 520, 309, "Abstract. We present a package.", 9.0),
    ]
    assert first_page_title(lines, 612.0) == ("LEGWORK: A python package for computing the evolution and "
                                              "detectability of stellar-origin gravitational-wave sources")
    assert first_page_title([(90, 85, 300, 95, "Introduction", 12.0)], 612.0) is None  # one word: no title


@pytest.mark.skipif(not __import__("shutil").which("pdftotext"), reason="poppler-utils' pdftotext is not installed")
def test_a_pdfs_title_is_read_with_its_references():
    from papers.pdf.read import read_pdf_text

    paper = read_pdf_text("2101.00001.pdf", (FIXTURES / "pdfs" / "upshall-ReScience-Qian2014.pdf").read_bytes())
    assert paper.title.startswith("[Re] Mathematical analysis of depolarization block") and paper.references
    assert paper.title_source == "PDF metadata"
    first = read_pdf_text("2101.00002.pdf", (FIXTURES / "pdfs" / "farr-HowManySamples.pdf").read_bytes())
    assert (first.title, first.title_source) == ("How Many Samples Do We Need?", "PDF first page")


def test_a_run_keeps_the_titles_of_the_papers_it_reads(tmp_path, default_catalog):
    ledger = tmp_path / "ledger"
    assert cli.main(["resolve", str(FIXTURES / "papers" / "1911.13021.tar.gz"), str(FIXTURES / "papers" / "1202.3665.gz"),
                     "--catalog", str(default_catalog), "--ledger", str(ledger)]) == 0
    assert paper_titles(ledger) == {"1911.13021": ["Efficient Calibration of Embedded MPC", "LaTeX \\title"],
                                    "1202.3665": ["emcee: The MCMC Hammer", "LaTeX \\title"]}
    assert sorted(p.name for p in (ledger / "titles").iterdir()) == [
        p.name for p in (ledger / "observations").iterdir()]  # one part per run that read papers
