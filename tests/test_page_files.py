"""A record write's pages (``record_pages.render_page_files``, with a writer's cache kept over its
records) are byte for byte the pages ``record_pages.render_ledger_text`` and ``render_ledger_html``
make one by one: over generated records with odd text (HTML-special characters, controls, NULs,
lone surrogates, long strings), odd values (numbers that are not ints, missing fields, None
times), notices and inbound citations, with and without a cache kept over many records."""
from __future__ import annotations

import copy
import random

import pytest
from test_records import WORK_A, WORK_B, record_of

from citeledger.records.render import record_pages as page_files
from citeledger.records.render.record_pages import render_ledger_html, render_ledger_text

TEXTS = ["A. Author, Title. J. Things 1 (2001) 1-10.", "<i>x</i> & 'q' \"r\"", "  spaced \t out\n twice  ",
         "word " * 300, "esc \x1b[31m red", "c1 \x85 and \x9f", "nul \x00 inside", "é ü \u2028 \u00a0 \U0001f600",
         "lone \ud800 surrogate", "", "#;&amp; already", "x\x0bvt\x0cff\x1cfs"]
WORDS = [None, "", "doi", "<b>", "raw_fallback", "a & b", "ctl\x1b"]
TIMES = [None, "2026-01-01T10:00:00.000000Z", "<t>", 5, "2026-12-01T05:00:00Z", ["a", "<b>"]]
SCORES = [None, 0.93, 1, 0, -0.0, 0.0, True, float("nan"), 1e-7, "0.9", 2.5e300, -1]
INDEXES = [1, 2, 7, True, 1.0, "3", 1000, -4]
STATUSES = ["verified_exact", "unresolved", "<b>odd</b>", 1.0, "metadata_mismatch", ["x"]]


def _odd_resolved(rng: random.Random) -> dict | None:
    return rng.choice([None, {"work_id": rng.choice(["w-a", "doi:10.1/x", "<w>"]), "doi": rng.choice([None, "10.1/x"]),
                              "arxiv_id": rng.choice([None, "0704.0001"]), "title": rng.choice(TEXTS + [None]),
                              "year": rng.choice([None, 2001, "1999"])}])


def _mutate_item(item: dict, rng: random.Random, notices: list) -> None:
    """Some fields of one reference changed to values from the pools above (or removed)."""
    for _ in range(rng.randrange(0, 6)):
        field = rng.choice(["raw", "resolved", "status", "reference_index", "resolver_source", "score", "when",
                            "notice", "drop"])
        if field == "raw":
            item["cited_as"]["raw"] = rng.choice(TEXTS + [None, rng.choice(TEXTS) * rng.randrange(1, 5)])
        elif field == "resolved":
            item["resolved"] = _odd_resolved(rng)
        elif field == "status":
            item["status"] = rng.choice(STATUSES)
        elif field == "reference_index":
            item["reference_index"] = rng.choice(INDEXES)
        elif field == "resolver_source":
            item["resolver_source"] = rng.choice(WORDS + [5])
        elif field == "score":
            item["score"] = rng.choice(SCORES)
        elif field == "when":
            key = rng.choice(["source_observed_at", "source", "resolved_at", "snapshot_fingerprint",
                              "snapshot_observed_at"])
            item[key] = rng.choice(TIMES + ["sha256:" + "ab" * 32])
        elif field == "notice":
            item["notice"] = rng.choice(notices)
        else:
            item.pop(rng.choice(["resolver_source", "score", "resolved", "source_observed_at", "resolved_at"]), None)


def _generated(count: int, seed: int) -> list[dict]:
    """Records built by the builder, then changed field by field (the pages take any record)."""
    rng = random.Random(seed)
    bases = [record_of("arXiv:0704.0001", WORK_A), record_of("10.1234/b", WORK_B)]
    notices = [i["notice"] for b in bases for i in b["outbound"]["items"]]
    out = []
    for _ in range(count):
        record = copy.deepcopy(rng.choice(bases))
        for item in record["outbound"]["items"]:
            if rng.random() < 0.5:
                _mutate_item(item, rng, notices)
        for item in record["inbound"]["items"]:
            item["citing_title"] = rng.choice(TEXTS + [None])
            item["resolver_source"] = rng.choice(WORDS)
        if rng.random() < 0.3:
            record["paper"]["work"]["title"] = rng.choice(TEXTS)
        if rng.random() < 0.2:  # a reference listed twice (with_notices shares the outbound item)
            record["outbound"]["items"].append(record["outbound"]["items"][0])
        out.append(record)
    return out


def _old(record: dict) -> tuple | str:
    """The reference pages, or "error" when a page cannot be made (a lone surrogate, an unhashable
    standing, a missing field the page needs): the writer then fails, whichever error it is."""
    try:
        return render_ledger_text(record).encode(), render_ledger_html(record).encode()
    except (TypeError, KeyError, ValueError, AttributeError):  # UnicodeEncodeError is a ValueError
        return "error"


def _new(record: dict, cache: page_files.PageCache | None) -> tuple | str:
    try:
        return page_files.render_page_files(record, cache)
    except (TypeError, KeyError, ValueError, AttributeError):
        return "error"


@pytest.mark.parametrize("seed", range(4))
def test_generated_records_give_the_reference_pages(seed):
    records = _generated(60, seed)
    cache = page_files.PageCache()
    for record in records:
        expected = _old(record)
        assert _new(record, None) == expected
        assert _new(record, cache) == expected  # the cache kept over every record before
        assert _new(record, cache) == expected  # and with every line of this one in it


def test_zero_scores_keep_their_sign():
    """-0.0 == 0 == False share a dict key but not their text ("-0.00", "0.00")."""
    cache = page_files.PageCache()
    record = record_of("arXiv:0704.0001", WORK_A)
    for score in (0, -0.0, 0.0, False, -0.0):
        record["outbound"]["items"][0]["score"] = score
        assert page_files.render_page_files(record, cache) == _old(record)


def test_printable_text_has_no_whitespace_but_the_space():
    """The pages fold a cited string's whitespace (``" ".join(raw.split())``) only when it is not
    printable or has a double, leading or trailing space: every character ``split`` splits at but
    the space is not printable."""
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    assert [c for c in spaces if c.isprintable()] == [" "] and len(spaces) > 20
