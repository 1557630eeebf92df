"""Standing notices: the readers against real source rows, and the standing rules.

The golden cases in tests/golden/notices/ drive one parametrised test; the rest check the nasty
rows one by one (line numbers, sentinels, trailing comma, SICI DOIs, trailer rows).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from resolvers.notices.notice_sources import (
    events_from_arxiv_withdrawal,
    events_from_crossref_relations,
    is_doi_nature_csv,
    is_retraction_watch_csv,
    normalise_notice_doi,
    read_doi_nature_csv,
    read_retraction_watch_csv,
    sniff_notice_format,
)
from resolvers.notices.standing import (
    EventType,
    NoticeEvent,
    NoticeIndex,
    NoticeState,
    Standing,
    UnavailableReason,
    merge_events,
    notice_from_dict,
    notice_row,
    notice_to_dict,
    standing_notice,
    unavailable_notice,
)

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "notices"
GOLDEN = HERE / "golden" / "notices"
SHARED_DOI_NATURE = Path(__file__).resolve().parents[2] / "shared" / "data" / "notices" / "retraction_watch_doi_nature.csv"
DELIM = "#---8<--- payload below ---8<---\n"


def payload(name: str):
    """A fixture's exact payload: the shared-data source note stripped (see PROVENANCE.md)."""
    path = FIXTURES / name
    text = path.read_text(encoding="utf-8")
    if name.endswith(".json"):
        return json.loads(text)["payload"]
    return text.split(DELIM, 1)[1] if DELIM in text else text


# ---------------------------------------------------------------------------------------------
# golden cases


def _events_for_inputs(inputs: list[dict]) -> list[NoticeEvent]:
    events: list[NoticeEvent] = []
    for spec in inputs:
        if "rw_csv" in spec:
            found, _ = read_retraction_watch_csv(payload(spec["rw_csv"]))
        elif "rw_csv_inline" in spec:
            found, rejects = read_retraction_watch_csv(spec["rw_csv_inline"])
            assert rejects == []
        elif "doi_nature" in spec:
            found, _ = read_doi_nature_csv(payload(spec["doi_nature"]))
        elif "doi_nature_inline" in spec:
            found, rejects = read_doi_nature_csv(spec["doi_nature_inline"])
            assert rejects == []
        elif "crossref_fixture" in spec:
            found = events_from_crossref_relations(spec["work_doi"], payload(spec["crossref_fixture"]))
        elif "crossref_inline" in spec:
            found = events_from_crossref_relations(spec["work_doi"], spec["crossref_inline"])
        elif "crossref_jsonl" in spec:
            found = []
            for line in (FIXTURES / spec["crossref_jsonl"]).read_text().splitlines():
                message = json.loads(line)
                found += events_from_crossref_relations(message["DOI"], message)
        elif "events" in spec:
            found = [NoticeEvent.from_dict(e) for e in spec["events"]]
        elif "arxiv_withdrawal" in spec:
            found = events_from_arxiv_withdrawal(**spec["arxiv_withdrawal"])
        else:
            raise AssertionError(f"unknown input kind {spec}")
        events.extend(found)
    return events


GOLDEN_CASES = sorted(GOLDEN.glob("*.json"))


def test_golden_cases_exist():
    assert len(GOLDEN_CASES) >= 20


@pytest.mark.parametrize("case_path", GOLDEN_CASES, ids=lambda p: p.stem)
def test_golden_notice(case_path: Path):
    case = json.loads(case_path.read_text())
    events = _events_for_inputs(case["inputs"])
    sources = sorted({s for e in events for s in e.sources})
    notice = standing_notice(case["work_doi"], events, sources, "2026-01-01T00:00:00Z")
    expect = case["expect"]
    assert notice.state is NoticeState.MEASURED
    assert notice.standing.value == expect["standing"], case["description"]
    got = [e.to_dict() for e in notice.events]
    assert len(got) == len(expect["events"]), got
    for g, want in zip(got, expect["events"]):
        for key, value in want.items():
            assert g[key] == value, (key, g)
        assert g["original_doi"] == normalise_notice_doi(case["work_doi"])[0]
    if "notes" in expect:
        assert bool(notice.notes) is expect["notes"], notice.notes


