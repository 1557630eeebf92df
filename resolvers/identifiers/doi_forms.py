"""DOIs in running text: the characters a DOI may carry, the words that announce one, and the
cleaning of one candidate to its canonical lower-case form (``normalize_doi``). Split from
``identifiers`` (which re-exports ``normalize_doi``) so that module keeps its size limit.
"""
from __future__ import annotations

import html
import re

__all__ = ["normalize_doi"]

MAX_TOKEN = 1000  # longer "identifiers" are junk; reported malformed, never normalised
# Characters a DOI suffix may carry in running text. Crossref's advice covers [-._;()/:A-Z0-9];
# we also keep <> (SICI), [] + # * & % (entities, percent-encoding; decoded afterwards) and stop
# at whitespace, quotes, braces, backslash, comma and anything outside printable ASCII.
_DOI_CHAR_SET = frozenset(chr(c) for c in range(0x21, 0x7F)) - set("\"'{}\\|^`,")
_DOI_CHAR = "[" + "".join(re.escape(c) for c in sorted(_DOI_CHAR_SET)) + "]"
DOI_RE = re.compile(
    r"(?:(?<=doi)|(?<![0-9A-Za-z.]))10\.\d{4,9}(?:\.\d{1,9}){0,4}(?:/|%2[fF])"
    + _DOI_CHAR + r"*", re.I)
# Words that announce a DOI; what follows them is a DOI or a malformed one.
DOI_CONTEXT = re.compile(
    r"(?<![a-z0-9])(?:doi\s{0,3}[:=]\s{0,3}\{?\s{0,3}|doi(?=10\.)|doi\s{1,3}(?=10\.)"
    r"|(?:dx\.)?doi\.org/\s{0,3})", re.I)
# bounded: "doi:doi:doi:..." must not rescan the rest of the string at every "doi:"
DOI_CONTEXT_TOKEN = re.compile(_DOI_CHAR + "{0,%d}" % (MAX_TOKEN + 1))
# DOI Handbook syntax: "10." registrant code (digits, optionally subdivided by dots) "/" suffix.
_VALID_DOI = re.compile(r"10\.\d{1,9}(?:\.\d{1,9})*/" + _DOI_CHAR + r"+")
ARXIV_DOI_PREFIX = "10.48550/arxiv."
_DOI_PREFIX = re.compile(
    r"^(?:(?:https?://)?(?:dx\.|www\.)?doi\.org/|info:doi/|urn:doi:|doi\s*[:=]?\s*)", re.I)
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{1,4}|#[xX][0-9A-Fa-f]{1,4});")
_TRAILING = ".,;:!?*'"
_PAIRS = {")": "(", "]": "[", ">": "<", "}": "{"}
_GLUED_NEXT = re.compile(r"[;,](?=doi|https?:|10\.\d)", re.I)
_LT_NOT_SICI = re.compile(r"<(?!\d|::)")  # "<441::aid-", and "<::aid-" with no start page
_SPACE_AFTER_PREFIX = re.compile(r"^(10\.\d{4,9})/\s+(?=\S)")
LATEX_ESCAPE = re.compile(r"\{\\([_%&#])\}|\\([_%&#])|\\textunderscore(?:\{\})?")


def _decode_percent(m: re.Match[str]) -> str:
    c = chr(int(m.group(1), 16))
    return c if c in _DOI_CHAR_SET else m.group(0)


def _decode_entity(m: re.Match[str]) -> str:
    c = html.unescape(m.group(0))
    return c if len(c) == 1 and c in _DOI_CHAR_SET else m.group(0)


def unlatex(m: re.Match[str]) -> str:
    return m.group(1) or m.group(2) or "_"


def _bracket_after(s: str) -> int:
    """Where the DOI in ``s`` ends at a "[": the first one not before a digit, or never closed."""
    opened: list[int] = []
    for at, c in enumerate(s):
        if c == "[":
            if not s[at + 1:at + 2].isdigit():
                return at if not opened else opened[0]
            opened.append(at)
        elif c == "]" and opened:
            opened.pop()
    return opened[0] if opened else len(s)


def clean_doi(token: str) -> str:
    """Decode and trim one DOI candidate (no prefix) to its canonical lower-case form.

    The steps run to a fixpoint so that cleaning a cleaned DOI changes nothing."""
    s = token
    while True:
        before = s
        if "\\" in s:
            s = LATEX_ESCAPE.sub(unlatex, s)
        if "%" in s:
            s = _PERCENT.sub(_decode_percent, s)
        if "&" in s:
            s = _ENTITY.sub(_decode_entity, s)
        s = s.lower()
        if "<" in s:  # SICI DOIs carry "<digits" or "<::"; any other "<" is markup after the DOI
            m = _LT_NOT_SICI.search(s)
            if m:
                s = s[:m.start()]
        if "[" in s:  # "10.1007/jhep06(2016)004[arxiv:1512.06431[hep-th]]": a "[" not before a digit or
            s = s[:_bracket_after(s)]  # never closed is what follows the DOI (a SICI's "[617:cbicra]" stays)
        if ";" in s or "," in s:  # "10.1/a;doi:10.2/b": two DOIs glued together
            m = _GLUED_NEXT.search(s)
            if m:
                s = s[:m.start()]
        while s:  # trailing punctuation, closing brackets that were not opened inside the DOI
            c = s[-1]
            if c in _TRAILING:
                s = s[:-1]
            elif c in _PAIRS and s.count(c) > s.count(_PAIRS[c]):
                s = s[:-1]
            else:
                break
        if s == before:
            return s


def doi_problem(token: str) -> str | None:
    """Why a cleaned DOI candidate is not well formed, or None when it is."""
    if len(token) > MAX_TOKEN:
        return "too long for a DOI"
    if _VALID_DOI.fullmatch(token):
        return None
    if not token.startswith("10."):
        return "a DOI starts with the directory indicator '10.'"
    m = re.match(r"10\.([\d.]*)", token)
    registrant = m.group(1) if m else ""
    if "/" not in token:
        return "DOI cut short: no '/' after the prefix"
    if not re.fullmatch(r"\d{1,9}(?:\.\d{1,9})*", token[3:token.index("/")]):
        return f"DOI registrant code must be digits (optionally dot-separated), got {registrant!r}"
    if token.endswith("/"):
        return "DOI cut short: nothing after the prefix"
    return "DOI suffix has characters a DOI cannot carry"


def normalize_doi(text: str) -> str | None:
    """One DOI-ish string (``doi:``, ``https://doi.org/``, percent/HTML/LaTeX escapes, trailing
    punctuation) -> the canonical lower-case DOI, or None when it is not a well-formed DOI."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if len(s) > MAX_TOKEN * 2:
        return None
    s = _DOI_PREFIX.sub("", s, count=1).strip()
    if "/" in s:  # "10.3389/ neuro.01.002.2008": a line break after the prefix, kept by a PDF's metadata
        s = _SPACE_AFTER_PREFIX.sub(r"\1/", s, count=1)
    s = clean_doi(s)
    return s if doi_problem(s) is None else None
