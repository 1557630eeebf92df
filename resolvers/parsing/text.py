"""The one text folding of citeledger: parser, verifier, fuzzy index and nightly re-runs all
compare text in the forms made here.

* ``fold``: lower case without accents (ligatures spelled out, NFKD, combining marks dropped);
* ``norm_text``: folded, every run of non-alphanumerics one space; ``tokens`` splits it;
* ``compact``: folded alphanumerics only (spacing and hyphenation differences vanish);
* ``clean_raw`` undoes PDF damage first; ``normalise_text`` = ``norm_text(clean_raw(...))``;
* ``fold_arrow`` / ``norm_arrow`` / ``tokens_arrow``: the same forms as Arrow kernels, for whole
  catalog columns (the index and the stored work forms). They must agree with the Python forms
  (tests/test_text.py checks them on the accents and ligatures the catalogs hold).

Which words count is a separate question with purpose-made answers; the cutoffs below differ on
purpose and each is measured against the glutton dev set (changing one changes verdicts).
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the their this to "
    "was were with via de la le les des du et en der die das und von zur zum im el los las y del".split())

# Index (blocking) tokens: every word but single letters. Recall first: a two-letter word
# ("qt", "3d") can be the rarest word of a short title, and the index ranks by idf anyway.
INDEX_TOKEN_MIN_CHARS = 2
# Nightly re-run selection: a reference is re-resolved when it shares a word of three or more
# letters with a new work; coarser than the index so a night does not re-run the whole ledger.
RERUN_TOKEN_MIN_CHARS = 3
# Venue words a verifier compares: abbreviations shorter than three letters ("j", "of") say
# nothing about which venue it is.
VENUE_TOKEN_MIN_CHARS = 3
# Content words of a title standing in a string (title presence): short words occur in any
# reference, so only words of four letters or more count as evidence that the title is there.
CONTENT_WORD_MIN_CHARS = 4

_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*([a-z])")
_SPACE = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
# Letters that Unicode decomposition does not fold to ASCII (the Arrow folding uses them too)
LIGATURES = {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L",
             "đ": "d", "ı": "i"}
_LIGATURES = str.maketrans(LIGATURES)
_NON_ALNUM_RE2 = r"[^a-z0-9]+"
# Every ASCII character outside [a-z0-9] to a space (``norm_text``'s fast path)
ASCII_NON_ALNUM_TO_SPACE = {c: " " for c in range(128) if not re.fullmatch("[a-z0-9]", chr(c))}
_ASCII_NON_ALNUM_DROPPED = dict.fromkeys(ASCII_NON_ALNUM_TO_SPACE)  # (``compact``'s)


def clean_raw(raw: str) -> str:
    """Undo PDF extraction damage: rejoin words hyphenated across a line break, one space.
    (Written for speed, it runs several times per reference: ASCII is its own NFKC form, a
    hyphen break needs a line break, and ``str.split`` splits on exactly the characters ``\\s``
    matches, so ``" ".join(text.split())`` is ``_SPACE.sub(" ", text).strip()``.)"""
    text = raw if raw.isascii() else unicodedata.normalize("NFKC", raw)
    if "\n" in text:
        text = _HYPHEN_BREAK.sub(r"\1\2", text)
    return " ".join(text.split())


class _CombiningDropped(dict):
    """A ``str.translate`` table that drops every combining character (``unicodedata.combining``
    not 0) and keeps the rest, each character judged once and remembered: the same text as a
    generator over the characters, in C's loop instead of Python's."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.combining(chr(code)) else code
        self[code] = kept
        return kept


_COMBINING_DROPPED = _CombiningDropped()