# ---------------------------------------------------------------------------------------------
# Retraction Watch database CSV


def test_rw_2026_sample_events_match_rows_exactly():
    events, rejects = read_retraction_watch_csv(payload("retraction_watch_2026-09_sample.csv"))
    got = [(e.record_id, e.original_doi, e.event_type.value, e.date, e.notice_doi) for e in events]
    assert got == [
        ("72867", "10.1016/j.micpro.2020.103053", "expression_of_concern", "2021-06-25", "10.1016/j.micpro.2021.104304"),
        ("72853", "10.1016/j.micpro.2020.103053", "retraction", "2024-02-14", "10.1016/j.micpro.2024.105024"),
        ("67291", "10.2147/ijn.s97476", "correction", "2022-08-04", "10.2147/ijn.s384663"),
        ("49720", "10.1161/circoutcomes.120.007778", "reinstatement", "2023-11-21", "10.1161/hcq.0000000000000125"),
        ("40040", "10.1002/1096-9098(200007)74:3<201::aid-jso8>3.0.co;2-5", "retraction", "2000-08-10",
         "10.1002/1096-9098(200007)74:3<201::aid-jso8>3.0.co;2-5"),
        ("34999", "10.1177/1758835919874651", "retraction", "2021-12-15", "10.1177/17588359211061903"),
    ]
    # the 'unavailable' original is a reject on its own line (header is line 1), never lost;
    # the two all-empty trailer rows are not rejects
    assert [(r.line, r.record_id, r.kept) for r in rejects] == [(4, "70548", False)]
    assert "unavailable" in rejects[0].reason
    # semicolon-terminated reason lists become clean tuples
    assert events[2].reasons == ("Concerns/Issues about Data", "Concerns/Issues about Referencing/Attributions",
                                 "Error in Text", "Investigation by Company/Institution")


def test_rw_trailing_comma_and_labs_variant_headers_both_recognised():
    new_header = payload("retraction_watch_2026-09_sample.csv").splitlines()[0]
    old_header = payload("retraction_watch_2023_labs_api_variant.csv").splitlines()[0]
    assert new_header.endswith("Notes,") and not old_header.endswith(",")
    assert is_retraction_watch_csv(new_header) and is_retraction_watch_csv(old_header)
    assert sniff_notice_format(new_header) == "retraction_watch_csv"
    assert sniff_notice_format("\ufeff" + old_header + "\r\n50438,...") == "retraction_watch_csv"


def test_rw_labs_variant_quoted_institution_and_plus_reasons():
    events, rejects = read_retraction_watch_csv(payload("retraction_watch_2023_labs_api_variant.csv"))
    assert rejects == []
    (event,) = events
    assert event.original_doi == "10.1155/2021/6907871"
    assert event.notice_doi == "10.1155/2023/9804945"
    assert all(not r.startswith("+") for r in event.reasons) and len(event.reasons) == 8


HEADER = ("Record ID,Title,Subject,Institution,Journal,Publisher,Country,Author,URLS,ArticleType,"
          "RetractionDate,RetractionDOI,RetractionPubMedID,OriginalPaperDate,OriginalPaperDOI,"
          "OriginalPaperPubMedID,RetractionNature,Reason,Paywalled,Notes,")


def _rw_row(record_id="1", date="1/2/2020 0:00", notice="10.1234/n", original="10.1234/o", nature="Retraction",
            title="T"):
    return (f"{record_id},{title},S,I,J,P,C,A,U,Research Article;,{date},{notice},0,1/1/2019 0:00,"
            f"{original},0,{nature},Reason A;,No,,")


