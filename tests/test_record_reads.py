"""The ledger reads behind a record write (``ledger_reads.papers_observations``): the latest
observation of each reference, when its string was first read, and times as the records write them."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from citeledger.ledger.ledger_store import LedgerStore
from citeledger.records.ledger_reads import papers_observations
from citeledger.records.record import sorted_rows
from citeledger.records.record_json import plain_value

FIRST = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
LATER = datetime(2026, 2, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=5, minutes=30)))  # not UTC


def row(run_id, when, paper, index, raw, work_id=None):
    return {"observation_id": f"{run_id}:{paper}:{index}", "observation_digest": f"sha256:{run_id}{index}",
            "run_id": run_id, "observed_at": when, "citing_paper": paper, "reference_index": index, "raw": raw,
            "source": "pdf_text", "status": "verified_exact" if work_id else "unresolved", "reason": None,
            "resolver_source": "doi" if work_id else None, "work_id": work_id, "doi": None, "arxiv_id": None,
            "extracted_dois": [], "extracted_arxiv_ids": [], "score": 1.0 if work_id else None, "evidence": "{}"}


def test_latest_rows_first_reads_and_times_as_records_write_them(tmp_path):
    store = LedgerStore(tmp_path)
    store.write_observations("r1", "p0", [row("r1", FIRST, "paper-a", 1, "Same string."),
                                          row("r1", FIRST, "paper-a", 2, "Old string."),
                                          row("r1", FIRST, "paper-b", 1, "Cites a.", "w-a")])
    store.write_observations("r2", "p0", [row("r2", LATER, "paper-a", 1, "Same string.", "w-x"),
                                          row("r2", LATER, "paper-a", 2, "New string."),
                                          row("r2", LATER, "paper-b", 1, "Cites a, no more.")])
    (outbound, inbound, _), = papers_observations(tmp_path, None, [(["paper-a"], "w-a")])
    assert [(r["reference_index"], r["run_id"], r["raw"]) for r in outbound] == [
        (1, "r2", "Same string."), (2, "r2", "New string.")]
    assert inbound == []  # paper-b's latest observation of its reference no longer links to w-a
    assert [r["observed_at"] for r in outbound] == [plain_value(LATER)] * 2 == ["2026-02-02T22:35:06.000007Z"] * 2
    # the string of reference 1 was first read in r1; reference 2's string changed in r2
    assert [r["source_observed_at"] for r in outbound] == [plain_value(FIRST), plain_value(LATER)]
    (_, inbound, _), = papers_observations(tmp_path, None, [(["paper-z"], "w-x")])
    assert [(r["citing_paper"], r["reference_index"]) for r in inbound] == [("paper-a", 1)]


def test_pass_rows_are_what_the_builder_would_make_of_them(tmp_path):
    """``rows_plain``: the builder takes the pass's rows as they are (no copy); they must be what its
    own ``latest_per_reference`` makes of them: the latest of each reference, values plain
    (``score`` 1.0 as 1, as JCS writes it)."""
    store = LedgerStore(tmp_path)
    store.write_observations("r1", "p0", [row("r1", FIRST, "paper-a", i, f"String {i}.", "w-a" if i % 2 else None)
                                          for i in range(1, 6)])
    (outbound, _, _), = papers_observations(tmp_path, None, [(["paper-a"], None)])
    assert [r["score"] for r in outbound] == [1, None, 1, None, 1] and type(outbound[0]["score"]) is int
    assert sorted_rows(outbound, True, plain=True) == sorted_rows(outbound, True)


def test_pass_rows_are_the_current_views_rows_with_first_reads(tmp_path):
    """The pass finds the latest observation of references seen once by an aggregate and ranks only
    those seen more often: its rows must be the ``current`` view's, whichever way each was found
    (seen once, three times, latest not last written, string changed back, string null), and
    ``source_observed_at`` the earliest observation of the same string."""
    store = LedgerStore(tmp_path)
    times = [FIRST + timedelta(hours=h) for h in range(4)]
    store.write_observations("r1", "p0", [row("r1", times[1], "paper-a", i, f"String {i}.", "w-a" if i % 2 else None)
                                          for i in range(1, 7)] + [row("r1", times[1], "paper-b", 1, "B cites a.", "w-a")])
    store.write_observations("r0", "p0", [row("r0", times[0], "paper-a", 2, "String 2."),  # written later, older
                                          row("r0", times[0], "paper-a", 3, "String 3, first form.")])
    store.write_observations("r2", "p0", [row("r2", times[2], "paper-a", 3, "String 3."),
                                          row("r2", times[2], "paper-a", 4, None),
                                          row("r2", times[2], "paper-a", 5, "String 5, changed.", "w-b")])
    store.write_observations("r3", "p0", [row("r3", times[3], "paper-a", 5, "String 5.", "w-b")])
    (outbound, inbound, _), = papers_observations(tmp_path, None, [(["paper-a"], "w-a")])
    from citeledger.ledger.ledger_store import connect_views

    con = connect_views(tmp_path, None)
    current = con.sql("SELECT citing_paper, reference_index, observation_id FROM current ORDER BY 1, 2").fetchall()
    assert [(r["citing_paper"], r["reference_index"], r["observation_id"]) for r in outbound + inbound] == current
    seen = {r["reference_index"]: r["source_observed_at"] for r in outbound}
    assert seen == {1: plain_value(times[1]), 2: plain_value(times[0]), 3: plain_value(times[1]), 4: None,
                    5: plain_value(times[1]), 6: plain_value(times[1])}


def test_text_list_columns_read_as_pyarrow_reads_them():
    """``_arrow_rows`` cuts list-of-text columns from their flat values: the same lists as
    ``to_pylist`` for chunks that are slices of a longer array, empty lists, nulls and null items."""
    import pyarrow as pa

    from citeledger.records.ledger_reads import _arrow_rows

    whole = pa.array([["10.1/a", "10.1/b"], [], ["x"], ["d", None, "f"], []], pa.list_(pa.string()))
    lists = pa.chunked_array([whole.slice(1, 3), whole.slice(3, 2), whole,
                              pa.array([["a"], None, []], pa.list_(pa.string()))])
    table = pa.table({"extracted_dois": lists, "n": pa.array(range(len(lists)))})
    assert [r["extracted_dois"] for r in _arrow_rows(table)] == lists.to_pylist()


def test_float_columns_read_as_records_write_them():
    """A double column (the score) of a pass: a finite fraction as is, an integral float as the
    integer, NaN and the infinities as None (``records.plain_value`` of each value)."""
    import pyarrow as pa

    from citeledger.records.ledger_reads import _arrow_rows

    scores = [None, 0.93, 1.0, -0.0, float("nan"), float("inf"), -float("inf"), 2.0 ** 60, 1e-300, -3.5]
    got = [r["score"] for r in _arrow_rows(pa.table({"score": pa.array(scores, pa.float64())}))]
    assert got == [None, 0.93, 1, 0, None, None, None, 2 ** 60, 1e-300, -3.5]
    assert [type(v) for v in got] == [type(plain_value(v)) for v in scores]
