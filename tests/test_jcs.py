"""RFC 8785 (JCS): the canonical bytes a v2 citation record's digest and signature are taken over."""
from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resolvers.jcs import JCSError, es_number, jcs, jcs_exact, jcs_plain

# RFC 8785 Appendix B: IEEE 754 doubles (hex) and their JCS / ECMAScript form
NUMBERS = [
    ("0000000000000000", "0"), ("8000000000000000", "0"), ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"), ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"), ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"), ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"), ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"), ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"), ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize("bits,expected", NUMBERS)
def test_numbers_follow_rfc8785_appendix_b(bits, expected):
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert es_number(value) == expected
    assert float(expected) == value  # and the text reads back as the same double


@pytest.mark.parametrize("value,expected", [(1.0, "1"), (0.5, "0.5"), (1e-7, "1e-7"), (1.5e-5, "0.000015"),
                                            (1e21, "1e+21"), (1e20, "100000000000000000000"), (-0.0, "0"),
                                            (0.1, "0.1"), (123.456, "123.456")])
def test_numbers_as_ecmascript_writes_them(value, expected):
    assert es_number(value) == expected


def test_member_names_sort_by_utf16_code_units():
    # RFC 8785 3.2.3: U+1F600 (surrogates D83D DE00) sorts before U+FB33, unlike by code point
    value = {"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
             "1": "One", "\U0001f600": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}
    keys = list(json.loads(jcs(value).decode("utf-8")))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_strings_escape_only_what_rfc8785_escapes():
    assert jcs("a\"b\\c\n\t\x01\x7f\u2028é") == '"a\\"b\\\\c\\n\\t\\u0001\x7f\u2028é"'.encode("utf-8")
    assert jcs({"b": [1, 2.0, None, True], "a": {}}) == b'{"a":{},"b":[1,2,null,true]}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, 2 ** 53 + 1, "\ud800", {"a": [math.nan]}, object()])
def test_values_jcs_cannot_carry_are_errors(bad):
    with pytest.raises(JCSError):
        jcs(bad)
    with pytest.raises(JCSError):
        jcs_exact(bad)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 53), 2 ** 53) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(), lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20)


@pytest.mark.parametrize("writer", [jcs, jcs_plain], ids=["fast", "plain"])
@settings(max_examples=400, deadline=None)
@given(value=JSON_VALUES)
def test_the_fast_paths_write_exactly_what_the_exact_writer_writes(writer, value):
    """``jcs`` and ``jcs_plain`` (no read-back: the record builder's values are JSON values only,
    every other check of the fast path kept: integral floats, exponents, high member names, big
    integers) write the exact writer's bytes, or refuse what it refuses."""
    try:
        exact = jcs_exact(value)
    except JCSError:
        with pytest.raises(JCSError):
            writer(value)
        return
    assert writer(value) == exact


@pytest.mark.parametrize("value", [1.0, [2.0], {"a": 1e16}, 1e-7, 2 ** 53, {"\ufb33": 1, "\U0001f600": 2}])
def test_values_where_json_dumps_differs_take_the_exact_path(value):
    assert jcs(value) == jcs_exact(value)
    assert jcs_plain(value) == jcs_exact(value)


def test_reserialised_json_gives_the_same_bytes():
    value = {"score": 1.0, "z": [0.1, 1e-7, 300.0], "title": "Ünïcödé \u2028", "n": 40}
    again = json.loads(json.dumps(value, indent=3, sort_keys=False, ensure_ascii=True))
    assert jcs(again) == jcs(value) == jcs(json.loads(jcs(value)))


@pytest.mark.parametrize("value", [1e16, 6.434455767120234e16, 1e21, -2.0 ** 60, 1e300])
def test_an_integral_float_beyond_2_53_reads_back_from_its_jcs_as_the_same_text(value):
    """A JSON reader that keeps integers (Python's) reads ``1e16``'s JCS ``10000000000000000`` back as
    an int: JCS of that int is the same text, so a record holding such a float verifies from its
    file; an integer that is no double's JCS text stays an error."""
    text = jcs_exact([value])
    assert jcs_exact(json.loads(text)) == text
    with pytest.raises(JCSError):
        jcs_exact(int(json.loads(text)[0]) + 1)