def test_rw_several_natures_in_one_row_give_one_event_each():
    text = HEADER + "\n" + _rw_row(nature="Correction;Retraction;") + "\n"
    events, rejects = read_retraction_watch_csv(text)
    assert rejects == []
    assert [e.event_type for e in events] == [EventType.CORRECTION, EventType.RETRACTION]
    assert {e.date for e in events} == {"2020-01-02"}


def test_rw_bad_rows_are_rejects_with_their_line():
    multi_line_title = '"A title\nover two lines"'
    text = "\n".join([
        HEADER,
        _rw_row(record_id="1", title=multi_line_title),  # lines 2-3
        _rw_row(record_id="2", original="0"),  # line 4: sentinel 0
        _rw_row(record_id="3", original="not-a-doi"),  # line 5
        _rw_row(record_id="4", nature="Retraction;Mystery"),  # line 6
        "5,too,few,cells",  # line 7
        ",,,,,,,,,,,,,,,,,,,,",  # line 8: trailer, skipped
        _rw_row(record_id="6", date="31/31/2020 0:00", notice="unavailable"),  # line 9
        "",
    ])
    events, rejects = read_retraction_watch_csv(text)
    assert [(e.record_id, e.notice_doi, e.date) for e in events] == [("1", "10.1234/n", "2020-01-02"), ("6", None, None)]
    assert [(r.line, r.record_id, r.kept) for r in rejects] == [
        (4, "2", False), (5, "3", False), (6, "4", False), (7, None, False), (9, "6", True)]
    assert "Mystery" in rejects[2].reason
    assert "expected 20 fields" in rejects[3].reason
    assert "date" in rejects[4].reason


def test_rw_header_that_is_not_rw_is_one_reject():
    events, rejects = read_retraction_watch_csv("doi,retractionwatch\n10.1/x,Retraction\n")
    assert events == [] and rejects[0].line == 1


@pytest.mark.parametrize("cell, expected", [
    ("10.1002/1096-9098(200007)74:3%3C201::AID-JSO8%3E3.0.CO;2-5",
     "10.1002/1096-9098(200007)74:3<201::aid-jso8>3.0.co;2-5"),
    ("https://doi.org/10.1016/S0140-6736(97)11096-0", "10.1016/s0140-6736(97)11096-0"),
    (" doi:10.1074/jbc.M503111200 ", "10.1074/jbc.m503111200"),
    ("0", None), ("unavailable", None), ("Unavailable", None), ("", None), ("10.12/x y", None), ("1.2/x", None),
])
def test_normalise_notice_doi(cell, expected):
    assert normalise_notice_doi(cell)[0] == expected


# ---------------------------------------------------------------------------------------------
# doi,retractionwatch table


def test_doi_nature_excerpt_nasty_rows():
    events, rejects = read_doi_nature_csv(payload("retraction_watch_doi_nature_excerpt.csv"))
    assert [(r.line, r.reason) for r in rejects] == [
        (4, "no usable DOI (sentinel 'Unavailable')"), (5, "no usable DOI (empty)")]
    by_doi: dict[str, list[str]] = {}
    for e in events:
        by_doi.setdefault(e.original_doi, []).append(e.event_type.value)
        assert e.date is None and e.notice_doi is None
    assert by_doi["10.1212/wnl.57.3.445"] == ["retraction", "expression_of_concern"]
    assert by_doi["10.1161/circresaha.116.308301"] == ["correction", "retraction", "reinstatement"]
    # the SICI DOI lost its '<' '>' upstream: kept as given (lower-cased), it cannot be repaired
    assert "10.1002/(sici)1521-3951(199905)213:1153::aid-pssb1533.0.co;2-1" in by_doi


