"""The batch's observation rows built as columns (resolvers/observation.observation_columns) and
the content's JSON written key by key (canonical.canonical_object): the same values and bytes as
``observation_row`` and ``canonical_json``, whatever the values."""
from __future__ import annotations

import math
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from resolvers import canonical
from resolvers.model import ExtractedIdentifiers, Reason, Reference, Status, Verdict, Work
from resolvers.observation import CONTENT_KEYS, ROW_KEYS, observation_columns, observation_row
from resolvers.resolution import Resolution

_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)  # lone surrogates too
_VALUE = st.one_of(st.none(), _TEXT, st.integers(), st.floats(), st.booleans(), st.lists(_TEXT, max_size=3),
                   st.lists(st.integers(), max_size=2), st.dictionaries(_TEXT, st.integers(), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUE, min_size=len(CONTENT_KEYS), max_size=len(CONTENT_KEYS)))
def test_canonical_object_writes_the_canonical_json_of_the_same_dict(values):
    assert canonical.canonical_object(CONTENT_KEYS, values) == canonical.canonical_json(dict(zip(CONTENT_KEYS, values)))


def test_canonical_object_gives_odd_values_to_the_encoder():
    values = [math.nan, True, 3, "é\ud800", ["a"], {"b": 1}, math.inf, None, frozenset(), 1.5, [], "x", 0, -0.0, "y"]
    assert canonical.canonical_object(CONTENT_KEYS, values) == canonical.canonical_json(dict(zip(CONTENT_KEYS, values)))


def _resolutions() -> list[Resolution]:
    work = Work("w:1", title="A title", doi="10.1/x", arxiv_id="1234.56789")
    ref = Reference("paper-\u00e9", 3, "Smith, A title, arXiv:1234.56789 \ud800", "jsonl")
    ids = ExtractedIdentifiers(dois=("10.1/x",), arxiv_ids=("1234.56789",))
    return [
        Resolution(ref, ids, Verdict(Status.VERIFIED_EXACT, Reason.ARXIV_ID_MATCH, work, "catalog", 1.0,
                                     {"rule": "identifier", "work": {"year": 2019, "title": "A title"}, "x": 99.5})),
        Resolution(Reference("p", 1, "nothing here"), ExtractedIdentifiers(),
                   Verdict(Status.UNRESOLVED, Reason.NO_IDENTIFIER, None, "catalog", math.nan, {"rule": "unresolved"})),
        Resolution(Reference("p", 2, "x", "bib"), ExtractedIdentifiers(),
                   Verdict(Status.VERIFIED_FUZZY, Reason.FUZZY_MATCH, work, "fuzzy", 1.7,
                           {"odd": [frozenset({1})], "nan": math.nan})),
    ]


def test_columns_hold_the_rows_of_observation_row():
    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    resolutions = _resolutions()
    columns = observation_columns(resolutions, "run-1", at, "fp:abc")
    assert list(columns) == list(ROW_KEYS)
    rows = [observation_row(r, "run-1", at, "fp:abc") for r in resolutions]
    assert [{k: columns[k][i] for k in ROW_KEYS} for i in range(len(rows))] == rows
    assert set(rows[0]) == set(ROW_KEYS)


def test_digest_is_over_the_canonical_json_of_the_content():
    import hashlib
    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    for r in _resolutions():
        row = observation_row(r, "run-1", at, "fp:abc")
        text = canonical.canonical_json({k: row[k] for k in CONTENT_KEYS})
        assert row["observation_digest"] == "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
