"""Fast paths of the Arrow text forms, each giving the general kernels' output (tests/test_text.py).
``split_ascii``: ``text.fold_arrow`` for ASCII strings, the usual catalog title; ``per_distinct``:
a form of each distinct venue or surname once.

Why: at 10M works the catalog index folds every title, venue and surname; the eleven ligature
replacements, NFKD and the combining-mark expression were most of that time, and on ASCII they
are the identity, so an ASCII string is only lower-cased. The others still go through the
general kernels, then are put back in their places. (A numpy version of ``norm_arrow``'s
``[^a-z0-9]+`` replacement was tried and was slower than RE2.)
"""
from __future__ import annotations

import unicodedata
from functools import cache
from typing import Any, Callable

import pyarrow as pa

# (``pyarrow.compute`` is imported where it is used: 0.06 s to load, which a process that never runs these
# kernels, a one-reference run, need not pay)


def _flat(values: Any) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def split_ascii(values: Any, ascii_fn: Callable[[pa.Array], pa.Array],
                general: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """``ascii_fn`` on the ASCII strings, ``general`` on the others, each back in its place
    (a null stays null where ``general`` keeps it)."""
    import pyarrow.compute as pc

    arr = _flat(values)
    is_ascii = pc.fill_null(pc.string_is_ascii(arr), False)  # (a null goes the general way)
    if pc.all(is_ascii).as_py() is not False:
        return ascii_fn(arr)
    others = pc.invert(is_ascii)
    done = ascii_fn(pc.if_else(is_ascii, arr, ""))
    return pc.replace_with_mask(done, others, _flat(general(pc.filter(arr, others))).cast(done.type))


def per_distinct(form: Callable[[pa.Array], pa.Array], values: Any) -> pa.Array:
    """``form`` of each distinct value once, spread back over the rows (venues and surnames
    repeat: a catalog of 10M works has some thousands of venues); null -> "" as ``fold_arrow``."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(_flat(values))
    return pc.fill_null(pc.take(form(encoded.dictionary), encoded.indices), "")


@cache
def python_class(kind: str, leave_out: str = "") -> str:
    """An RE2 character class of every character Python reads as ``kind``: "space" (``str.isspace``,
    ``re``'s ``\\s``) or "digit" (category Nd, ``re``'s ``\\d``), less ``leave_out``; RE2's own
    ``\\s`` and ``\\d`` are ASCII only. Made on first use: it looks at every code point (a tenth of a
    second), which no module may spend when it is imported."""
    def wanted(c: int) -> bool:
        ch = chr(c)
        return ch not in leave_out and (ch.isspace() if kind == "space" else unicodedata.category(ch) == "Nd")
    ranges: list[list[int]] = []
    for c in filter(wanted, range(0x110000)):
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return "[" + "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" if a != b else f"\\x{{{a:x}}}" for a, b in ranges) + "]"