@pytest.mark.skipif(not SHARED_DOI_NATURE.exists(), reason="shared data not present")
def test_doi_nature_full_file_matches_rows_exactly():
    events, rejects = read_doi_nature_csv(SHARED_DOI_NATURE)
    with SHARED_DOI_NATURE.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    expected = [(doi.lower(), nature.strip()) for doi, natures in rows
                if doi.strip() and doi.strip().lower() != "unavailable"
                for nature in natures.split(";") if nature.strip()]
    assert [(e.original_doi, e.nature_raw) for e in events] == expected
    assert len(rows) == 57553
    assert [r.line for r in rejects] == [19973, 44538]

    index = NoticeIndex()
    index.add(events, "retraction_watch_doi_nature")
    standings = {doi: index.notice_for(doi, checked_at="2025-08-22").standing.value for doi in (
        "10.1016/j.jclinane.2006.02.005", "10.1074/jbc.m503111200", "10.1371/journal.pbio.0040031")}
    assert standings == {"10.1016/j.jclinane.2006.02.005": "retracted", "10.1074/jbc.m503111200": "retracted",
                         "10.1371/journal.pbio.0040031": "corrected"}


def test_sniffing_tells_the_formats_apart():
    assert is_doi_nature_csv("doi,retractionwatch") and is_doi_nature_csv("\ufeffdoi,retractionwatch\r")
    assert sniff_notice_format("doi,retractionwatch\n10.1/x,Retraction") == "retraction_watch_doi_nature"
    assert sniff_notice_format('{"doi": "10.1/x", "title": "A"}') is None
    assert sniff_notice_format("doi,title,year") is None
    assert not is_retraction_watch_csv("Record ID,Title,OriginalPaperDOI")


# ---------------------------------------------------------------------------------------------
# Crossref relations


def test_wakefield_updated_by_yields_its_retraction_once():
    fragment = payload("updated-by_10.1016_S0140-6736-97-11096-0_wakefield_fragment.json")
    work = "10.1016/S0140-6736(97)11096-0"
    events = events_from_crossref_relations(work, fragment)
    # the same payload seen twice (say, from the catalog record and a fresh lookup) still counts once
    notice = standing_notice(work, events + events_from_crossref_relations(work, {"message": fragment}),
                             ["crossref_retraction_watch"], "2026-10-03")
    retractions = [e for e in notice.events if e.event_type is EventType.RETRACTION]
    assert len(retractions) == 1
    assert retractions[0].notice_doi == "10.1016/s0140-6736(10)60175-4"
    assert retractions[0].record_id == "4036"
    assert notice.standing is Standing.RETRACTED
    assert [e.event_type for e in notice.events] == [EventType.CORRECTION, EventType.RETRACTION]


def test_update_to_on_the_notice_record_names_the_original():
    notice_record = {"DOI": "10.1016/S0140-6736(10)60175-4", "update-to": [
        {"DOI": "10.1016/S0140-6736(97)11096-0", "type": "retraction", "source": "publisher",
         "updated": {"date-parts": [[2010, 2, 6]]}},
        {"DOI": "10.1016/x", "type": "new_version", "source": "publisher"},
        {"DOI": "10.1016/y", "type": "removal", "source": "publisher"},
    ]}
    events = events_from_crossref_relations("10.1016/S0140-6736(10)60175-4", notice_record)
    assert [(e.original_doi, e.notice_doi, e.event_type, e.date, e.source) for e in events] == [
        ("10.1016/s0140-6736(97)11096-0", "10.1016/s0140-6736(10)60175-4", EventType.RETRACTION, "2010-02-06",
         "crossref_publisher"),
        ("10.1016/y", "10.1016/s0140-6736(10)60175-4", EventType.WITHDRAWAL, None, "crossref_publisher"),
    ]
    # and merged with the original's updated-by view of the same notice, it is one event
    fragment = payload("updated-by_10.1016_S0140-6736-97-11096-0_wakefield_fragment.json")
    both = events + events_from_crossref_relations("10.1016/S0140-6736(97)11096-0", fragment)
    notice = standing_notice("10.1016/s0140-6736(97)11096-0", both, [], None)
    (retraction,) = [e for e in notice.events if e.event_type is EventType.RETRACTION]
    assert retraction.sources == ("crossref_retraction_watch", "crossref_publisher")


