"""Matching braces of a text found in one pass, so reading many brace groups of one text (the
arguments of every macro of an entry, every definition of a preamble) costs linear time even
when the text is made of unclosed groups."""
from __future__ import annotations

import re
import threading

_TOKENS = re.compile(r"\\.|[{}]", re.DOTALL)
_RECENT = 8  # texts whose pairs are kept: an entry and the arguments nested in it
_local = threading.local()


def _compute(text: str) -> dict[int, int]:
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _TOKENS.finditer(text):
        ch = m.group()
        if ch == "{":
            stack.append(m.start())
        elif ch == "}" and stack:
            pairs[stack.pop()] = m.end()
    return pairs


def brace_pairs(text: str) -> dict[int, int]:
    """Offset of each ``{`` of ``text`` -> offset after its ``}`` (``\\{`` and ``\\}`` are not
    braces); an unclosed ``{`` has none. The last few texts' pairs are kept by identity (never
    by value: comparing two long equal texts on every look-up would cost what this saves)."""
    recent: list[tuple[str, dict[int, int]]] = getattr(_local, "recent", None) or []
    for known, pairs in recent:
        if known is text:
            return pairs
    pairs = _compute(text)
    _local.recent = [(text, pairs), *recent[:_RECENT - 1]]
    return pairs


def forget() -> None:
    """Let the kept texts go (the reader calls it when a paper is read)."""
    _local.recent = []


def group_end(text: str, i: int) -> int:
    """Offset after the brace group opening at ``text[i]``; -1 when it never closes."""
    return brace_pairs(text).get(i, -1)
