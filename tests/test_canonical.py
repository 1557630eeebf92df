"""One canonical JSON for observations and records (resolvers/canonical.py)."""
from __future__ import annotations

import math

import pytest

from citeledger.records.record_json import canonical_json
from resolvers import canonical, observation


def test_records_and_observations_share_the_one_definition():
    assert canonical_json is canonical.canonical_json
    assert observation.canonical_json is canonical.canonical_json


def test_the_bytes_are_pinned():
    value = {"b": [1.0, 2, None, True], "a": {"é": "ü", "Z": "x"}, "c": "q\"\n"}
    expected = '{"a":{"Z":"x","é":"ü"},"b":[1.0,2,null,true],"c":"q\\"\\n"}'
    assert canonical.canonical_json(value) == expected
    assert canonical.canonical_json(value, strict=True) == expected


def test_lenient_writes_what_json_lacks_and_strict_refuses_it():
    assert canonical.canonical_json([math.nan, frozenset()]) == '[NaN,"frozenset()"]'
    with pytest.raises(ValueError):
        canonical.canonical_json([math.nan], strict=True)
    with pytest.raises(TypeError):
        canonical.canonical_json([object()], strict=True)
