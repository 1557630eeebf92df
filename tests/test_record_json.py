"""The record file's JSON (``record_pages.render_json``): the RFC 8785 (JCS) form of the whole
record and a newline (a v1 record keeps v1's ``json.dumps(record, indent=2)``), on random JSON and
on the floats orjson writes otherwise than JCS; the check every written record passes
(record_writer_check.py) refuses a file that is not. Records the builder made are compared with
the per-row builder's in tests/test_record_build.py."""
from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from record_writer_check import check_record_bytes, check_record_file
from test_record_v2 import expected_case

from citeledger.records.receipts import sign_record
from citeledger.records.render.record_pages import render_json
from resolvers.errors import JCSError
from resolvers.jcs import jcs_exact

RECORD_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 63), 2 ** 63) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text() | st.sampled_from(["05:00:00.000000Z", "Type-1e-5 x", "0.00001", "version 2.0, 2001"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20)


def dumped(value):
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=6), RECORD_LIKE, max_size=5))
def test_render_json_writes_the_jcs_of_the_record(record):
    try:
        expected = jcs_exact(record) + b"\n"
    except JCSError:  # a lone surrogate, an integer beyond 2**53: JCS has no form for it
        with pytest.raises(JCSError):
            render_json(record)
        return
    assert render_json(record) == expected


@pytest.mark.parametrize("value", [1e-5, 1e-7, 1.5e-9, -3.9e-6, 9.99e-5, 1e-4, 1e16, 2.5e20, 1e300, -0.0, 0.0, 2 ** 50])
def test_floats_orjson_writes_otherwise_come_out_as_jcs_writes_them(value):
    record = {"score": value, "items": [{"x": value}], "at": "2026-12-01T05:00:00.000000Z", "list": [value, [-value]]}
    assert render_json(record) == jcs_exact(record) + b"\n"


def test_a_v1_record_keeps_its_indented_file():
    record = {"schema": "pith.paper-citation-record.v1", "score": 1.0, "content_digest": "sha256:00"}
    assert render_json(record) == dumped(record)


def test_the_written_record_check_refuses_other_bytes():
    record = {"schema": "x", "content_digest": "sha256:00", "score": 0.5}
    check_record_bytes(jcs_exact(record) + b"\n")
    with pytest.raises(AssertionError):
        check_record_bytes(dumped(record))


def test_the_written_record_check_refuses_a_record_the_schema_refuses():
    """Every record a test writes is validated against its schema with its digest, not only the
    few the writer validates itself (``record_files.validated``)."""
    record = sign_record(expected_case(), None, signed_at="2026-01-01T10:00:01Z")
    check_record_file(jcs_exact(record) + b"\n")
    bad = json.loads(json.dumps(record))
    bad["outbound"]["items"][0]["resolved_at"] = "2026-01-01 10:00:00+00:00"  # every time must be ISO Z
    with pytest.raises(jsonschema.ValidationError):
        check_record_file(jcs_exact(bad) + b"\n")
    changed = json.loads(json.dumps(record))
    changed["counts"]["references"] += 1
    with pytest.raises(ValueError, match="content digest"):
        check_record_file(jcs_exact(changed) + b"\n")


EVIDENCE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=15)


@settings(max_examples=300, deadline=None)
@given(EVIDENCE)
@example({"a": -9999999999999999999})  # 19 digits below -2**63: orjson gives -1e+19 (independent review)
@example([-(2 ** 63) - 1, 2 ** 64 - 1, 2 ** 64])
def test_evidence_read_by_orjson_is_what_json_loads_read(value):
    """``records.evidence_value`` reads a reference's evidence JSON with orjson (NaN, infinities and
    integers beyond 2**64 through json.loads): the record values are those json.loads gave."""
    from citeledger.records.evidence import json_number
    from citeledger.records.record import evidence_value

    text = json.dumps(value)
    expected = json.loads(text, parse_float=json_number, parse_constant=lambda _: None)
    assert evidence_value(text) == expected
    assert json.dumps(evidence_value(text)) == json.dumps(expected)  # 1 and 1.0, 0 and -0.0 told apart
