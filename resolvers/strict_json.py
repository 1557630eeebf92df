"""JSON read as I-JSON (RFC 7493), the input RFC 8785 presumes: what citeledger reads as a record
(its own records, Pith's, key documents) must have one meaning for every reader.

Python's ``json`` keeps the last of two members of the same name, where another reader may keep
the first: a record holding a forged ``outbound`` first and the genuine one last verifies here and
shows the forgery elsewhere. It also reads ``NaN``, ``Infinity`` and ``1e400`` (a float JCS has no
form for), and recurses once per nesting level. So a document is refused when it is not UTF-8
(or opens with a byte order mark), repeats a member name in one object, holds ``NaN``,
``Infinity``, a number beyond a double or a lone surrogate escape (``"\\ud800"``), or nests deeper
than ``MAX_DEPTH`` arrays and objects (a Pith record nests 6 deep, citeledger's records less than
12; deeper than the parser's recursion limit is refused by it, without a traceback).
Each refusal is a ``StrictJSONError`` (a ``ValueError``) saying which rule and, where the parser
knows it, the line and column.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable

from resolvers.errors import StrictJSONError

__all__ = ["MAX_DEPTH", "StrictJSONError", "loads_strict"]

MAX_DEPTH = 64
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE = "holds a lone surrogate escape (\\ud800-\\udfff not in a pair): not UTF-8 text"


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        names = [name for name, _ in pairs]
        twice = next(name for n, name in enumerate(names) if name in names[:n])
        raise StrictJSONError(f"member name {json.dumps(twice)[:80]} appears twice in one object "
                              "(readers differ on which one counts)")
    return value


def _constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a JSON number (I-JSON, RFC 8785)")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError(f"number {text[:40]} is beyond a double")
    return value


def _check_values(value: Any, limit: int, surrogates: bool) -> None:
    """Refuse nesting deeper than ``limit`` and (``surrogates``) a lone surrogate in a name or string."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise StrictJSONError(f"nested more than {limit} arrays and objects deep")
        if isinstance(item, dict):
            if surrogates and any(_SURROGATE.search(name) for name in item):
                raise StrictJSONError(_LONE)
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            if surrogates and isinstance(item, str) and _SURROGATE.search(item):
                raise StrictJSONError(_LONE)
            continue
        for child in children:
            if isinstance(child, (dict, list)):
                if child or depth + 1 > limit:  # an empty one adds no depth below it
                    stack.append((child, depth + 1))
            elif surrogates and isinstance(child, str):
                stack.append((child, depth + 1))


def loads_strict(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``data`` (UTF-8 bytes, or text), or ``StrictJSONError`` saying why it is not I-JSON."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"not UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        raise StrictJSONError("opens with a byte order mark (I-JSON has none)")
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_constant=_constant, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"line {exc.lineno} column {exc.colno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise StrictJSONError("nested too deeply to read") from None
    except StrictJSONError:
        raise
    except ValueError as exc:  # an integer of more digits than Python converts
        raise StrictJSONError(f"not JSON this reader can hold ({str(exc)[:120]})") from None
    _check_values(value, max_depth, bool(_SURROGATE_ESCAPE.search(text)))
    return value