@lru_cache(maxsize=1 << 18)
def fold(text: str) -> str:
    """Lower case without accents: the comparison form of any text (matches the index)."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKD", text.translate(_LIGATURES)).translate(_COMBINING_DROPPED).lower()


def norm_text(text: str) -> str:
    """Folded text with every run of non-alphanumerics turned into one space (an ASCII folded
    text, the usual case, by a translation table: the same result, several times faster)."""
    folded = fold(text)
    if folded.isascii():
        return " ".join(folded.translate(ASCII_NON_ALNUM_TO_SPACE).split())
    return _NON_ALNUM.sub(" ", folded).strip()


def compact(text: str) -> str:
    """Folded alphanumerics only: spacing and hyphenation differences vanish."""
    folded = fold(text)
    if folded.isascii():
        return folded.translate(_ASCII_NON_ALNUM_DROPPED)
    return _NON_ALNUM.sub("", folded)


def tokens(text: str) -> list[str]:
    return norm_text(text).split()


def normalise_text(text: str | None) -> str:
    """Lower-case ASCII words: accents, punctuation, PDF hyphenation and line breaks removed
    (the parser's own folding, so titles compare the way the fuzzy matcher compares them)."""
    return norm_text(clean_raw(text)) if text else ""


def index_tokens(text: str | None) -> list[str]:
    """Distinct index tokens of a text: normalised words, no stopwords, no single letters."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for tok in norm_text(text).split():
        if len(tok) >= INDEX_TOKEN_MIN_CHARS and tok not in STOPWORDS:
            seen.setdefault(tok, None)
    return list(seen)


def content_words(norm: str) -> set[str]:
    """The words of a normalised title that say which title it is (no numbers, no stopwords)."""
    return {w for w in norm.split() if len(w) >= CONTENT_WORD_MIN_CHARS and not w.isdigit() and w not in STOPWORDS}


def rerun_tokens(text: str | None) -> set[str]:
    """The words on which a new work and a reference string meet for a nightly re-run."""
    return {t for t in norm_text(text or "").split() if len(t) >= RERUN_TOKEN_MIN_CHARS and t not in STOPWORDS}


# -- the same forms over Arrow columns ------------------------------------------------------------


def fold_arrow(values: Any) -> Any:
    """``fold`` of every string of an Arrow string array (null -> ""); ASCII strings by
    ``text_arrow``'s fast path (the same result)."""
    import pyarrow.compute as pc

    from resolvers.parsing.text_arrow import split_ascii

    return split_ascii(pc.fill_null(values, ""), pc.ascii_lower, _fold_arrow_general)


def _fold_arrow_general(arr: Any) -> Any:
    import pyarrow.compute as pc

    for k, v in LIGATURES.items():
        arr = pc.replace_substring(arr, k, v)
    arr = pc.utf8_normalize(arr, "NFKD")
    arr = pc.replace_substring_regex(arr, r"\p{Mn}", "")
    return pc.utf8_lower(arr)


def norm_arrow(folded: Any) -> Any:
    """``norm_text`` of already folded strings (``fold_arrow``'s output)."""
    import pyarrow.compute as pc

    return pc.utf8_trim(pc.replace_substring_regex(folded, _NON_ALNUM_RE2, " "), " ")


def norm_tokens_arrow(norm: Any) -> Any:
    """The words of ``norm_arrow`` strings, as a list array: ``tokens_arrow`` of the strings
    they were made from, without the empty strings at the edges."""
    import pyarrow.compute as pc

    return pc.utf8_split_whitespace(norm)


def tokens_arrow(values: Any) -> Any:
    """``tokens`` of every string, as a list array (may hold empty strings at the edges: callers
    keep tokens of ``INDEX_TOKEN_MIN_CHARS`` or more)."""
    import pyarrow.compute as pc

    return pc.utf8_split_whitespace(pc.replace_substring_regex(fold_arrow(values), _NON_ALNUM_RE2, " "))


# OCR confuses letters and digits of like shape ("Physica1 Rcview E", "0ptics", "Joumal" for
# "Journal", "Jourrial" for "Journal", "Alrnawi" for "Almawi"). ``ocr_skeleton`` writes every
# member of such a confusion class as one character, then the letter pairs read for one letter as
# that letter (ri -> n, rn -> m, cl -> d, vv -> w), so a word and its misreadings meet on one
# skeleton (and the skeleton of a skeleton is itself). Coarse by design: it says two words may be
# one, never which word a string holds (venue keys: ``journal_ref.ocr_venue_key``; surnames:
# ``verify``).
_OCR_RUNS = (("rl", "n"), ("rn", "m"), ("cl", "d"), ("vv", "w"))  # after the classes: "rl" was "ri" or "r1"
_OCR_CLASSES = str.maketrans({"1": "l", "i": "l", "|": "l", "!": "l", "0": "o", "a": "o", "e": "c", "u": "v",
                              "h": "b", "8": "b", "5": "s", "f": "t"})


@lru_cache(maxsize=1 << 17)
def ocr_skeleton(text: str) -> str:
    """Folded text with OCR's look-alike letters and digits written as one (see above). Cached:
    the verifier asks it of every candidate's first-author surname, and surnames repeat."""
    text = fold(text).translate(_OCR_CLASSES)
    for run, one in _OCR_RUNS:
        text = text.replace(run, one)
    return text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_problem(value: str) -> str | None:
    """Why a string cannot be stored (Parquet needs valid UTF-8), or None. A lone surrogate comes
    from a JSON escape such as ``\\ud800`` or from undecodable CSV bytes (surrogateescape)."""
    m = _LONE_SURROGATE.search(value)
    if m is None:
        return None
    code = ord(m.group(0))
    what = f"invalid UTF-8 byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"lone surrogate U+{code:04X}"
    return f"not valid Unicode: {what} at character {m.start()}"
