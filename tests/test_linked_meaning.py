"""One meaning of "linked" everywhere: ``verified_exact`` + ``verified_fuzzy``
(``resolvers.model.linked_count``). A ``metadata_mismatch`` names a work the string contradicts: it
is counted on its own, in a record's counts, its text and HTML pages and a run's summary, and it
keeps the notice of the work its identifier names."""
from __future__ import annotations

from test_records import WORK_A, obs, record_of

from citeledger.records.render.record_pages import render_ledger_html, render_ledger_text
from citeledger.run.summary import RunSummary
from resolvers.model import linked_count

PAPER = "arXiv:0704.0001"
ROWS = [
    obs(PAPER, 1, "Bee B. Paper B. J. B 2005. doi:10.1234/b", "verified_exact", "w-b", "10.1234/b", resolver="doi",
        score=1.0, dois=["10.1234/b"]),
    obs(PAPER, 2, "Some other title entirely. doi:10.1016/j.jclinane.2006.02.005", "metadata_mismatch", "w-r",
        "10.1016/j.jclinane.2006.02.005", resolver="doi", score=1.0, dois=["10.1016/j.jclinane.2006.02.005"]),
    obs(PAPER, 3, "Another title again. doi:10.1234/b", "metadata_mismatch", "w-b", "10.1234/b", resolver="doi",
        score=1.0, dois=["10.1234/b"]),
    obs(PAPER, 4, "A corrected PLoS Biology paper 2006", "verified_fuzzy", "w-c", "10.1371/journal.pbio.0040031",
        resolver="raw_fallback", score=0.93),
    obs(PAPER, 5, "A work nobody has catalogued, 1999.", "unresolved"),
]


def test_linked_is_verified_exact_and_fuzzy_only():
    assert linked_count({"verified_exact": 3, "verified_fuzzy": 2, "metadata_mismatch": 7, "unresolved": 1}) == 5
    assert linked_count({}) == 0


def test_a_records_linked_count_leaves_mismatches_out():
    record = record_of(PAPER, WORK_A, rows=ROWS)
    by_status = record["counts"]["by_status"]
    assert (by_status["verified_exact"], by_status["verified_fuzzy"], by_status["metadata_mismatch"]) == (1, 1, 2)
    assert record["counts"]["linked"] == 2
    # a mismatch still carries the notice of the work its identifier names (a retracted DOI stays in sight)
    mismatch = next(i for i in record["outbound"]["items"] if i["reference_index"] == 2)
    assert mismatch["notice"]["standing"] == "retracted" and mismatch["notice"]["state"] == "measured"
    assert record["coverage"]["notices"]["denominator"] == 4


def test_the_pages_say_linked_and_mismatched_apart():
    record = record_of(PAPER, WORK_A, rows=ROWS)
    text, page = render_ledger_text(record), render_ledger_html(record)
    said = "5 references, 2 linked to a catalog work, 2 whose identifier names another work"
    assert said in text and said in page
    assert "4 linked" not in text and "4 linked" not in page


def test_a_record_file_of_the_earlier_meaning_is_shown_with_this_one():
    """A record written when ``linked`` counted mismatches too says the same on its pages as a new one."""
    record = record_of(PAPER, WORK_A, rows=ROWS)
    record["counts"]["linked"] = 4
    assert "2 linked to a catalog work" in render_ledger_html(record)


def test_a_run_summarys_links_are_the_same_count():
    states = {"verified_exact": 90, "metadata_mismatch": 5, "verified_fuzzy": 0, "unresolved": 3}
    summary = RunSummary("r", 98, 0, states, {}, 1.0, False, None, 0)
    assert summary.links == 90 == linked_count(states)