def test_partial_retraction_is_not_called_retracted():
    msg = {"updated-by": [{"DOI": "10.1234/n", "type": "partial_retraction", "source": "publisher"}]}
    notice = standing_notice("10.1234/o", events_from_crossref_relations("10.1234/o", msg), ["crossref_publisher"], None)
    assert notice.standing is Standing.CORRECTED
    assert notice.events[0].nature_raw == "partial_retraction"


# ---------------------------------------------------------------------------------------------
# standing, unavailable, index, plain forms


def test_standing_uses_only_the_works_own_events():
    a = NoticeEvent("10.1/a", EventType.RETRACTION, None, None, "x")
    b = NoticeEvent("10.1/b", EventType.CORRECTION, None, None, "x")
    assert standing_notice("10.1/B", [a, b], ["x"], None).standing is Standing.CORRECTED


def test_merge_does_not_fold_distinct_dated_events_without_notice_doi():
    e1 = NoticeEvent("10.1/a", EventType.CORRECTION, "2020-01-01", None, "x")
    e2 = NoticeEvent("10.1/a", EventType.CORRECTION, "2021-01-01", None, "y")
    assert len(merge_events([e1, e2])) == 2
    e3 = NoticeEvent("10.1/a", EventType.CORRECTION, "2021-01-01", "10.1/n", "z")
    merged = merge_events([e1, e2, e3])
    assert len(merged) == 2 and merged[1].sources == ("z", "y")


def test_unavailable_notice_is_unknown_not_none():
    n = unavailable_notice(UnavailableReason.NO_CANONICAL_WORK, checked_at="2026-01-01")
    assert n.state is NoticeState.UNAVAILABLE and n.standing is Standing.UNKNOWN and n.events == ()
    with pytest.raises(ValueError):
        unavailable_notice("no such reason")


def test_index_lists_sources_checked_and_pools_arxiv_doi():
    index = NoticeIndex()
    index.add(read_doi_nature_csv(payload("retraction_watch_doi_nature_excerpt.csv"))[0], "retraction_watch_doi_nature")
    index.add(events_from_arxiv_withdrawal("0704.0001", "2007-05-01"), "arxiv")
    clean = index.notice_for("10.1038/nature14539", checked_at="t")
    assert clean.state is NoticeState.MEASURED and clean.standing is Standing.NONE
    assert clean.sources_checked == ("retraction_watch_doi_nature", "arxiv")
    withdrawn = index.notice_for("10.1103/physrevd.76.013009", "0704.0001", checked_at="t")
    assert withdrawn.standing is Standing.WITHDRAWN
    assert withdrawn.events[0].original_doi == "10.1103/physrevd.76.013009"
    assert index.notice_for(None, None, checked_at="t").reason is UnavailableReason.NO_WORK_IDENTIFIER
    assert NoticeIndex().notice_for("10.1/x", checked_at="t").reason is UnavailableReason.NOT_CHECKED


def test_plain_forms_round_trip():
    fragment = payload("updated-by_10.1016_S0140-6736-97-11096-0_wakefield_fragment.json")
    notice = standing_notice("10.1016/s0140-6736(97)11096-0",
                             events_from_crossref_relations("10.1016/s0140-6736(97)11096-0", fragment),
                             ["crossref_retraction_watch"], "2026-10-03T00:00:00Z")
    assert notice_from_dict(notice_to_dict(notice)) == notice
    row = notice_row("w1", "10.1016/s0140-6736(97)11096-0", notice)
    assert isinstance(row["events"], str) and row["standing"] == "retracted"
    assert notice_from_dict(row) == notice
