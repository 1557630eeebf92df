"""A reference's evidence (the resolver's JSON text in the ledger) as a record's value: integral
floats as the integers JCS writes anyway (``1.0`` reads back as what was digested), NaN and the
infinities as null, text that is not JSON kept as ``{"unparsed": text}``."""
from __future__ import annotations

import json
import math
from typing import Any

import orjson

from resolvers.jcs import names_out_of_order

SAFE_INTEGER = 2 ** 53


def plain_float(value: float) -> float | int | None:
    """A float as a record holds it: NaN and infinities as None, an integral one below 2**53 as the integer."""
    if math.isnan(value) or math.isinf(value):
        return None
    return int(value) if value.is_integer() and abs(value) < SAFE_INTEGER else value


def json_number(text: str) -> float | int | None:
    return plain_float(float(text))


# ``_plain_parsed``'s answer for an integral number from 2**53 up in magnitude: orjson reads an
# integer below -2**63 or above 2**64 - 1 as a float, so json.loads reads that evidence instead
_BEYOND_DOUBLE = object()


def parse_evidence(text: str) -> Any:
    """The evidence text's value (see the module)."""
    try:  # orjson, then record values (1.0 as 1); it refuses NaN (json.loads: null), and reads an
        parsed = orjson.loads(text)  # integer beyond int64/uint64 as a float (json.loads: as is)
        if _plain_parsed(parsed) is not _BEYOND_DOUBLE:
            return plain_float(parsed) if type(parsed) is float else parsed
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text, parse_float=json_number, parse_constant=lambda _: None)
    except ValueError:
        return {"unparsed": text}


_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def evidence_and_jcs(text: str) -> tuple[Any, bytes | None]:
    """``parse_evidence(text)``, and its JCS when orjson's sorted text of it is that, else None (then
    the caller's checked writer): when the value is a list or an object whose floats are all
    fractions from 1e-4 up in magnitude (``_plain_parsed`` sees each float anyway; below 1e-4
    orjson may write an exponent where JCS writes the digits, and every other fraction it writes as
    ECMAScript does, tests/test_record_build.py compares them) and no member name sorts otherwise."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return parse_evidence(text), None
    safe = _plain_parsed(value)
    if safe is _BEYOND_DOUBLE or type(value) is float:
        return parse_evidence(text), None
    if safe is not True or (type(value) is not dict and type(value) is not list):
        return value, None
    try:
        out = orjson.dumps(value, option=_SORTED)
    except orjson.JSONEncodeError:  # an integer beyond 2**53: the checked writer says so
        return value, None
    return value, None if names_out_of_order(out) else out


EXPONENT_BELOW = 1e-4  # below it orjson may write an exponent (1e-6), where JCS writes the digits


def _plain_parsed(value: Any) -> Any:
    """Each integral float in what ``orjson.loads`` returned (dicts, lists, text, integers, finite
    floats, True, False, None) made the integer, in place (no copy of the tree); then True when no
    float is left below 1e-4 in magnitude, else False. An integral float from 2**53 up gives
    ``_BEYOND_DOUBLE`` (it may have been a longer integer in the text: a 19-digit scan of every
    evidence string found these before, 1.2 us of its 7.6). A float as the whole value is the caller's."""
    if type(value) is not dict and type(value) is not list:
        beyond = type(value) is float and value.is_integer() and not -SAFE_INTEGER < value < SAFE_INTEGER
        return _BEYOND_DOUBLE if beyond else True
    todo, safe = [value], True
    for node in todo:
        for key, item in (node.items() if type(node) is dict else enumerate(node)):
            kind = type(item)
            if kind is float:
                if item.is_integer():
                    if not -SAFE_INTEGER < item < SAFE_INTEGER:
                        return _BEYOND_DOUBLE
                    node[key] = int(item)
                elif -EXPONENT_BELOW < item < EXPONENT_BELOW:
                    safe = False
            elif kind is dict or kind is list:
                todo.append(item)
    return safe
