"""The built-in PDF reader on real PDFs it was not written for: papers answered from the LaTeX
source committed beside them (tests/fixtures/pdf_corpus/) and the test PDFs of refextract and
CERMINE (tests/fixtures/peer_pdfs/), each held to its answer as tests/pdf_corpus.py scores it.

The reader does not yet read every one of them exactly (benchmarks/RESULTS.md has the table), so
each PDF is held to the figures last measured (tests/fixtures/pdf_floors.json, written by
``benchmarks/bench_pdf_corpus.py --floors``): no fewer entries found, no more rows past the printed
count, no fewer printed identifiers found, no more invented and no more over-long entries. A rule
that reads a PDF better raises its floor when the file is written again; one that reads it worse
fails here."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from pdf_corpus import answers, score

from papers.pdf.read import pdf_reference_strings, pdftotext_path

FLOORS_FILE = Path(__file__).parent / "fixtures" / "pdf_floors.json"
FLOORS = json.loads(FLOORS_FILE.read_text(encoding="utf-8")) if FLOORS_FILE.is_file() else {}
ANSWERS = {a.pdf.name: a for a in answers(("source", "peers"))}
needs_pdftotext = pytest.mark.skipif(pdftotext_path() is None,
                                     reason="pdftotext (Debian package poppler-utils) is not installed")


def test_every_pdf_has_an_answer_a_floor_and_its_file():
    assert len(ANSWERS) >= 68
    assert set(FLOORS) == set(ANSWERS)
    assert all(a.pdf.is_file() for a in ANSWERS.values())


@needs_pdftotext
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_reader_holds_its_measured_figures(name):
    answer, floor = ANSWERS[name], FLOORS[name]
    got = score(answer, pdf_reference_strings(answer.pdf.read_bytes()))
    assert got["found"] >= floor["found"], f"{got['found']} of {answer.entries} entries, was {floor['found']}"
    assert got["count"] <= max(floor["count"], answer.entries), f"{got['count']} rows for {answer.entries} entries"
    assert got["ids_found"] >= floor["ids_found"], f"printed ids missed: {got['missed'][:5]}"
    assert len(got["invented"]) <= floor["invented"], f"identifiers no entry prints: {got['invented'][:5]}"
    assert len(got["too_long"]) <= floor["too_long"], f"entries over {answer.longest} characters: {got['too_long']}"
