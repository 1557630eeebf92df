"""RFC 8785 JSON Canonicalization Scheme (JCS): the bytes a citation record's digest and signature
are taken over (record schema v2). Chosen over ``canonical.py``'s form because any JSON tool can
re-serialise a record (``jq -S``, another language) and the canonical bytes stay the same: JCS
writes ``1.0`` and ``1`` alike, sorts keys by UTF-16 code units and escapes strings one way.

The rules, all of them (RFC 8785 section 3.2):

* objects: members sorted by their names' UTF-16 code units, ``,`` and ``:`` without spaces;
* strings: ``"`` and ``\\`` escaped, the controls U+0000-U+001F as ``\\b \\f \\n \\r \\t`` or
  ``\\u00xx`` (lower-case hex), every other character as itself; a lone surrogate is an error;
* numbers: the ECMAScript ``Number.prototype.toString`` form of the IEEE double (an integer
  outside +-2**53 is an error unless it is that form of a double, as a record's integral float
  from 2**53 up reads back from its file: others would not survive a double round trip); NaN and
  the infinities are errors;
* ``true``, ``false``, ``null``; the whole text encoded as UTF-8.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import orjson

from resolvers.errors import JCSError

__all__ = ["JCSError", "es_number", "jcs", "jcs_exact", "jcs_plain", "jcs_sha256", "names_out_of_order",
           "orjson_text_is_jcs"]

_encode_string = json.encoder.encode_basestring  # C: RFC 8785's escaping
_MAX_SAFE = 2 ** 53


def es_number(value: float) -> str:
    """``value`` as ECMAScript's ``Number.prototype.toString`` writes it (RFC 8785 3.2.2.3)."""
    if math.isnan(value) or math.isinf(value):
        raise JCSError(f"JCS has no form for {value!r}")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(value)).partition("e")  # repr: the shortest digits that round-trip
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    n = len(whole.lstrip("0")) + (int(exp) if exp else 0)  # the decimal point sits after n digits
    if not whole.lstrip("0"):  # 0.000123: leading zeros of the fraction move the point left
        n = -(len(frac) - len(frac.lstrip("0"))) + (int(exp) if exp else 0)
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    tail = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + (digits if k == 1 else digits[0] + "." + digits[1:]) + tail


def _integer(value: int) -> str:
    """An integer beyond 2**53 only as the text JCS gives the double it reads as (how a JSON reader
    that keeps integers reads back a record's ``1e+16``, written ``10000000000000000``): any other
    would not survive a double round trip."""
    text = str(value)
    if abs(value) > _MAX_SAFE:
        try:
            same = es_number(float(value)) == text
        except OverflowError:
            same = False
        if not same:
            raise JCSError(f"integer {value} is outside the IEEE double's exact range")
    return text


def _key(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


def _parts(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_encode_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(_integer(value))
    elif isinstance(value, float):
        out.append(es_number(value))
    elif isinstance(value, dict):
        if not all(isinstance(name, str) for name in value):
            raise JCSError(f"an object member name of {list(value)[:5]!r} is not a string")
        out.append("{")
        for i, name in enumerate(sorted(value, key=_key)):
            if i:
                out.append(",")
            out.append(_encode_string(name))
            out.append(":")
            _parts(value[name], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _parts(item, out)
        out.append("]")
    else:
        raise JCSError(f"JCS has no form for a {type(value).__name__}")


# Where orjson's sorted compact text (``orjson.dumps(value, option=OPT_SORT_KEYS |
# OPT_STRICT_INTEGER)``) can differ from JCS (compared on random doubles, every other one agrees):
# an integral float (``1.0``, ``-0.0``: JCS writes ``1``, ``0``) and an exponent (orjson writes
# ``1e+16`` and ``-3.9e-6`` where ECMAScript writes the digits out); a member name from U+E000 up
# (orjson sorts by code point, JCS by UTF-16 code unit: they differ only above it). A candidate
# counts only after a digit (a number token); any hit, even inside a string, only costs the
# exact writer. Integers beyond 2**53, lone surrogates and non-string names make orjson raise;
# NaN and the infinities it writes as ``null``, which the read-back comparison catches.
_FLOAT_CANDIDATES = (re.compile(rb"\.0[,\]}]"), re.compile(rb"e[+-]"))  # literal heads: quick scans
_HIGH = tuple(bytes([lead]) for lead in range(0xEE, 0xF5))  # UTF-8 lead bytes of U+E000 and above
_FAST = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def names_out_of_order(out: bytes) -> bool:
    """Whether orjson's sorted text ``out`` may order member names otherwise than JCS: it holds a
    character from U+E000 up (memchr of their UTF-8 lead bytes: a regex class scan cost 10x)."""
    return not out.isascii() and any(lead in out for lead in _HIGH)


def orjson_text_is_jcs(out: bytes) -> bool:
    """Whether orjson's sorted compact text ``out`` of plain JSON values (no NaN, infinities or
    tuples: orjson writes those as ``null`` and a list unseen) is their JCS: no number it writes
    otherwise (an integral float or an exponent) and no member name that sorts otherwise."""
    if names_out_of_order(out):
        return False
    return not any(out[m.start() - 1:m.start()].isdigit()
                   for pattern in _FLOAT_CANDIDATES for m in pattern.finditer(out))


def _fast(value: Any, read_back: bool = True) -> bytes | None:
    """``value``'s JCS bytes by orjson when they cannot differ from the exact writer's, else None
    (``read_back=False``: the caller vouches that ``value`` holds JSON values only, see ``jcs_plain``)."""
    if not isinstance(value, (dict, list)):
        return None
    try:
        out = orjson.dumps(value, option=_FAST)
    except orjson.JSONEncodeError:
        return None  # a big integer, a lone surrogate, a non-JSON type: the exact writer says which
    if not orjson_text_is_jcs(out):
        return None
    if not read_back:
        return out
    return out if orjson.loads(out) == value else None  # NaN written as null, a tuple as a list


def jcs(value: Any) -> bytes:
    """``value`` (plain JSON data: dict, list, str, int, float, bool, None) as RFC 8785 bytes. Fast
    path for a dict or list: orjson's sorted text, taken only when it cannot differ from JCS
    (``_fast``); otherwise the exact writer below (tests/test_jcs.py checks both give the same
    bytes, on random JSON and on every record the tests write)."""
    return _fast(value) or jcs_exact(value)


def jcs_plain(value: Any) -> bytes:
    """``jcs`` of a value its caller built of JSON values only (dict, list, str, int, finite float,
    bool, None: a citation record as ``citeledger.records.record.build_record`` makes it), without reading orjson's
    bytes back to compare: that read-back catches NaN, infinities, tuples, times, enums and UUIDs,
    which such a value cannot hold, and was most of a record's digest (1 ms of 1.6). Every other
    check of ``jcs`` is kept; tests/record_writer_check.py compares the result with ``jcs_exact``
    for every record a test writes."""
    return _fast(value, read_back=False) or jcs_exact(value)


def jcs_exact(value: Any) -> bytes:
    """The RFC 8785 writer itself, value by value (see the module's rules)."""
    out: list[str] = []
    _parts(value, out)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JCSError("a string holds a lone surrogate, which JCS (UTF-8) cannot carry") from exc


def jcs_sha256(value: Any) -> str:
    """``sha256:`` + the hex SHA-256 of ``value``'s JCS bytes."""
    return "sha256:" + hashlib.sha256(jcs(value)).hexdigest()
