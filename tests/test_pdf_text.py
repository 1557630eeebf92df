"""The built-in PDF reader (``papers.pdf.read``): a PDF's references without GROBID.

Real PDFs: the GROBID fixture (tests/fixtures/grobid/PROVENANCE.md), whose 27 references GROBID
also read, and every PDF of tests/fixtures/pdfs/ against its hand count. PDFs written here
(tests/pdf_pages.py) pin the layout rules with known content: two columns, labels, hanging
indents, running headers, identifiers cut by a line break. The bounds are shown with stand-in
programs (a pdftotext that never ends, one that writes without end, one that is not there)."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pdf_pages import PAGE_W, column_lines, make_pdf, nested_forms_pdf
from rapidfuzz import fuzz

from papers.paper_model import MiB
from papers.pdf.entries import reference_strings, split_entries, without_page_edges
from papers.pdf.joins import join_lines
from papers.pdf.layout import page_order, reading_order
from papers.pdf.read import (
    MAX_MEMORY_BYTES,
    SOURCE,
    PdfTextLimits,
    PdfTextProblem,
    layout_xhtml,
    pdf_reference_strings,
    pdftotext_path,
    read_pdf_text,
)
from papers.pdf.words import Line, Page, Word, join_spaced, split_at_columns
from resolvers.identifiers.extract import extract_identifiers
from resolvers.remote.grobid import parse_tei

FIXTURES = Path(__file__).parent / "fixtures"
GROBID = FIXTURES / "grobid"
PDFS = FIXTURES / "pdfs"
needs_pdftotext = pytest.mark.skipif(pdftotext_path() is None,
                                     reason="pdftotext (Debian package poppler-utils) is not installed")


# --- real PDFs --------------------------------------------------------------------------------

@needs_pdftotext
def test_the_grobid_fixture_gives_grobid_s_27_references_in_order():
    ours = pdf_reference_strings((GROBID / "N18-3011.pdf").read_bytes())
    theirs = [ref.raw for ref in parse_tei((GROBID / "N18-3011.tei.xml").read_bytes())]
    assert len(ours) == len(theirs) == 27
    # GROBID keeps the line-end hyphens ("Bhagavat- ula"); compare the strings without them
    for mine, grobid in zip(ours, theirs):
        assert fuzz.ratio(mine, grobid.replace("- ", "")) > 90, (mine, grobid)
    assert ours[0].startswith("Waleed Ammar, Matthew E. Peters")  # the left column comes first
    assert "Bhagavatula" in ours[0] and "Valenzuela-Escarcega" in ours[10]


def _expected() -> dict[str, dict]:
    """The corpus's hand counts (tests/fixtures/pdfs/expected_pdfs.json: each PDF's entries and,
    for the short lists, each entry's printed DOIs and arXiv ids)."""
    manifest = PDFS / "expected_pdfs.json"
    if not manifest.is_file():
        return {}
    return {k: v for k, v in json.loads(manifest.read_text(encoding="utf-8")).items() if not k.startswith("_")}


EXPECTED = _expected()
# The PDFs are in the fixtures folder (tests/fixtures/pdfs/PROVENANCE.md); $CITELEDGER_PAPER_PDFS names another.
CORPUS_PDFS = Path(os.environ.get("CITELEDGER_PAPER_PDFS") or PDFS)


@needs_pdftotext
def test_two_entries_opening_alike_at_a_page_foot_and_the_next_head_are_not_a_running_header():
    same = "Abbott, R., Abbott, T. D., Acernese, F., Ackley, K.,"
    first = [[f"[{n}] {NAMES[n]}, A. A work. J. Tests {n}, 1.", "More of the entry."] for n in range(1, 5)]
    first.append(["[5] " + same, "et al. Population of merging binaries. PRX 13, 011048."])
    col, _ = column_lines(first, 72, 560, step=22, label_width=18)  # the last line is the page's foot
    second = [["[6] " + same, "et al. GWTC-3. PRX 13, 041039."]]
    second += [[f"[{n}] {NAMES[n]}, B. Another. J. Tests {n}, 2."] for n in range(7, 10)]
    col2, _ = column_lines(second, 72, 60, label_width=18)
    refs = pdf_reference_strings(make_pdf([[(72, 40, "References")] + col, col2]))
    assert len(refs) == 9
    assert refs[4].startswith("Abbott, R.") and refs[5].startswith("Abbott, R.")


