"""The batch's observation rows built as columns (resolvers/observation.observation_columns): the
same values and bytes as ``observation_row``, odd values too."""
from __future__ import annotations

import math
from datetime import datetime, timezone

from resolvers import canonical
from resolvers.model import ExtractedIdentifiers, Reason, Reference, Status, Verdict, Work
from resolvers.observation import ROW_KEYS, observation_columns, observation_row
from resolvers.resolution import Resolution


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
        text = canonical.canonical_json({k: row[k] for k in ROW_KEYS[:15]})
        assert row["observation_digest"] == "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def test_id_key_is_the_canonical_json_of_the_six_values():
    from resolvers.observation import _id_key
    for values in (["p\u00e9", 3, "raw \ud800 \"q\" \n", "jsonl", "fp", "v"], ["p", True, "r", None, "fp", "v"],
                   ["p", -2, "", "s", "fp", "v"], [1, 2, 3, 4, "fp", "v"]):
        assert _id_key(*values) == canonical.canonical_json(values)
