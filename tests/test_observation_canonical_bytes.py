"""``observation.canonical_bytes``: orjson where it writes ``canonical_json``'s bytes, the json
encoder elsewhere; either way the same bytes (observation ids and digests rest on them)."""
from __future__ import annotations

import enum
import random
from datetime import datetime, timezone

import pytest

from resolvers.canonical import canonical_json
from resolvers.observation import _plain, canonical_bytes


class Kind(enum.Enum):
    A = "a"


class Text(str):
    pass


EDGES = [
    1e-05, 1e-4, 9.999e-05, 0.0001, 1e16, 9999999999999998.0, -0.0, 0.0, 1 / 3, 5e-324, float("nan"),
    float("inf"), -float("inf"), 2 ** 64, -(2 ** 63) - 1, 2 ** 63, "a\x1fb\x7f\u2028\ud800", "é\"\\\n\t\b\f\r",
    {"b": 1, "a": [1, (2, 3.5)], "É": None, "Z": True}, {3: "int key", 1: "b"}, {"z": {"y": [0.25, "x", False]}},
    Kind.A, Text("sub"), datetime(2026, 12, 1, tzinfo=timezone.utc), {"n": float("nan")}, [1e-7, "x"], (),
    {"\ud83d": 1}, {"\U0001f600": 1, "\uffff": 2, "\ue000": 3},
]


@pytest.mark.parametrize("value", EDGES, ids=repr)
def test_same_bytes_as_the_json_encoder(value):
    assert canonical_bytes(value) == canonical_json(value).encode("utf-8", errors="surrogatepass")


def test_random_floats_and_nested_values_give_the_same_bytes():
    rng = random.Random(3)
    for _ in range(3000):
        x = 10 ** rng.uniform(-7, 18) * rng.choice([1, -1])
        value = {"score": round(x, rng.randint(0, 8)), "x": x, "list": [x, str(x)], "k": {"v": rng.random()}}
        assert canonical_bytes(value) == canonical_json(value).encode("utf-8", errors="surrogatepass")


def test_values_orjson_writes_otherwise_are_not_plain():
    assert not _plain(1e-05) and not _plain(float("nan")) and not _plain(Kind.A) and not _plain(Text("s"))
    assert not _plain({1: "a"}) and _plain({"a": [1, (2.5, None, True, "s")]})