@needs_pdftotext
@pytest.mark.skipif(not EXPECTED, reason="no tests/fixtures/pdfs/expected_pdfs.json on this branch")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_pdf_finds_90_percent_of_the_hand_count_and_only_the_printed_ids(name):
    pdf = CORPUS_PDFS / name
    want = EXPECTED[name]
    refs = pdf_reference_strings(pdf.read_bytes())
    assert len(refs) >= 0.9 * want["entries"], f"{len(refs)} of {want['entries']}"
    assert len(refs) <= want["entries"] + max(1, want["entries"] // 10), "entries split or junk read as entries"
    if want.get("ids") and len(refs) == len(want["ids"]):
        for raw, (dois, arxiv_ids) in zip(refs, want["ids"]):
            found = extract_identifiers(raw)
            assert (set(found.dois), set(found.arxiv_ids)) == (set(dois), set(arxiv_ids)), raw
    elif want.get("ids"):  # entries cut differently: at least no id the list does not print
        printed = {i for dois, arxiv_ids in want["ids"] for i in dois + arxiv_ids}
        read = {i for raw in refs for i in extract_identifiers(raw).dois + extract_identifiers(raw).arxiv_ids}
        assert read <= printed


# --- layout rules on written PDFs ---------------------------------------------------------------

def _two_column_page() -> list[tuple[float, float, str]]:
    header = [(72, 40, "Journal of Tests 12 (2020) 1-9"), (300, 760, "7")]
    title = [(72, 70, "A title that runs across both columns of the page, as titles and wide figures do")]
    body = [(72, 100 + 11 * i, f"Body text of the left column, line {i}.") for i in range(6)]
    left, y = column_lines([["References"],
                            ["[1] A. Author and B. Writer. A first work on", "things. J. Tests 1, 2 (2001)."],
                            ["[2] C. Third. A second work. Phys. Rev. D 93,", "042004 (2016), arXiv:1402.",
                             "1517."]], 72, 180, label_width=14)
    right, _ = column_lines([["[3] D. Fourth. Semi-supervised learning of inter-", "ventions. In Proc. (2019)."],
                             ["[4] E. Fifth. A DOI cut at a line end, doi:10.1016/j.", "cell.2009.01.002."],
                             ["[5] F. Sixth. Valenzuela-", "Escarcega and the range 482-", "5 of pages."]],
                            320, 100, label_width=14)
    return header + title + body + left + right


@needs_pdftotext
def test_two_columns_are_read_left_then_right_with_labels_stripped_and_breaks_joined():
    second = [(72, 40, "Journal of Tests 12 (2020) 1-9"), (300, 760, "8"),
              (72, 100, "Appendix A. Proofs"), (72, 111, "[6] Not a reference: an appendix line.")]
    refs = pdf_reference_strings(make_pdf([_two_column_page(), second]))
    assert refs == [
        "A. Author and B. Writer. A first work on things. J. Tests 1, 2 (2001).",
        "C. Third. A second work. Phys. Rev. D 93, 042004 (2016), arXiv:1402.1517.",
        "D. Fourth. Semi-supervised learning of interventions. In Proc. (2019).",
        "E. Fifth. A DOI cut at a line end, doi:10.1016/j.cell.2009.01.002.",
        "F. Sixth. Valenzuela-Escarcega and the range 482-5 of pages.",
    ]


NAMES = ["Adams", "Baker", "Clark", "Dunn", "Evans", "Fox", "Gray", "Hall", "Ibsen", "Jones", "King", "Lee"]
TOPICS = ["ants", "bees", "cats", "dogs", "eels", "figs", "gas", "heat", "light", "joules", "kelp", "lava"]


@needs_pdftotext
def test_running_headers_and_page_numbers_are_not_read_into_entries():
    pages = []
    for n in range(3):
        lines = [(72, 40, f"Journal of Tests 12 (2020) {n + 1}-9"), (300, 760, str(n + 1))]
        if n == 1:
            lines.append((72, 80, "References"))
        start = 100 + 3 * 11 * (n == 1)
        entries = [[f"{NAMES[4 * n + k]}, A. (2001). A work on", f"{TOPICS[4 * n + k]}. J. Tests 1, 2."]
                   for k in range(4)]
        col, _ = column_lines(entries, 72, start, hang=12) if n else ([], 0)
        pages.append(lines + col)
    refs = pdf_reference_strings(make_pdf(pages))
    assert len(refs) == 8
    assert all("Journal of Tests" not in r and not r.endswith(("2", "3")) for r in refs)
    assert refs[4] == "Ibsen, A. (2001). A work on light. J. Tests 1, 2."


def _numbered(lines: list[tuple[float, float, str]], x: float, first: int) -> list[tuple]:
    """A manuscript's line numbers (``lineno``: small, right-aligned at ``x``) beside each line."""
    return [(x - 5 * len(str(first + k)), y, str(first + k), 6) for k, (_, y, _) in enumerate(lines)]


@needs_pdftotext
def test_margin_line_numbers_are_dropped_wherever_they_stand():
    body = [(72, 60 + 11 * i, f"Body text of the left column, line {i}.") for i in range(5)]
    left, _ = column_lines([["References"], ["[1] A. Author. A work on things. IEEE", "Trans. Vis. 12, 2 (2001),",
                                              "doi:10.1109/", "TVCG.2019.2934251."],
                            ["[2] C. Third. A second work. Phys. Rev. D 93,", "042004 (2016)."]],
                           72, 130, label_width=14)
    right, _ = column_lines([["[3] D. Fourth. A third work, doi:10.1016/j.", "cell.2009.01.002."],
                             ["[4] E. Fifth. A fourth work. J. Tests 4, 5 (2004)."],
                             ["[5] F. Sixth. The fifth. J. Tests 5, 6 (2005)."],
                             ["[6] G. Seventh. The sixth. J. Tests 6, 7 (2006)."]], 320, 60, label_width=14)
    page = body + left + right + _numbered(body + left, 64, 388) + _numbered(right, 314, 400)
    refs = pdf_reference_strings(make_pdf([page]))
    assert refs == ["A. Author. A work on things. IEEE Trans. Vis. 12, 2 (2001), doi:10.1109/TVCG.2019.2934251.",
                    "C. Third. A second work. Phys. Rev. D 93, 042004 (2016).",
                    "D. Fourth. A third work, doi:10.1016/j.cell.2009.01.002.",
                    "E. Fifth. A fourth work. J. Tests 4, 5 (2004).", "F. Sixth. The fifth. J. Tests 5, 6 (2005).",
                    "G. Seventh. The sixth. J. Tests 6, 7 (2006)."]


@needs_pdftotext
def test_a_bare_number_list_s_labels_in_its_own_size_are_no_line_numbers():
    entries = [[f"{n} {NAMES[n]}, A. A work. J. Tests {n}, 1."] for n in range(1, 9)]
    col, _ = column_lines(entries, 72, 100)
    refs = pdf_reference_strings(make_pdf([[(72, 80, "References"), *col]]))
    assert refs == [f"{NAMES[n]}, A. A work. J. Tests {n}, 1." for n in range(1, 9)]


@needs_pdftotext
def test_author_year_list_without_indent_is_cut_at_the_wider_gaps():
    entries = [[f"Surname{k}, A. (199{k}). A work with a long title that", f"goes on. Journal {k}, 1-2."]
               for k in range(5)]
    lines, y = [(72, 80, "Bibliography")], 100.0
    for entry in entries:
        for text in entry:
            lines.append((72, y, text))
            y += 11
        y += 6  # the space between entries
    refs = pdf_reference_strings(make_pdf([lines]))
    assert refs == [" ".join(e) for e in entries]


@needs_pdftotext
def test_no_reference_heading_gives_no_references_and_a_reject():
    pdf = make_pdf([[(72, 100 + 11 * i, f"Just text, line {i}.") for i in range(10)]])
    assert pdf_reference_strings(pdf) == []
    paper = read_pdf_text("2101.00001.pdf", pdf)
    assert paper.references == [] and [r.code for r in paper.rejects] == ["no_bibliography"]


# --- the paper model ----------------------------------------------------------------------------

@needs_pdftotext
def test_read_pdf_text_gives_the_papers_model_in_order_with_source_pdf_text():
    paper = read_pdf_text("papers/2101.00001v2.pdf", make_pdf([_two_column_page()]))
    assert paper.citing_paper == "2101.00001v2" or paper.citing_paper.startswith("2101.00001")
    assert paper.form == "pdf" and not paper.rejects
    assert [r.order for r in paper.references] == [1, 2, 3, 4, 5]
    assert {r.source for r in paper.references} == {SOURCE} == {"pdf_text"}
    assert {r.kind for r in paper.references} == {"pdf"}


def test_a_pdf_whose_name_gives_no_citing_paper_is_a_reject_and_is_not_read():
    paper = read_pdf_text("notes.pdf", b"%PDF-1.4 never read", binary="no-such-program-here")
    assert [r.code for r in paper.rejects] == ["no_citing_paper"]
    paper = read_pdf_text("notes.pdf", b"%PDF-1.4", citing_paper="10.1000/xyz", binary="no-such-program-here")
    assert [r.code for r in paper.rejects] == ["pdf_text_unavailable"]


# --- bounds -------------------------------------------------------------------------------------

def _program(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-pdftotext"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_pdf_over_the_byte_limit_is_a_reject_before_any_process():
    with pytest.raises(PdfTextProblem) as exc:
        layout_xhtml(b"%PDF-" + b"x" * 100, PdfTextLimits(max_pdf_bytes=50), binary="no-such-program-here")
    assert exc.value.code == "too_large"


def test_an_extraction_past_its_time_is_killed(tmp_path):
    program = _program(tmp_path, f"echo $$ > {tmp_path}/pid; exec sleep 60")
    with pytest.raises(PdfTextProblem) as exc:
        layout_xhtml(b"%PDF-1.4", PdfTextLimits(seconds=0.5), binary=program)
    assert exc.value.code == "timeout"
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone: killed and reaped


def test_an_extraction_writing_past_its_byte_limit_is_stopped(tmp_path):
    program = _program(tmp_path, "exec yes 'a line of text that never ends'")
    with pytest.raises(PdfTextProblem) as exc:
        layout_xhtml(b"%PDF-1.4", PdfTextLimits(max_layout_bytes=1 << 20, seconds=30), binary=program)
    assert exc.value.code == "too_large"


@needs_pdftotext
def test_a_pdf_of_form_objects_drawing_each_other_26_levels_deep_is_a_reject_within_the_memory_bound():
    pdf = nested_forms_pdf(26)
    assert len(pdf) < 8 * 1024
    with pytest.raises(PdfTextProblem) as exc:  # a bound below the default, so the test takes a second
        layout_xhtml(pdf, PdfTextLimits(max_memory_bytes=128 * MiB, seconds=600))
    assert exc.value.code == "too_large" and "memory bound of 128 MiB" in exc.value.reason
    assert 128 * MiB <= MAX_MEMORY_BYTES <= 512 * MiB  # the default stops it too (15-25 s measured)
    # every real PDF of the fixtures reads within a far smaller bound
    for pdf_file in sorted(PDFS.glob("*.pdf"))[:3]:
        assert layout_xhtml(pdf_file.read_bytes(), PdfTextLimits(max_memory_bytes=64 * MiB))


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (a killed child nobody has reaped yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status and "\nState:\tX" not in status


@needs_pdftotext
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_kill_9_of_resolve_leaves_no_pdftotext_behind(tmp_path, default_catalog):
    """``citeledger resolve`` reading a PDF that keeps pdftotext busy is killed with SIGKILL, which
    can clean nothing up: its pdftotext ends with it. A ``pdftotext`` first on PATH notes its pid
    and becomes the real one."""
    real = pdftotext_path()
    assert real is not None
    tools = tmp_path / "bin"
    tools.mkdir()
    pid_file = tmp_path / "pdftotext.pid"
    wrapper = tools / "pdftotext"
    wrapper.write_text(f"#!/bin/sh\necho $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}\nexec {real} \"$@\"\n")
    wrapper.chmod(0o755)
    pdf = tmp_path / "2101.00001.pdf"
    pdf.write_bytes(nested_forms_pdf(40, words=0))  # busy for ever, within any memory bound
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API_URL", "CITELEDGER_"))}
    env.update(PATH=f"{tools}:{env.get('PATH', '')}", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    code = "import sys; from citeledger import cli; sys.exit(cli.main(sys.argv[1:]))"
    resolve = subprocess.Popen([sys.executable, "-c", code, "resolve", str(pdf), "--catalog", str(default_catalog),
                                "--ledger", str(tmp_path / "ledger")], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not pid_file.exists():
            assert resolve.poll() is None, resolve.stderr.read().decode()[-2000:] if resolve.stderr else ""
            assert time.monotonic() < deadline, "resolve never started pdftotext"
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        while Path(f"/proc/{pid}/comm").read_text().strip() != "pdftotext":  # the wrapper's exec is done
            time.sleep(0.01)
        assert _alive(pid)
    finally:
        resolve.kill()
        resolve.wait()
    deadline = time.monotonic() + 60
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "pdftotext outlived the resolve that started it"


@needs_pdftotext
def test_bytes_that_are_no_pdf_are_unreadable_not_an_exception():
    paper = read_pdf_text("2101.00001.pdf", b"%PDF-1.4\nthis is not a PDF at all\n")
    assert [r.code for r in paper.rejects] == ["pdf_unreadable"]
    assert "pdftotext could not read this PDF" in paper.rejects[0].reason


@needs_pdftotext
def test_only_the_first_max_pages_are_read():
    pages = [[(72, 100, f"Page {n} text.")] for n in range(4)]
    pages[3] = [(72, 80, "References")] + column_lines([["[1] A. B. Work one."], ["[2] C. D. Work two."]],
                                                     72, 100)[0]
    pdf = make_pdf(pages)
    assert len(pdf_reference_strings(pdf)) == 2
    assert pdf_reference_strings(pdf, PdfTextLimits(max_pages=3)) == []


# --- entries and joins, on lines built here -------------------------------------------------------

def _lines(texts: list[tuple[float, str]], page: int = 0, column: int = 0) -> list[Line]:
    out = []
    for i, (x, text) in enumerate(texts):
        words, pos = [], x
        for w in text.split():
            words.append(Word(pos, pos + 5 * len(w), w))
            pos += 5 * len(w) + 3
        out.append(Line(page, x, 100 + 11 * i, pos, 109 + 11 * i, words, column, 72))
    return out


def test_numbered_entries_start_only_at_the_next_number():
    lines = _lines([(72, "1. Author A. Title. J. 12,"), (84, "345 (2001)."), (72, "2. Author B. Other."),
                    (84, "3 volumes at a line start are not labels"), (72, "3. Author C. Third.")])
    entries = split_entries(lines)
    assert [e.number for e in entries] == [1, 2, 3]
    assert [w.text for w in entries[1].lines[1].words][:2] == ["3", "volumes"]


def test_one_lost_label_does_not_end_the_list():
    lines = _lines([(72, "[1] A."), (72, "[2] B."), (72, "[4] D."), (72, "[5] E.")])
    assert [e.number for e in split_entries(lines)] == [1, 2, 4, 5]


def test_hanging_entries_start_at_the_column_edge():
    lines = _lines([(72, "Ammar, W. 2017. A title"), (82, "that goes on. In ACL."), (72, "Beltagy, I. 2019. One line."),
                    (72, "Cohan, A. 2020. Another"), (82, "title. In EMNLP.")])
    assert [len(e.lines) for e in split_entries(lines)] == [2, 1, 2]


def test_a_page_of_one_entrys_continuation_lines_stays_in_that_entry():
    before = [line for n in range(3) for line in ((72, f"Earlier{n}, A. 2019. A title"), (82, "that goes on."))]
    first = _lines([*before, (72, "Abbott, R., Abbott, T. D., and"), (82, "Acernese, F., et al. many names,"),
                    (72, "Baker, A. 2020. One line.")], page=0)
    names = [(82, f"Name{n}, A., Name{n + 1}, B., Name{n + 2}, C.,") for n in range(0, 30, 3)]
    full = _lines(names, page=1)  # every line a continuation: its page's edge is the hang
    for line in full:
        line.left = 82.0
    last = _lines([(82, "and Zeta, Z. 2021, ApJ, 1, 2."), (72, "Cohen, C. 2019. Another.")], page=2)
    entries = split_entries(first[:-1] + full + last + first[-1:])
    assert [len(e.lines) for e in entries] == [2, 2, 2, 2 + len(full) + 1, 1, 1]


def test_a_few_line_initial_numbers_in_a_long_list_are_not_labels():
    texts = [(72, "Author, A. 2001, MNRAS, 511,"), (82, "1 (March 2022), 24-29."), (72, "Other, B. 2002, ApJ, 2,"),
             (82, "2 (May 2002), 1-9."), (72, "Third, C. 2003, A&A, 3,"), (82, "3 (June 2003), 5.")]
    for n in range(40):
        texts += [(72, f"Name{n}, D. 2004. A work"), (82, "with a title that goes on."), (82, "And on.")]
    entries = split_entries(_lines(texts))
    assert [e.number for e in entries][:3] == [None, None, None]
    assert len(entries) == 43


def test_an_indented_line_opening_with_initials_is_not_a_heading():
    lines = _lines([(72, "References"), (72, "[1] Smith, A., Jones, B., and Lee,"),
                    (82, "J. V. The Excited Spin State of a Comet. ApJL 856 (Apr."), (82, "2018)."),
                    (72, "[2] Other, C. Second work.")])
    lines[2].y1 += 3  # an accent or superscript makes the line taller than the body's lines
    assert len(reference_strings(lines)) == 2


def test_an_entry_at_the_edge_that_reads_like_a_lettered_heading_is_not_one():
    lines = _lines([(72, "References"), (72, "pyRing: Issue: Timestamps Assigned to Analysis"), (82, "Data. 2021."),
                    (72, "G. Carullo et al. pyRing: a time-domain ringdown analysis software. https:"),
                    (82, "//git.ligo.org/lscsoft/pyring."), (72, "R. Cotesta and G. Carullo. Analysis of"),
                    (82, "Ringdown Overtones. PRL 129, 2022.")])
    lines[3].y1 += 3  # the typewriter font of the URL makes the line taller than the body's lines
    assert len(reference_strings(lines)) == 3


def test_alpha_key_labels_cut_entries_wherever_the_right_aligned_label_starts():
    lines = _lines([(72, "[BEKS17] Jeff Bezanson and Viral Shah. Julia:"), (112, "a fresh approach. SIAM review, 2017."),
                    (82, "[Ben99] Jon Bentley. Programming Pearls."), (82, "[D\u030c86] S. Dvorak. Towards merging."),
                    (112, "In Math. Found. of CS, 1986."), (76, "[HSK +22] L. Hafner et al. Quicksort. 2022.")])
    entries = reference_strings([*_lines([(72, "References")]), *lines])
    assert len(entries) == 4
    assert entries[0].startswith("Jeff Bezanson") and entries[3].startswith("L. Hafner")


def test_key_labels_of_works_with_no_author_a_particle_or_a_body_s_name_cut_entries():
    """biblatex's alphabetic style labels a work with neither author nor editor by its year alone, or
    not at all, and keeps a particle or a body's name whole before the year."""
    lines = _lines([(72, "[] CodeChef Rating Mechanism. url: codechef.com/ratings."),
                    (72, "[21] IBM Quantum. https://quantum-computing.ibm.com/. 2021."),
                    (72, "[De 90] A.-J. de Kool. Common envelope evolution. ApJ 358 (1990)."),
                    (72, "[ET 20a] ET Steering Committee. ET design report update. 2020."),
                    (72, "[Exe20] Executable Books Community. Jupyter Book. 2020.")])
    entries = reference_strings([*_lines([(72, "References")]), *lines])
    assert [e.split(".")[0] for e in entries] == ["CodeChef Rating Mechanism", "IBM Quantum", "A", "ET Steering Committee",
                                                  "Executable Books Community"]


def test_a_list_page_opening_with_italic_titles_is_not_taken_for_body_text():
    """A line's size is its words' lower quartile: an italic title's font may report a taller box than
    the roman label beside it, so the first lines after a page break are no taller than the list's."""
    first = _lines([(72, "References"), (72, "[Abe09] A. Abe. A work. J. 1 (2009)."), (72, "[Bo10] B. Bo. Work. J. 2."),
                    (72, "[Cu11] C. Cu. A third work. J. 3 (2011)."), (72, "[Do12] D. Do. A fourth. J. 4.")])
    second = _lines([(72, "[] Open Codeforces Rating System. url: codeforces.com/blog/"), (94, "entry/20762."),
                     (72, "[] Topcoder Algorithm Competition Rating System. url: topcoder."), (94, "com/ratings."),
                     (72, "[Ev13] E. Ev. A fifth work. J. 5 (2013).")], page=1)
    for line in first + second:
        line.words = [Word(w.x0, w.x1, w.text, 15.2 if line.page and w.text[:1].isupper() and w.text[0] != "[" else 8.6)
                      for w in line.words]
    assert len(reference_strings(first + second)) == 7


def test_entries_without_indent_or_gaps_are_cut_where_a_name_follows_an_entry_end():
    texts = []
    for k, name in enumerate(NAMES[:4]):
        texts += [(72, f"{name}, A. B. and Other, C. (200{k}). A long title of"), (72, "a work, with more words"),
                  (72, "in it, and yet more words of"), (72, "the title. Journal 1, 2-3.")]
    texts[5] = (72, "Smith, J. wrote a chapter")  # a name mid-entry, after a line that ends no entry
    texts += [(72, "Evans, D. (2010). Chapter in a book. In:"), (72, "Press, P. (ed.), Book. 12 pp.")] * 2
    entries = split_entries(_lines(texts))
    assert [len(e.lines) for e in entries] == [4, 4, 4, 4, 2, 2]


def test_heading_variants_and_the_end_of_the_section():
    for heading in ("References", "REFERENCES", "7 References", "VII. REFERENCES", "Bibliography",
                    "Literature Cited", "References:"):
        lines = _lines([(72, "Body text."), (72, heading), (72, "[1] A. Work."), (72, "[2] B. Work."),
                        (72, "Appendix A: Details"), (72, "[3] C. Not a reference.")])
        assert reference_strings(lines) == ["A. Work.", "B. Work."], heading


def test_a_supplements_own_list_does_not_replace_the_papers_list():
    lines = _lines([(72, "References"), (72, "[1] A. Work."), (72, "[2] B. Work."), (72, "[3] C. Work."),
                    (72, "Supplementary Material"), (72, "References"), (72, "[1] S. Supplement work."),
                    (72, "[2] T. Supplement work.")])
    assert reference_strings(lines) == ["A. Work.", "B. Work.", "C. Work."]


@pytest.mark.parametrize("parts, joined", [
    (["A. Work, arXiv:1402.", "1517 (2014)."], "A. Work, arXiv:1402.1517 (2014)."),
    (["doi:10.1016/j.", "cell.2009.01.002."], "doi:10.1016/j.cell.2009.01.002."),
    (["https://doi.org/10.1103/", "PhysRevD.93.042004"], "https://doi.org/10.1103/PhysRevD.93.042004"),
    (["http://www.who.int/", "topics/en/."], "http://www.who.int/topics/en/."),
    (["http://www.", "who.int/topics/."], "http://www.who.int/topics/."),
    (["Semi-supervised inter-", "ventions."], "Semi-supervised interventions."),
    (["the semi-", "supervised case"], "the semi-supervised case"),  # printed whole elsewhere: kept
    (["Valenzuela-", "Escarcega"], "Valenzuela-Escarcega"),
    (["pages 482-", "5."], "pages 482-5."),
    (["doi: 10.1093/mnras/", "stx910."], "doi: 10.1093/mnras/stx910."),
    (["doi: 10.1063/1.", "4939112."], "doi: 10.1063/1.4939112."),
    (["doi: 10.1093/mn-", "ras/stz1022."], "doi: 10.1093/mnras/stz1022."),  # TeX hyphenated the DOI
    (["doi: 10.1103/Phys-", "RevD.102.024055."], "doi: 10.1103/PhysRevD.102.024055."),
    (["doi: 10.1175/JCLI-", "D-11-00234.1"], "doi: 10.1175/JCLI-D-11-00234.1"),  # the DOI's own hyphen
    (["https://doi.org/10.3847/1538-3881%", "2Fab1234."], "https://doi.org/10.3847/1538-3881%2Fab1234."),
    (["doi:10.1051/0004-6361:", "20066082."], "doi:10.1051/0004-6361:20066082."),  # a break at no DOI's end
    (["doi:10.1016/s0375-9474(", "00)00131-7"], "doi:10.1016/s0375-9474(00)00131-7"),
    (["doi: 10.1162/evco_", "a_00278"], "doi: 10.1162/evco_a_00278"),
    (["doi: 10.1088/0264", "-9381/25/11/114007."], "doi: 10.1088/0264-9381/25/11/114007."),  # a URL's break
    (["https://doi.org/10.1145/3297858", ".3304007"], "https://doi.org/10.1145/3297858.3304007"),
    # the DOI printed whole again in its URL on the next line does not keep the break open
    (["doi: 10.21105/joss.", "00024. url: https://doi.org/10.21105/joss.00024."],
     "doi: 10.21105/joss.00024. url: https://doi.org/10.21105/joss.00024."),
    (["doi: 10.1016/0019-1035(92)", "90185-A."], "doi: 10.1016/0019-1035(92)90185-A."),  # after a year group
    (["doi:10.4230/LIPIcs.", "TQC.2019.5."], "doi:10.4230/LIPIcs.TQC.2019.5."),  # a series' capitals and number
    (["doi: 10.1088/1361-6420/", "aba5ed. url: https://doi.org/10.1088/1361-6420/aba5ed."],
     "doi: 10.1088/1361-6420/aba5ed. url: https://doi.org/10.1088/1361-6420/aba5ed."),
    (["doi:10.1007/978-1-4757-3472-0_", "2."], "doi:10.1007/978-1-4757-3472-0_2."),  # one character on
])
def test_line_breaks_are_joined(parts, joined):
    assert join_lines(parts, {"semi-supervised"}) == joined


@pytest.mark.parametrize("parts", [
    ["doi:10.1000/abc.", "In Proc. of the Conference (2019)."],  # a sentence after the DOI
    ["doi:10.1103/Phys", "RevD.93.042004"],  # the resolvers do not read this break as one DOI
    ["See 10.1000/xyz", "2019.12.01 accessed"],
    ["arXiv:1402.1517", "1234 pages"],
    ["Ref. 1402.", "1517"],  # a bare number: nothing says arXiv
    ["doi:10.1000/abc:", "In Proc. (2019)."],  # a colon after a DOI, then words
    ["doi:10.1000/abc;", "2019, pages 3-4."],
    ["doi:10.1000/abc", "- a dash, then words"],
    ["doi: 10.1364/JOSAA.31.001348.", "url: http://josaa.osa.org/abstract.cfm"],  # a field's label, not the DOI's
])
def test_no_identifier_is_made_by_joining(parts):
    """A break is closed only when the resolvers read the broken text as the joined identifier;
    otherwise the lines keep their space, and every id read in the result is read in the parts."""
    joined = join_lines(parts, set())
    assert joined == " ".join(parts)
    before = extract_identifiers("\n".join(parts))
    after = extract_identifiers(joined)
    assert set(after.dois) <= set(before.dois) and set(after.arxiv_ids) <= set(before.arxiv_ids)


def test_a_hyphen_at_a_doi_s_break_is_kept_when_the_document_prints_the_word_whole_elsewhere():
    parts = ["doi: 10.1146/annurev-", "astro-081811-125615."]
    assert join_lines(parts, {"10.1146/annurev-astro-112420-020055"}) == "doi: 10.1146/annurev-astro-081811-125615."
    assert join_lines(parts, set()) == "doi: 10.1146/annurevastro-081811-125615."  # as TeX's, like mn-ras
    parts = ["In: arXiv e-prints, astro-ph/9905116. doi: 10.48550/arXiv.astro-", "ph/9905116."]
    assert join_lines(parts, {"astro-ph/9905116"}).endswith("10.48550/arXiv.astro-ph/9905116.")


def _spaced(pieces: list[tuple[str, float]], start: float = 72.0) -> list[Word]:
    """Words left to right, each ``(text, gap after it)``, in 5-point characters."""
    words, x = [], start
    for text, gap in pieces:
        words.append(Word(x, x + 5 * len(text), text, 9.0))
        x += 5 * len(text) + gap
    return words


def test_a_doi_a_justified_line_stretched_apart_is_joined_and_prose_is_not():
    """biblatex sets a DOI with the url package, whose glue after each mark stretches with the line:
    gaps well under the line's word space between its pieces."""
    doi = [(p, 1.4) for p in ("10", ".", "3847", "/", "2041", "-", "8213", "/")] + [("aaa0c9.", 3.4)]
    line = _spaced([("Color", 3.3), ("photometry", 3.3), ("of", 3.3), ("the", 3.3), ("object.", 3.4), ("doi:", 3.3)]
                   + doi + [("arXiv:", 3.3), ("1711", 1.4), (".", 1.4), ("04927", 0.0)])
    assert " ".join(w.text for w in join_spaced(line)) == \
        "Color photometry of the object. doi: 10.3847/2041-8213/aaa0c9. arXiv: 1711.04927"
    prose = _spaced([("Dust", 3.3), ("-", 3.3), ("a", 3.3), ("model", 3.3), ("of", 3.3), ("the", 3.3), ("coma", 0.0)])
    assert [w.text for w in join_spaced(prose)] == ["Dust", "-", "a", "model", "of", "the", "coma"]


def test_a_space_inside_an_id_is_removed_only_when_the_resolvers_read_it_as_one_id():
    assert join_lines(["C. Third, arXiv:1402. 1517 (2014)."], set()) == "C. Third, arXiv:1402.1517 (2014)."
    assert join_lines(["Pages 1402. 1517 of the book."], set()) == "Pages 1402. 1517 of the book."


def test_the_dot_accent_in_a_doi_set_in_ot1_text_fonts_reads_as_its_underscore():
    page = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><doc><page width="612" height="792">'
            '<flow><block><line xMin="72" yMin="100" xMax="400" yMax="109">'
            '<word xMin="72" yMin="100" xMax="120" yMax="109">Springer,</word>'
            '<word xMin="124" yMin="100" xMax="300" yMax="109">doi:10.1007/978-1-4612-2544-7\u02d99,</word>'
            '<word xMin="304" yMin="100" xMax="360" yMax="109">\u017b\u02d9o\u0142\u0105d\u017a</word>'
            '</line></block></flow></page></doc></body></html>')
    line = reading_order(page.encode())[0]
    assert line.text == "Springer, doi:10.1007/978-1-4612-2544-7_9, \u017b\u02d9o\u0142\u0105d\u017a"


def test_reading_order_on_an_empty_document():
    assert reading_order(b'<html xmlns="http://www.w3.org/1999/xhtml"><body><doc></doc></body></html>') == []
    assert PAGE_W > 0


# --- where a list ends, and what in it is no entry ---------------------------------------------------

def test_a_lettered_heading_in_capitals_ends_the_list():
    lines = _lines([(72, "References"), (72, "[1] A. Work. J. 1 (2001)."), (72, "[2] B. Work. J. 2 (2002)."),
                    (72, "A DERIVATIONS"), (72, "The measured rate depends on the sample.")])
    assert reference_strings(lines) == ["A. Work. J. 1 (2001).", "B. Work. J. 2 (2002)."]


def test_a_bracket_list_cut_by_a_heading_in_the_other_column_goes_on_at_its_next_label():
    """The list's first part in the left column, the acknowledgements and competing interests
    beside it in the right, the list going on at [3]: no heading of its own before it."""
    left = _lines([(72, "[1] A. Work. J. 1 (2001)."), (72, "[2] B. Work. J. 2 (2002).")], column=0)
    right = _lines([(320, "COMPETING INTERESTS"), (320, "The authors declare none.")], column=1)
    rest = _lines([(72, "[3] C. Work. J. 3 (2003)."), (72, "[4] D. Work. J. 4 (2004)."),
                   (72, "Appendix A: Details"), (72, "[5] Not a reference.")], page=1)
    assert reference_strings(left + right + rest) == ["A. Work. J. 1 (2001).", "B. Work. J. 2 (2002).",
                                                      "C. Work. J. 3 (2003).", "D. Work. J. 4 (2004)."]


def test_body_text_a_column_break_brings_into_the_list_is_skipped():
    """The list in 9-point lines, the other column's conclusions in 10-point ones."""
    left = _lines([(72, "References"), (72, "[1] A. Work on things. J. 1"), (84, "(2001)."),
                   (72, "[2] B. Another work on"), (84, "things. J. 2 (2002).")], column=0)
    body = _lines([(320, "tional support from the funding agency"), (320, "and the computing centre, which")],
                  column=1)
    for line in body:
        line.y1 += 1.5
    rest = _lines([(72, "[3] C. Third work. J. 3 (2003)."), (72, "[4] D. Fourth work. J. 4 (2004).")], page=1)
    assert reference_strings(left + body + rest) == ["A. Work on things. J. 1 (2001).",
                                                     "B. Another work on things. J. 2 (2002).",
                                                     "C. Third work. J. 3 (2003).", "D. Fourth work. J. 4 (2004)."]


def test_captions_and_a_journals_closing_line_are_no_entries():
    texts = [(72, "References")]
    for k, name in enumerate(NAMES[:4]):
        texts += [(72, f"{name}, A. 200{k}, ApJ, {k}, 1"), (82, "and more of the entry")]
    texts[5:5] = [(72, "Figure 3. The marginal distribution of the spins")]
    texts += [(72, "This paper has been typeset from a TEX/LATEX file prepared by the author.")]
    assert reference_strings(_lines(texts)) == [f"{name}, A. 200{k}, ApJ, {k}, 1 and more of the entry"
                                                for k, name in enumerate(NAMES[:4])]


def test_text_after_an_author_year_lists_last_entry_is_no_entry():
    texts = [(72, "References")]
    for k, name in enumerate(NAMES[:4]):
        texts += [(72, f"{name}, A. 200{k}, ApJ, {k}, 1"), (82, "and more of the entry")]
    texts += [(72, "this perfect model."), (72, "N x2 t N 2 (15)"), (72, "model at large N.")]
    assert len(reference_strings(_lines(texts))) == 4


def test_parenthesised_numbers_label_a_list():
    lines = _lines([(72, "References"), (72, "(1) Dickson, N. M. A Program. J. Chem. Educ. 2021, 98, 3251."),
                    (72, "(2) Luger, R. showyourwork. 2021."), (72, "(3) McCluskey, A. R. linearization. 2023.")])
    assert reference_strings(lines) == ["Dickson, N. M. A Program. J. Chem. Educ. 2021, 98, 3251.",
                                        "Luger, R. showyourwork. 2021.", "McCluskey, A. R. linearization. 2023."]


def test_the_last_entry_holds_a_plausible_number_of_lines():
    texts = [(72, "References")] + [(72, f"[{n}] {NAMES[n]}, A. A work. J. {n} (2001).") for n in range(1, 7)]
    texts += [(72, f"Author list line {k} of a collaboration, Institute {k}, City") for k in range(30)]
    refs = reference_strings(_lines(texts))
    assert len(refs) == 6 and "line 6 " in refs[-1] and "line 7 " not in refs[-1]  # eight lines at most


@needs_pdftotext
def test_a_page_whose_wide_figure_leaves_no_gutter_of_its_own_is_split_at_the_documents():
    """The list starts in the right column beside the body's last lines, under a caption across
    both columns: on this page alone no gutter shows, on the paper's other pages it does."""
    first = [(72, 60 + 11 * i, f"Left column text of the paper, line {i}.") for i in range(20)]
    first += [(320, 60 + 11 * i, f"Right column text of the paper, line {i}.") for i in range(20)]
    caption = [(72, 60 + 11 * i, "Figure 2. A caption that runs across the whole width of the page, as wide "
                                  f"floats do {i}") for i in range(12)]
    bottom = [(72, 300, "data associated with this"), (320, 300, "REFERENCES"),
              (72, 311, "work are available on request."), (320, 311, "Anania R., Winter A. J., 2025,"),
              (330, 322, "A&A, 695, 74"), (320, 333, "Ansdell M., Williams J. P., 2017,"), (330, 344, "AJ, 153, 240"),
              (320, 355, "Cieza L. A., et al., 2009, ApJ,"), (330, 366, "696, L84")]
    third = [(72, 45, "Appendix A: Details")]
    third += [(72, 60 + 11 * i, f"Left column text of the appendix, line {i}.") for i in range(20)]
    third += [(320, 60 + 11 * i, f"Right column text of the appendix, line {i}.") for i in range(20)]
    refs = pdf_reference_strings(make_pdf([first, caption + bottom, third]))
    assert refs == ["Anania R., Winter A. J., 2025, A&A, 695, 74", "Ansdell M., Williams J. P., 2017, AJ, 153, 240",
                        "Cieza L. A., et al., 2009, ApJ, 696, L84"]



@needs_pdftotext
def test_line_numbers_in_the_texts_own_size_on_every_page_are_dropped():
    """A conference's submission style numbers every line of every page in the margin, in a
    size close to the text's: the same edge on most pages tells them from a list's labels."""
    pages, number = [], 100
    for n in range(3):
        body = [(108, 60 + 12 * i, f"Body text of page {n}, line {i}, of the submitted paper.") for i in range(20)]
        if n == 2:
            body = [(108, 60, "References")]
            for k in range(1, 6):
                body += [(108, 60 + 24 * k, f"[{k}] {NAMES[k]}, A. A work on {TOPICS[k]}. J. Tests {k}, 1 (2001)."),
                         (120, 72 + 24 * k, f"doi:10.1000/test.{k}.")]
        numbered = []
        for _, y, _ in body:
            numbered.append((86 - 5 * len(str(number)), y, str(number)))
            number += 1
        pages.append(body + numbered)
    refs = pdf_reference_strings(make_pdf(pages))
    assert refs == [f"{NAMES[k]}, A. A work on {TOPICS[k]}. J. Tests {k}, 1 (2001). doi:10.1000/test.{k}."
                    for k in range(1, 6)]


def test_a_run_in_heading_with_a_full_stop_opens_the_list():
    lines = _lines([(72, "Body text."), (72, "References."), (72, "Aaltonen, T. et al. (2010). A work. J. 1."),
                    (84, "More of it."), (72, "Baker, B. (2011). Another. J. 2."), (84, "More of it.")])
    assert len(reference_strings(lines)) == 2


def test_a_journal_s_history_line_and_a_box_after_the_list_are_no_entries():
    texts = [(72, "References")]
    for k, name in enumerate(NAMES[:4]):
        texts += [(72, f"{name}, A. 200{k}. A work. J. {k}, 1."), (82, "and more of the entry.")]
    texts += [(72, "Received 2024-02-28; accepted 2024-06-18")]
    assert len(reference_strings(_lines(texts))) == 4
    texts[-1] = (82, "Box 1: Summary of Practices 1. Data Management a) Save the raw data.")
    assert reference_strings(_lines(texts))[-1] == "Dunn, A. 2003. A work. J. 3, 1. and more of the entry."


def test_a_footnote_under_a_column_of_the_list_is_no_entry():
    """The list's left column ends over the page's footnote (a raised mark, then the note); the
    list goes on in the right column."""
    left = [line for k in range(3) for line in ((72, f"{NAMES[k]}, A. 200{k}, ApJ,"), (82, f"{k}, 1"))]
    right = [line for k in range(3, 6) for line in ((320, f"{NAMES[k]}, A. 200{k}, ApJ,"), (330, f"{k}, 1"))]
    lines = _lines([(72, "References"), *left, (72, "2 https://github.com/someone/code/")]) + _lines(right, column=1)
    note = lines[len(left) + 1]
    mark, *rest = note.words
    note.words = [Word(mark.x0, mark.x1, mark.text, 5.3)] + [Word(w.x0, w.x1, w.text, 7.6) for w in rest]
    for line in lines:
        if line is not note:
            line.words = [Word(w.x0, w.x1, w.text, 7.1) for w in line.words]
    refs = reference_strings(lines)
    assert len(refs) == 6 and not any("github" in r for r in refs)


@needs_pdftotext
def test_entry_lines_that_read_alike_at_the_same_height_of_two_pages_are_no_running_header():
    """Numbers blanked, the last lines of two Phys. Rev. D entries read alike: heading two pages
    at the same height, they are still the entries' (a running header naming an identifier
    stands on half the pages, three at least)."""
    first = [(72, 60, "References")]
    first += [(72, 80 + 24 * k, f"[{k}] {NAMES[k]}, A work on {TOPICS[k]}. Phys. Rev. D {k} (2001)") for k in range(1, 5)]
    first += [(72, 80 + 24 * k + 12, f"10{k}. arXiv:120{k}.1234.") for k in range(1, 5)]
    first += [(72, 200, "[5] E. Evans, Asymptotic frame selection, Phys. Rev. D 86 (2012)")]
    second = [(84, 60, "104037. arXiv:1205.2287, doi:10.1103/PhysRevD.86.104037."),
              (72, 80, "[6] F. Fox, Precessing signals, Phys. Rev. D 86 (2012)")]
    third = [(84, 60, "104063. arXiv:1207.3088, doi:10.1103/PhysRevD.86.104063."),
             (72, 80, "[7] G. Gray, Another work. J. Tests 7 (2007).")]
    refs = pdf_reference_strings(make_pdf([first, second + [(84, 92, "more of the sixth entry")], third]))
    read = {d for r in refs for d in extract_identifiers(r).dois}
    assert {"10.1103/physrevd.86.104037", "10.1103/physrevd.86.104063"} <= read


def test_bracketed_author_year_labels_cut_entries():
    lines = _lines([(72, "References"), (72, "[Abadi et al. 2016] Martín Abadi, Paul Barham, and Jianmin Chen."),
                    (84, "TensorFlow: a system for machine learning. In OSDI."),
                    (72, "[Bradley and Terry 1952] Ralph Allan Bradley and Milton E Terry. Rank"),
                    (84, "analysis of incomplete block designs. Biometrika (1952)."),
                    (72, "[van Son et al. 2022a] L. A. C. van Son, S. E. de Mink. A work. ApJ 931."),
                    (72, "[Zhou 2020] X. Zhou. Another work. J. Tests 1 (2020).")])
    refs = reference_strings(lines)
    assert [r.split(".")[0] for r in refs] == ["Martín Abadi, Paul Barham, and Jianmin Chen", "Ralph Allan Bradley and "
                                               "Milton E Terry", "L", "X"]


def test_a_surname_s_lowercase_particle_opens_an_entry():
    texts = [(72, "References")]
    for name in ("van Son, L. A. C., de Mink, S. E., and Callister, T. (2022). A long title of",
                 "de la Fuente, A. and Other, B. (2019). A long title of", "Dunn, A. and Other, C. (2003). A long title of",
                 "von Hippel, T., Other, D. (2001). A long title of"):
        texts += [(72, name), (72, "a work, with more words"), (72, "in it, and yet more words of"),
                  (72, "the title. Journal 1, 2-3.")]
    assert len(split_entries(_lines(texts[1:]))) == 4


@needs_pdftotext
def test_a_running_header_references_atop_each_page_of_the_list_is_no_new_list():
    pages = []
    for n in range(3):
        # the heading repeated atop each page of the list, not always at one height (so no header rule drops it)
        lines = [(72, 40 + 8 * n, "References")] if n else [(72, 40, "Body text of the paper."), (72, 60, "References")]
        lines += [(72, 80 + 22 * k, f"[{4 * n + k + 1}] {NAMES[4 * n + k]}, A. A work on {TOPICS[4 * n + k]}. "
                                    f"J. Tests {k} (2001).") for k in range(4)]
        pages.append(lines)
    refs = pdf_reference_strings(make_pdf(pages))
    assert len(refs) == 12 and refs[0].startswith("Adams")



@needs_pdftotext
def test_a_page_whose_narrowest_cover_is_between_labels_and_entries_is_split_at_the_documents_gutter():
    """A table over both columns puts its cells across the gutter, so on the list's page the x that
    the fewest words cover is the narrow gap between the right column's right-aligned labels and
    its entries' text; the document's usual gutter, as clear on this page, splits it."""
    body = "Left column text of the paper that goes to the edge, line {:02d}."  # to x = 295
    first = [(60, 60 + 11 * i, body.format(i)) for i in range(30)]
    first += [(318, 60 + 11 * i, f"Right column text of the paper, line {i}.") for i in range(30)]
    table = [(x, 60 + 11 * row, f"{row}.{x}%") for row in range(7) for x in (200, 296, 360)]
    table.append((54, 140, "Table 2: Performance of each rating system on the metrics, over every data set we hold."))
    left = [(60, 170 + 11 * i, body.format(i)) for i in range(24)]
    left += [(54, 450, "REFERENCES"), (54, 462, "[1] A. Adams. A first work. J. Tests 1, 1 (2001)."),
             (54, 473, "[2] B. Baker. A second work. J. Tests 2, 2 (2002).")]
    right = []
    for k in range(3, 20):  # labels right-aligned at x = 330, the entries' text from x = 334
        right += [(330 - (10.0 if k < 10 else 15.0), 170 + 22 * (k - 3), f"[{k}]"),
                  (334, 170 + 22 * (k - 3), f"{NAMES[k % 12]}, A. A work on"),
                  (334, 181 + 22 * (k - 3), f"{TOPICS[k % 12]}. J. Tests {k}, 1 ({1990 + k}).")]
    refs = pdf_reference_strings(make_pdf([first, table + left + right, first]))
    assert len(refs) == 19 and refs[2] == "Dunn, A. A work on dogs. J. Tests 3, 1 (1993)."


def test_an_entry_with_no_year_hung_as_the_list_hangs_its_entries_is_kept_at_the_list_s_end():
    """A work with neither author nor year (a web page) sorts after the dated entries; it is set as
    the list sets its entries, unlike the text that may follow a list."""
    texts = [(72, "References")]
    for k, name in enumerate(NAMES[:4]):
        texts += [(72, f"{name}, A. 200{k}, ApJ, {k}, 1"), (82, "and more of the entry")]
    texts += [(72, "Farming Volatility: How a major flaw in a well-known"), (82, "rating system takes over the"),
              (82, "GBL leaderboard, reddit.com/r/TheSilphRoad/comments/hwff2d/")]
    refs = reference_strings(_lines(texts))
    assert len(refs) == 5 and refs[-1].startswith("Farming Volatility")
    texts += [(72, "this perfect model."), (72, "N x2 t N 2 (15)"), (72, "model at large N.")]
    assert len(reference_strings(_lines(texts))) == 5


def test_a_running_head_and_foot_seen_on_one_page_only_are_no_part_of_the_list():
    """A short paper's second page carries the journal's running head (``A. Author``) over the list
    and its running foot under the left column, each once in the document: each stands apart from the
    list by more than the list's widest usual step from line to line."""
    def at(page: int, y: float, text: str, x: float = 72, column: int = 0) -> Line:
        words, pos = [], x
        for w in text.split():
            words.append(Word(pos, pos + 5 * len(w), w, 8.0))
            pos += 5 * len(w) + 3
        return Line(page, x, y, pos, y + 8, words, column, 72 if column == 0 else 320)

    def entry(page: int, y: float, k: int, x: float = 72, column: int = 0) -> list[Line]:
        return [at(page, y, f"{NAMES[k % 12]}, A. 20{k:02d}, A work on", x, column),
                at(page, y + 10, f"{TOPICS[k % 12]}, ApJ, {k}, 1", x + 10, column)]

    first = [ln for k in range(3) for ln in entry(0, 500 + 20 * k, k)]
    second = [at(1, 30, "A. Author")] + [ln for k in range(3) for ln in entry(1, 55 + 20 * k, 3 + k)]
    second += [at(1, 137, "MNRAS 000, 000-000 (0000)")]
    second += [ln for k in range(3) for ln in entry(1, 55 + 20 * k, 6 + k, 320, 1)]
    refs = split_entries(first + second)
    assert len(refs) == 9
    assert not any("Author" in ln.text or "MNRAS 000" in ln.text for e in refs for ln in e.lines)


@needs_pdftotext
def test_a_list_set_under_both_columns_of_the_body_is_read_after_the_body():
    """REVTeX sets a short paper's list as a new pair of columns under the balanced columns of its
    body, with nothing across the page between: the body's right column is read before the list."""
    body = "The measured rate depends on the sample, line {:02d}."
    page = [(60, 60 + 11 * i, body.format(i)) for i in range(20)]
    page += [(320, 60 + 11 * i, body.format(20 + i)) for i in range(8)] + [(380, 160, "II. RESULTS")]
    page += [(320, 181 + 11 * i, body.format(30 + i)) for i in range(9)]
    for k in range(1, 11):
        x, row = (60, k - 1) if k <= 5 else (320, k - 6)
        page += [(x, 330 + 22 * row, f"[{k}] {NAMES[k]}, A. A work on {TOPICS[k]},"), (x + 14, 341 + 22 * row,
                                                                                    f"J. Tests {k}, 1 (2001).")]
    refs = pdf_reference_strings(make_pdf([page]))
    assert refs == [f"{NAMES[k]}, A. A work on {TOPICS[k]}, J. Tests {k}, 1 (2001)." for k in range(1, 11)]


@needs_pdftotext
def test_a_margin_of_key_labels_some_of_two_words_is_no_column_of_text():
    """biblatex's alphabetic style sets its labels in a margin of their own, ``[De 90]`` and ``[ET 20a]``
    among them: one label a line, however many words, is no left column of text."""
    page = [(180, 60, "References")]
    labels = ["[Col+24]", "[De 90]", "[Dom+12]", "[ET 20a]", "[ET 20b]", "[Eva+21]", "[Exe20]", "[Far+15]"]
    for k, label in enumerate(labels):  # the labels' margin ends inside the middle of the page
        page += [(180, 80 + 30 * k, label), (230, 80 + 30 * k, f"{NAMES[k]}, A. A long work on {TOPICS[k]} and things. In:"),
                 (230, 91 + 30 * k, f"J. Tests {k}, 1 (2001), and a line that runs on to the right.")]
    refs = pdf_reference_strings(make_pdf([page]))
    assert refs == [f"{NAMES[k]}, A. A long work on {TOPICS[k]} and things. In: J. Tests {k}, 1 (2001), and a line that "
                    "runs on to the right." for k in range(8)]


@needs_pdftotext
def test_an_entry_s_last_line_of_one_number_at_a_page_s_foot_is_no_page_number():
    """A DOI broken after its ``/`` leaves a bare number on the page's last row, at the list's usual
    step under the line above: no page number (those stand apart, as the next page's does)."""
    first = [(72, 60, "References")]
    for k in range(1, 9):
        first += [(72, 60 + 24 * k, f"[{k}] {NAMES[k]}, A. A work on {TOPICS[k]}. J. Tests {k}, 1 (2001)."),
                  (86, 72 + 24 * k, f"https://doi.org/10.1000/test.{k}")]
    first += [(72, 276, "[9] Belczynski, K. On the Maximum Mass of Stellar Black Holes. ApJ 714(2),"),
              (86, 288, "1217-1226 (2010). https://doi.org/10.1088/0004-637X/714/2/"), (86, 300, "1217")]
    second = [(72, 60, "[10] Bhattacharya, D. Formation of binary pulsars. Phys. Rep. 203, 1 (1991)."),
              (72, 72, "[11] Clark, A. A last work. J. Tests 11, 1 (2011)."), (300, 760, "2")]
    refs = pdf_reference_strings(make_pdf([first, second]))
    assert len(refs) == 11 and refs[8].endswith("https://doi.org/10.1088/0004-637X/714/2/1217")
    assert refs[-1] == "Clark, A. A last work. J. Tests 11, 1 (2011)."


def test_an_author_year_entry_opening_with_its_year_after_a_repeated_author_s_drawn_rule_is_kept():
    texts = [(72, "References")]
    for k, name in enumerate(NAMES[:4]):
        texts += [(72, f"{name}, A. (200{k}). A work. J. {k}, 1."), (82, "and more of the entry.")]
    texts += [(72, "(2019). An Efficient Methodology for Mapping Quantum Circuits to the"), (82, "IBM QX Architectures.")]
    refs = reference_strings(_lines(texts))
    assert len(refs) == 5 and refs[-1].startswith("(2019). An Efficient")


def test_a_tall_glyph_box_does_not_put_the_next_line_on_the_page_s_top_row():
    """The last lines of an entry atop a page, the first with a URL font's tall box reaching into the
    second's height, then the page's number far below: the number goes, the two lines stay."""
    def at(page: int, y0: float, y1: float, text: str, x: float = 72) -> Line:
        words = [Word(x + 30 * i, x + 30 * i + 25, w, y1 - y0) for i, w in enumerate(text.split())]
        return Line(page, x, y0, words[-1].x1, y1, words, 0, 72)

    first = [at(0, 500 + 12 * k, 508 + 12 * k, f"{NAMES[k]}, A. ({2000 + k}). A work. J. {k}, 1.") for k in range(6)]
    second = [at(1, 123.8, 138.8, "of Integrated Circuits and Systems 38.7. doi: 10.1109/TCAD."),
              at(1, 136.8, 145.4, "2018.2846658."), at(1, 696.3, 704.9, "4", 300)]
    kept = without_page_edges(first + second)
    assert [ln.text for ln in kept[-2:]] == ["of Integrated Circuits and Systems 38.7. doi: 10.1109/TCAD.", "2018.2846658."]


def test_a_collaboration_s_author_list_after_the_list_is_no_part_of_its_last_entry():
    texts = [(72, "References")]
    for k in range(1, 7):
        texts += [(72, f"[{k}] {NAMES[k]}, A. A work on {TOPICS[k]}. J. Tests {k}, 1 (2001),"), (95, "arXiv:1201.0001.")]
    texts += [(72, "[7] ATLAS Collaboration, ATLAS Computing Acknowledgements, 2025,"),
              (95, "url: https://cds.cern.ch/record/2922210."), (72, "The ATLAS Collaboration")]
    texts += [(72, f"G. Aad {100 + k}, E. Aakvaag 17, B. Abbott 123, S. Abdelhameed 119a, K. Abeling 55,")
              for k in range(30)]
    refs = reference_strings(_lines(texts))
    assert len(refs) == 7 and refs[-1] == ("ATLAS Collaboration, ATLAS Computing Acknowledgements, 2025, "
                                           "url: https://cds.cern.ch/record/2922210.")


def _set(x0: float, y: float, text: str, x1: float | None = None, page: int = 0) -> Line:
    """A line of 5-point characters from ``x0``, stretched to end at ``x1`` when given (justified)."""
    words, pos = [], x0
    for w in text.split():
        words.append(Word(pos, pos + 5 * len(w), w, 9.0))
        pos += 5 * len(w) + 3
    if x1 is not None:
        scale = (x1 - x0) / (words[-1].x1 - x0)
        words = [Word(x0 + (w.x0 - x0) * scale, x0 + (w.x1 - x0) * scale, w.text, 9.0) for w in words]
    return Line(page, x0, y, words[-1].x1, y + 9, words)


def test_a_list_in_two_columns_under_one_column_text_is_cut_under_its_heading_however_long():
    """The last page of a one-column paper: body text, an appendix's headings, then the list in two
    columns under its centred heading. The cut is tried at the short lines across the page's middle
    (headings), upwards while the part below keeps the same gutter, not at each line of a long list."""
    lines = [_set(98, 60 + 14 * i, f"Body text {i} of the one column part of this page, across it.", 520)
             for i in range(20)]
    lines += [_set(270, 350, "APPENDIX", 337), _set(98, 372, "See Sarkka & Garcia (2020).", 301),
              _set(265, 400, "REFERENCES", 346)]
    for k in range(14):
        for x, n in ((90, k), (320, 14 + k)):
            lines += [_set(x, 420 + 30 * k, f"{NAMES[n % 12]}, A., & Other, B. {1980 + n},", x + 190),
                      _set(x + 11, 430 + 30 * k, f"J. Tests {n}, 1, doi: 10.1000/t.{n}")]
    refs = reference_strings(page_order(Page(0, 612, lines)))
    assert len(refs) == 28 and refs[14] == "Clark, A., & Other, B. 1994, J. Tests 14, 1, doi: 10.1000/t.14"


def test_two_columns_lines_poppler_put_on_one_line_are_two_lines():
    left = _spaced([("et", 3.0), ("al.", 3.0), ("2018,", 3.0), ("JAX:", 3.0), ("composable", 40.0)], 100.9)
    right = _spaced([("Ambikasaran,", 3.0), ("S.,", 3.0), ("&", 3.0), ("Angus,", 3.0), ("R.", 0.0)], left[-1].x1 + 40)
    assert [[w.text for w in part] for part in split_at_columns(left + right, 10.9)] == [
        ["et", "al.", "2018,", "JAX:", "composable"], ["Ambikasaran,", "S.,", "&", "Angus,", "R."]]
    numbered = _spaced([("12", 40.0)], 60) + _spaced([("of", 3.0), ("the", 3.0), ("list.", 0.0)], 112)
    assert len(split_at_columns(numbered, 10.9)) == 1  # a margin's line number stays with its line


def test_a_caption_across_both_columns_and_text_wider_than_the_list_s_column_are_no_entries():
    left = [_set(50, 470 + 26 * k, f"{NAMES[k]}, A., & Other, B. {2000 + k}, ApJ,", 280) for k in range(6)]
    left += [_set(61, 483 + 26 * k, f"{k}, 1, doi: 10.1000/t.{k}") for k in range(6)]
    right = [_set(320, 470 + 26 * k, f"{NAMES[6 + k]}, A., & Other, B. {2010 + k}, AJ,", 550) for k in range(6)]
    right += [_set(331, 483 + 26 * k, f"{k}, 2, doi: 10.1000/u.{k}") for k in range(6)]
    for line in left:
        line.column = 0
    for line in right:
        line.column = 1
    caption = [_set(50, 414, "Figure C1. Results of the false positive rate experiment for the H band, as", 561),
               _set(50, 427, "described in the text, with (a) the detections and (b) the filtered and binned", 561),
               _set(50, 441, "demarcated with a black dashed line.")]
    for line in caption[:2]:
        line.column = -1
    later = [_set(50, 100 + 13 * i, f"Text of a figure page {i} that runs across the whole page, as a caption does.",
                  560, page=1) for i in range(4)]
    ordered = [_set(72, 400, "References")] + caption + sorted(left, key=lambda ln: ln.y0) + sorted(
        right, key=lambda ln: ln.y0) + later
    refs = reference_strings(ordered)
    assert len(refs) == 12 and not any("Figure" in r or "demarcated" in r or "caption" in r for r in refs)


def test_a_hanging_list_s_indent_is_its_most_common_one_not_a_figure_s_labels():
    texts = [(72, "References")]
    for k, name in enumerate(NAMES[:8]):
        texts += [(72, f"{name}, A. 200{k}, ApJ, {k}, 1, a title of"), (81, "some length.")]
    texts += [(72 + 6 * k, f"{80 - 10 * k}") for k in range(4, 14)] + [(130, "number of objects"), (150, "V magnitude")]
    assert len(reference_strings(_lines(texts))) == 8


def test_an_annual_review_s_related_resources_end_the_list():
    texts = [(72, "LITERATURE CITED")]
    for k, name in enumerate(NAMES[:4]):
        texts += [(72, f"{name} A, Other B. 200{k}. ApJ {k}:1"), (82, "and more of the entry")]
    texts += [(72, "RELATED RESOURCES"), (72, "Rasmussen CE, Williams CKI. 2006. Gaussian Processes. MIT Press")]
    assert len(reference_strings(_lines(texts))) == 4
