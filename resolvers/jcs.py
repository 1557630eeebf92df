"""RFC 8785 JSON Canonicalization Scheme (JCS): the bytes a citation record's digest and signature
are taken over (record schema v2). Chosen over ``canonical.py``'s form because any JSON tool can
re-serialise a record (``jq -S``, another language) and the canonical bytes stay the same: JCS
writes ``1.0`` and ``1`` alike, sorts keys by UTF-16 code units and escapes strings one way.

The rules, all of them (RFC 8785 section 3.2):

* objects: members sorted by their names' UTF-16 code units, ``,`` and ``:`` without spaces;
* strings: ``"`` and ``\\`` escaped, the controls U+0000-U+001F as ``\\b \\f \\n \\r \\t`` or
  ``\\u00xx`` (lower-case hex), every other character as itself; a lone surrogate is an error;
* numbers: the ECMAScript ``Number.prototype.toString`` form of the IEEE double (integers
  outside +-2**53 are an error: they would not survive a double round trip); NaN and the
  infinities are errors;
* ``true``, ``false``, ``null``; the whole text encoded as UTF-8.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from .errors import JCSError

__all__ = ["JCSError", "es_number", "jcs", "jcs_exact", "jcs_sha256"]

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
        if abs(value) > _MAX_SAFE:
            raise JCSError(f"integer {value} is outside the IEEE double's exact range")
        out.append(str(value))
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


# Where ``json.dumps(sort_keys=True)`` could differ from JCS: a float Python writes as ``1.0`` or
# with an exponent (``1e-07``), an integer token of 16 digits or more (beyond 2**53 is an error),
# a character from U+E000 up (code point and UTF-16 key order differ only above it). The pattern
# starts with a literal so the scan is quick; a candidate counts only after a digit (a number
# token), and any hit, even inside a string, only costs the exact writer.
_CANDIDATE = re.compile(r"\.0[,\]}]|e[+-]\d|[:,\[]-?\d{16,}[,\]}]")
_HIGH = re.compile("[\ue000-\U0010ffff]")


def _same_as_dumps(text: str) -> bool:
    """Whether ``json.dumps``'s sorted compact ``text`` of a dict or list is its JCS form."""
    if not text.isascii() and _HIGH.search(text):
        return False
    for m in _CANDIDATE.finditer(text):
        if m.group()[0] in ":,[" or (m.start() and text[m.start() - 1].isdigit()):
            return False
    return True


def jcs(value: Any) -> bytes:
    """``value`` (plain JSON data: dict, list, str, int, float, bool, None; string keys: an int key,
    which no parsed JSON has, would be written as a string here and refused by ``jcs_exact``) as
    RFC 8785 bytes. Fast path for a dict or list: the C ``json.dumps`` with sorted keys, taken only
    when its text cannot differ from JCS (``_same_as_dumps``); otherwise the exact writer below
    (tests/test_jcs.py checks both give the same bytes)."""
    text = None
    if isinstance(value, (dict, list)):
        try:
            text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            text = None  # NaN, a non-JSON type, mixed key types: the exact writer names the problem
    if text is not None and _same_as_dumps(text):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JCSError("a string holds a lone surrogate, which JCS (UTF-8) cannot carry") from exc
    return jcs_exact(value)


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
