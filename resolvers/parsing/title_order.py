"""Title scores for titles the parser could not isolate: a title whose words a string prints in
another order (a scrambled or re-ordered title, the style benchmark), and a short title
printed as a segment of its own (``title_segments``). Kept a little below an identical title
(``SORTED_SCALE``) so an order-free match never counts as one; ``verify`` takes the best of these
and its in-order scores.
"""
from __future__ import annotations

import re
from typing import Sequence

from rapidfuzz import fuzz

from resolvers.parsing.text import compact, norm_text

SORTED_MIN_WORDS = 4  # titles shorter than this are not compared word-order-free
SORTED_SCALE = 0.95  # an order-free match stays below an identical title
WINDOW_SORTED_MIN = 90.0  # a run of the string's words counts only when it holds the title's words


def sorted_words(title: str | None) -> str:
    """A parsed title's distinct words in sorted order ("" under ``SORTED_MIN_WORDS`` words)."""
    words = sorted(set(norm_text(title).split())) if title else []
    return " ".join(words) if len(words) >= SORTED_MIN_WORDS else ""


def window_sorted_score(string_words: str | Sequence[str], title_tokens: frozenset, title_ntok: int,
                        title_soft: str, target: str | None = None) -> float:
    """The best order-free score of a run of the string's words (its normalised text, or that
    split into words) as long as the work's title, starting on one of its words, when it holds the
    title's words (``WINDOW_SORTED_MIN``); a run with them in the title's own order is left to the
    alignment (which checks where it ends). For a title the parser could not isolate (unquoted
    between commas, its words shuffled). ``target``: the title's words sorted, when made already."""
    words = string_words.split() if isinstance(string_words, str) else string_words
    if target is None:
        target = " ".join(sorted(title_tokens))
    best, best_run = 0.0, None
    for start in range(max(0, len(words) - title_ntok + 1)):
        if words[start] not in title_tokens:
            continue
        run = words[start:start + title_ntok]
        score = fuzz.ratio(" ".join(sorted(set(run))), target, score_cutoff=best)
        if score > best:
            best, best_run = score, run
    if best < WINDOW_SORTED_MIN or best_run is None or list(best_run) == norm_text(title_soft).split():
        return 0.0
    return SORTED_SCALE * best / 100.0


_SEGMENT_SPLIT = re.compile(r"[,.;:?!\"“”()\[\]\n]+")
_LETTERS3 = re.compile(r"[^\W\d_]{3}")


def title_segments(text: str) -> frozenset:
    """The string's punctuation-delimited segments (compact) that stand where a title stands:
    not the first (names), and followed by a segment with words (the venue): "K. D. Gregory,
    Widget Resources, Programming with Motif 11 (1992)" holds "widgetresources"; in "Nature.
    2015;521:436" the venue is no such segment."""
    parts = [p for p in _SEGMENT_SPLIT.split(text) if p.strip()]
    return frozenset(compact(parts[i]) for i in range(1, len(parts) - 1) if _LETTERS3.search(parts[i + 1]))
