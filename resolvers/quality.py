"""Is a raw string a usable reference at all? Strings that are not are ``parse_uncertain``.

Rules, each a ``Reason``: BibTeX ``.bst`` artefacts (the style language's own words leaked into
the text), lone author fragments (only name pieces, no title, venue or year), too little text to
name a work, no words. A string carrying a well-formed identifier is never parse_uncertain (the
contract's precedence): the identifier speaks for it.
"""
from __future__ import annotations

import re

from .model import Reason
from .parsing import ParsedReference, clean_raw

# Words of BibTeX's stack language (.bst): never in a real reference, always in a leak of it.
_BST_WORDS = {"write", "newline", "add.period", "output.check", "fin.entry", "new.block",
              "new.sentence", "output", "format.title", "format.authors", "bibitem", "empty.misc.check",
              "output.bibitem", "format.date", "format.btitle", "format.journal", "new.block.checka",
              "if$", "pop$", "duplicate$", "swap$", "skip$", "top$", "while$", "call.type$",
              "write$", "newline$", "entry.max$", "{}", "empty$", "output.nonnull", "add.blank"}
_BST_STRONG = re.compile(r"\b(?:add\.period|fin\.entry|new\.block|new\.sentence|output\.check|"
                         r"format\.\w+|\w+\$)|\bwrite\s+newline\b|\bnewline\s+write\b")
_NAME_PIECE = re.compile(r"^(?:[A-Z]\.?(?:-?[A-Z]\.?)*|[A-Z][\w'’\u00c0-\u024f-]+|and|&|et|al\.?|"
                         r"van|von|de|der|da|di|la|le|jr\.?)$")
_WORD = re.compile(r"[^\W\d_]{2,}")
MIN_CHARS = 12
MIN_WORDS = 2


def parse_uncertain_reason(raw: str, parsed: ParsedReference | None = None,
                           has_wellformed_identifier: bool = False) -> Reason | None:
    """The rule that makes this string unusable, or None when it can be matched."""
    if has_wellformed_identifier:
        return None
    text = clean_raw(raw or "")
    words = _WORD.findall(text)
    if not words:
        return Reason.NO_WORDS
    pieces = re.split(r"[\s,;]+", text.strip())
    lowered = [p.lower() for p in pieces if p]
    bst_hits = sum(p in _BST_WORDS for p in lowered)
    if _BST_STRONG.search(text) and bst_hits * 2 >= len(lowered) - bst_hits or (
            lowered and bst_hits == len(lowered)):
        return Reason.BST_ARTEFACT
    # a lone author fragment: only name pieces (initials, capitalised surnames, "and"), few of them
    name_only = [p for p in pieces if p.strip(".")]
    if len(name_only) <= 8 and not re.search(r"\d", text) and all(
            _NAME_PIECE.match(p.strip(",;:")) for p in name_only) and re.search(r"\b[A-Z]\.", text):
        return Reason.AUTHOR_FRAGMENT
    if len(text) < MIN_CHARS or len(words) < MIN_WORDS:
        return Reason.TOO_SHORT
    return None
