"""Find, validate and normalise DOIs and arXiv ids in raw reference strings.

Pure Python, no network. The rules follow arXiv's identifier documentation
(https://info.arxiv.org/help/arxiv_identifier.html): new-style ``YYMM.NNNN`` from 0704 to 1412,
``YYMM.NNNNN`` from 1501 on, sequence numbers starting at 1; old-style ``archive(.SC)/YYMMNNN``
from 9108 to 0703 for the archives of arXiv's taxonomy. Two principles drive the design:

* a wrong identifier is worse than none, so a bare ``NNNN.NNNNN`` (a page, a report number...) is
  only read as arXiv when something around it says arXiv (``arXiv:``, an arxiv.org URL, ``abs/``,
  a category suffix such as ``[hep-th]``, a BibTeX ``eprint`` field next to ``arXiv``), or when
  it is well formed, dated up to this year and stands in the slot INSPIRE/JHEP styles give an id
  (``(2012), 1207.7214``, ``[1512.05291]``: ``arxiv_forms.bare_new_style_plausible``);
* arXiv ids are read on a copy of the string without the spaces PDF extraction puts inside them
  (``hep -th/9711200``, ``1207 .7214``: ``arxiv_forms.rejoin_splits``); DOIs on the string as is;
* an identifier-like token that is not well formed is reported as a ``MalformedToken``, never
  silently dropped, so the resolver can say ``malformed_identifier``.

Every pattern is linear: bounded repetitions only, no nested quantifiers, so a 1 MB string of
digits and dots cannot make the regex engine backtrack catastrophically.
"""
from __future__ import annotations

import bisect
import re
from typing import Sequence

from resolvers.identifiers.arxiv_forms import (
    ARXIV_ARCHIVES,
    OLD_STYLE_ARCHIVES,
    archive_before,
    bare_new_style_plausible,
    rejoin_splits,
)
from resolvers.identifiers.doi_forms import (
    ARXIV_DOI_PREFIX,
    DOI_CONTEXT,
    DOI_CONTEXT_TOKEN,
    DOI_RE,
    LATEX_ESCAPE,
    MAX_TOKEN,
    clean_doi,
    doi_problem,
    normalize_doi,
    unlatex,
)
from resolvers.model import ExtractedIdentifiers, MalformedToken

__all__ = ["extract_identifiers", "normalize_doi", "canonical_arxiv_id", "check_arxiv_id",
           "OLD_STYLE_ARCHIVES", "ARXIV_ARCHIVES"]

# ---------------------------------------------------------------------------------------------
# arXiv
# ---------------------------------------------------------------------------------------------
_NEW_ID = re.compile(r"(\d{2})(\d{2})\.(\d+)(?:v(\d+))?")
# archive (any case, canonicalised lower-case), optional subject class (two capitals: math.GT).
_OLD_ID = re.compile(r"((?i:[a-z]+(?:-[a-z]+)?))(?:\.([A-Z]{2}))?/(\d+)(?:v(\d+))?")
_ARXIV_PREFIX = re.compile(
    r"^(?:(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html|ps|format)/"
    r"|10\.48550/arxiv\.|arxiv\s*:\s*)", re.I)


def _check_new(yymm: str, seq: str) -> tuple[str | None, str | None]:
    """Validate a new-style id's date and sequence number; return (canonical id, why-not)."""
    if not 1 <= int(yymm[2:]) <= 12:
        return None, f"month {yymm[2:]} does not exist"
    if int(seq) == 0:
        return None, "sequence numbers start at 1"
    ym = int(yymm)
    if len(seq) == 4:
        if ym < 704:
            return None, f"new-style ids start at 0704, not {yymm}"
        if ym > 1412:
            return None, f"4-digit number after 1412 ({yymm}); 5 digits since 1501"
    elif len(seq) == 5:
        if ym < 1501:
            return None, f"5-digit number before 1501 ({yymm}); 4 digits until 1412"
    else:
        return None, f"{len(seq)}-digit sequence number; arXiv uses 4 (0704-1412) or 5 (1501-)"
    return f"{yymm}.{seq}", None


def _check_old(archive: str, subject: str | None, digits: str) -> tuple[str | None, str | None]:
    """Validate an old-style ``archive(.SC)/YYMMNNN``; return (canonical id, why-not)."""
    archive = archive.lower()
    if archive not in OLD_STYLE_ARCHIVES:
        return None, f"unknown arXiv archive {archive!r}"
    if len(digits) != 7:
        return None, f"old-style ids have 7 digits (YYMMNNN), not {len(digits)}"
    yy, mm = int(digits[:2]), int(digits[2:4])
    if not 1 <= mm <= 12:
        return None, f"month {digits[2:4]} does not exist"
    ym = (1900 if yy >= 91 else 2000) + yy, mm
    if not (1991, 8) <= ym <= (2007, 3):
        return None, f"old-style ids run from 9108 to 0703, not {digits[:4]}"
    if int(digits[4:]) == 0:
        return None, "sequence numbers start at 1"
    return f"{archive}/{digits}", None


def _check_arxiv(token: str) -> tuple[str | None, str | None]:
    """Validate one bare arXiv token (no prefix); return (canonical id, why-not)."""
    if len(token) > 64:
        return None, "too long for an arXiv id"
    m = _NEW_ID.fullmatch(token)
    if m:
        return _check_new(m.group(1) + m.group(2), m.group(3))
    m = _OLD_ID.fullmatch(token)
    if m:
        return _check_old(m.group(1), m.group(2), m.group(3))
    if re.fullmatch(r"\d+\.\d+(?:v\d+)?", token):
        return None, "new-style ids are YYMM.NNNN or YYMM.NNNNN"
    return None, "not an arXiv identifier"


def canonical_arxiv_id(text: str) -> str | None:
    """``arXiv:1706.03762v5``, ``math.GT/0309136``, an arxiv.org URL... -> ``1706.03762``,
    ``math/0309136``; None when not well formed. Version and subject class are dropped because
    the catalog keys works, not versions."""
    return check_arxiv_id(text)[0]


def check_arxiv_id(text: str) -> tuple[str | None, str | None]:
    """(canonical id, None), or (None, why not) for a text that is not a well-formed arXiv id:
    ``canonical_arxiv_id`` with its reason, for callers that tell a user why."""
    if not isinstance(text, str):
        return None, "not a string"
    s = text.strip()
    s = _ARXIV_PREFIX.sub("", s, count=1)
    if s[-4:].lower() == ".pdf":
        s = s[:-4]
    return _check_arxiv(s)


# The shape of a new-style number; whether it is arXiv is decided by its context.
_NEW_SHAPE = re.compile(r"(?<!\d)\d{3,6}\.\d{3,7}(?:v\d{1,5})?(?!\d)")
_NEW_HINT = re.compile(r"\.(?<=\d{3}\.)\d{3}")  # a necessary condition of _NEW_SHAPE, scanned fast
# The shape of an old-style id: archive(.SC)/digits.
# The end of every _OLD_SHAPE match, literal-led (so scanned fast): "/" and its number.
_OLD_TAIL = re.compile(r"/\d{1,12}(?:v\d{1,5})?(?!\.?\d)")
_OLD_SHAPE = re.compile(
    r"(?:(?<![\w-])|(?<=\s-))(?i:[a-z]{2,8}(?:-[a-z]{2,8})?)(?:\.[A-Z]{2})?/\d{1,12}"
    r"(?:v\d{1,5})?(?!\.?\d)")
# What may stand right before an arXiv id and says "arXiv" (checked on a short window, anchored
# at its end): ``arXiv:``, ``arXiv preprint``, ``arXiv.`` (10.48550 DOIs), ``abs/`` (arxiv.org
# URLs, CoRR ``abs/...``), ``arxiv.org/pdf/``, and BibTeX ``eprint = {`` (needs arXiv elsewhere).
_BEFORE = re.compile(
    r"(?:(?P<word>arxiv(?:\s{0,2}\.\s{0,2}org)?(?:\s{0,3}(?:preprint|e-?prints?|id|identifier|no\.?))?"
    r"\s{0,3}[:.,]?\s{0,3})"
    r"|(?P<url>(?:(?<![a-z])abs/|arxiv\s?\.\s{0,3}org\s{0,3}/(?:\s{0,3}(?:pdf|html|ps|format)/)?)\s{0,3})"
    r"|(?P<eprint>(?<![a-z])eprint\s{0,3}=\s{0,3}[{\"]?\s{0,3}))\Z",
    re.I)
_WINDOW = 48
_BEFORE_WORDS = ("arx", "abs/", "abſ/", "epr")  # one is in every _BEFORE match ("ſ": its case folding)
_URL_PATH_WORDS = frozenset({"abs", "pdf", "html", "ps", "format"})
# A category suffix right after an id: ``[hep-th]``, ``[physics.ins-det]``, ``[cs, stat]``.
_CATEGORY_AFTER = re.compile(
    r"\s{0,3}\[\s{0,2}([a-z]{2,8}(?:-[a-z]{2,8})?)(?:\.[a-z]{1,8}(?:-[a-z]{1,8})?)?\s{0,2}[,\]]",
    re.I)
# ``arXiv:`` followed by something that is neither shape (``arXiv:170603762``).
_ARXIV_COLON = re.compile(r"arxiv\s{0,3}:\s{0,3}(\d[\w.\-/]{0,63})", re.I)


def _arxiv_context(text: str, start: int, end: int, mentions_arxiv: bool) -> bool:
    """True when the token text[start:end] is marked as arXiv by what surrounds it."""
    window = text[max(0, start - _WINDOW):start].lower()
    m = _BEFORE.search(text, max(0, start - _WINDOW), start) if any(w in window for w in _BEFORE_WORDS) else None
    if m and (m.group("eprint") is None or mentions_arxiv):
        return True
    m = _CATEGORY_AFTER.match(text, end)
    return bool(m and m.group(1).lower() in ARXIV_ARCHIVES)


# ---------------------------------------------------------------------------------------------
# extraction
# ---------------------------------------------------------------------------------------------
_BREAK = re.compile(r"[ \t\r\n]{1,4}")
# A DOI candidate that ``clean_doi`` only lower-cases and ``doi_problem`` passes: ASCII letters,
# digits and ``-._/`` (nothing to decode, cut or trim: it does not end with ".").
_PLAIN_DOI = re.compile(r"10\.[0-9]{1,9}(?:\.[0-9]{1,9})*/[-./0-9A-Z_a-z]*[-/0-9A-Z_a-z]")
_CUT_10 = re.compile(r"10\.?")
_CUT_REGISTRANT = re.compile(r"10\.\d{1,9}(?:\.\d{1,9}){0,4}")
_NOT_A_CONTINUATION = re.compile(
    r"10\.\d|doi|https?:|arxiv|(?:url|urldate|issn|isbn|eprint|pmid)(?![a-z])"
    r"|(?i:[a-z]{2,8}(?:-[a-z]{2,8})?)(?:\.[A-Z]{2})?/\d", re.I)
_CUT_PREFIX = re.compile(r"10\.\d{1,9}(?:\.\d{1,9}){0,4}(?:/|%2[fF])")
# a DOI printed as text is hyphenated by TeX like a word: letters, a hyphen at the line's end,
# letters on the next line ("mn-" + "ras", "Phys-" + "RevD"); a one-letter code after the break
# ("JCLI-" + "D-11-00234.1") is the DOI's own hyphen
_SYLLABLE_CUT = re.compile(r"[A-Za-z]-\Z")
_HYPHENATED_CODE = re.compile(r"[A-Za-z](?:[-\d]|\Z)")
# a page or article code (B1224, S0140...) or a series' capitals and a number (TQC.2019.5), never a sentence's word
_CODE = re.compile(r"[A-Z]{1,3}\d|[A-Z]{2,6}\.\d")
# a URL-encoded character cut by a line break ("%" + "2F...", "%2" + "F..."): a DOI never ends in one
_CUT_ESCAPE = re.compile(r"%[0-9A-Fa-f]?\Z")
_ESCAPE_GOES_ON = re.compile(r"[0-9A-Fa-f]{2}")


# a URL-encoded backslash, line feed, carriage return or tab inside a DOI-shaped token: where a
# field holding two URLs ("...%5Cnhttp://...") was encoded whole; no DOI holds one
_ENCODED_CONTROL = re.compile(r"%(?:5c|0a|0d|09)", re.I)
# a literal "\n", "\r" or "\t" written into a field between two URLs, then the next URL or the end
_LITERAL_CONTROL = re.compile(r"\\[nrt](?:https?:|www\.|\s|$|\\)")


# a second DOI's prefix run into a DOI's end, as a style prints a doi field holding two DOIs with no
# space between (``10.3847/1538-4357/aa901e10.48550/arXiv.1705.06179``): a registrant of four or
# more digits not opening with 0, after a letter or a digit that does not make it a year's end
# (``fpsyg.2010.00123/full`` is one DOI and its URL's tail)
_RUN_ON_DOI = re.compile(r"(?<=[A-Za-z0-9])(?<!19|20)10\.[1-9]\d{3,8}/")


# arXiv's DOI of an id, new or old style: a line break anywhere in its prefix is inside it
_ARXIV_DOI_ID = re.compile(r"10\.48550/arxiv\.(?:\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)?(?:\.[a-z]{2})?/\d{7})", re.I)


def _join_break(text: str, token: str, end: int) -> tuple[str, int]:
    """Rejoin a DOI that PDF extraction split with whitespace, where the split is unambiguous.

    A DOI cannot end at ``10``, ``10.``, ``10.1038`` or a ``/``, so what follows the break belongs
    to it; after a line break, ``10.1016/j.`` + ``cell...``, ``10.1063/1.`` + ``4939112`` and
    ``S1074-`` + ``7613...`` are rejoined too (a word part cut by TeX's hyphen, ``mn-`` + ``ras``,
    without that hyphen), and so is ``npg-`` + ``19-227-2012`` after a plain space (a DOI does not
    end with a hyphen). Anything else stays split (and a cut-short DOI is reported malformed). Of a
    token of DOIs run together (``_RUN_ON_DOI``) the last one is judged. arXiv's DOI prefix
    ``10.48550/arXiv.`` goes on with the arXiv id after it, an old-style one too (``10.48550/arXiv.``
    + ``astro-ph/0401128``)."""
    for _ in range(4):
        ws = _BREAK.match(text, end)
        if ws is None:
            break
        nxt_m = DOI_CONTEXT_TOKEN.match(text, ws.end())
        nxt = nxt_m.group(0) if nxt_m else ""
        drop = 0  # characters of ``token`` the join leaves out
        last = _last_run_on(token)
        # "10.48550/arXiv." + "astro-ph/0401128", "10.48550/" + "arXiv.2101.00001"
        if nxt and last[:9] == "10.48550/" and len(last) <= len(ARXIV_DOI_PREFIX) and _ARXIV_DOI_ID.match(last + nxt):
            token, end = token + nxt, ws.end() + len(nxt)
            break
        if not nxt or _NOT_A_CONTINUATION.match(nxt):
            break  # the next token is an identifier of its own
        token, whole = last, token  # the checks below read the last DOI; the join keeps the whole token
        if _CUT_10.fullmatch(token):
            ok = nxt[0] == "." if token == "10" else nxt[0].isdigit()
        elif _CUT_REGISTRANT.fullmatch(token):
            ok = nxt[0] == "/"
        elif _CUT_PREFIX.fullmatch(token):  # "10.1016/ S0140-..." but not "10.1016/ and ..."
            ok = "\n" in ws.group(0) or any(c.isdigit() for c in nxt)
        elif "\n" in ws.group(0) and token[-1:] == "/" and _CUT_PREFIX.match(token):  # "10.1093/mnras/\nstx910"
            ok = True
        elif "\n" in ws.group(0) and _CUT_ESCAPE.search(token) and token.startswith("10."):
            ok = _ESCAPE_GOES_ON.match(token[token.rindex("%") + 1:] + nxt) is not None  # "1538-3881%" + "2F..."
        elif "\n" in ws.group(0) and _SYLLABLE_CUT.search(token) and _CUT_PREFIX.match(token):
            # "10.1093/mn-\nras/...": TeX's hyphen between letters, not the DOI's ("abc-\n123" keeps it)
            drop = 1 if nxt[0].isalpha() and not _HYPHENATED_CODE.match(nxt) else 0
            ok = nxt[0].isalnum()
        elif token[-1:] == "-" and _CUT_PREFIX.match(token):  # "npg- 19-227-2012"
            ok = nxt[0].isdigit() or ("\n" in ws.group(0) and nxt[0].isalnum())
        elif "\n" in ws.group(0) and token[-1:] == "." and _CUT_PREFIX.match(token):
            # "10.1016/j.\ncell", "10.1063/1.\n4939112", "PhysRev.136.\nB1224"; not a sentence ("In Proc.")
            ok = nxt[0].islower() or nxt[0].isdigit() or _CODE.match(nxt) is not None
        else:
            ok = False
        token = whole
        if not ok or len(token) + len(nxt) > MAX_TOKEN:
            break
        token, end = token[:len(token) - drop] + nxt, ws.end() + len(nxt)
    return token, end


def _last_run_on(token: str) -> str:
    """The last DOI of a token that may hold several run together (``_RUN_ON_DOI``), else the token."""
    if len(token) <= 16:
        return token
    start = 0
    for cut in _RUN_ON_DOI.finditer(token, token.find("/") + 2):
        start = cut.start()
    return token[start:]


_SPLIT_URL = re.compile(r"(https?):\s{1,3}//|(arxiv|doi)\s?\.\s{1,3}(org)", re.I)
_SPLIT_URL_HINT = re.compile(r"[:.]\s{1,3}(?://|[oO][rR][gG])")  # in every _SPLIT_URL match; scanned fast


def _join_split_urls(m: re.Match[str]) -> str:
    return f"{m.group(1)}://" if m.group(1) else f"{m.group(2)}.{m.group(3)}"


NO_IDENTIFIERS = ExtractedIdentifiers()  # (frozen: one shared empty result)


def extract_identifiers(raw: str) -> ExtractedIdentifiers:
    """Every well-formed DOI and arXiv id in ``raw`` (normalised, deduplicated, in order of first
    appearance) and every identifier-like token that is not well formed."""
    if not isinstance(raw, str) or not raw:
        return NO_IDENTIFIERS
    text = raw
    lower = raw.lower()
    if ("//" in text or "org" in lower) and _SPLIT_URL_HINT.search(text):
        text = _SPLIT_URL.sub(_join_split_urls, text)  # PDF extraction splits URLs: "http: //arxiv.\norg/abs/"
    if "\\" in text:  # LaTeX escapes (10.1162/tacl\_a\_00276) would cut a DOI short
        text = LATEX_ESCAPE.sub(unlatex, text)
    scan = _Scan(text, lower if text is raw else text.lower())
    if "10." in text:
        scan.dois_by_shape()
    if "doi" in scan.lower:
        scan.dois_by_context()
    scan.new_style_arxiv()
    scan.old_style_arxiv()
    if scan.mentions_arxiv:
        scan.arxiv_prefixed()
    dois, arxiv, bad = scan.dois, scan.arxiv, scan.bad
    if not (dois or arxiv or bad):
        return NO_IDENTIFIERS
    return ExtractedIdentifiers(_ordered_unique(dois), _ordered_unique(arxiv), _ordered_unique(bad))


class _Scan:
    """One string's identifier scan: each pass adds (position, value) hits, so the result keeps
    the order of first appearance whatever pass found a token."""

    __slots__ = ("text", "atext", "lower", "mentions_arxiv", "dois", "arxiv", "bad", "doi_starts",
                 "arxiv_starts", "doi_spans")

    def __init__(self, text: str, lower: str):
        self.text = text
        self.atext = rejoin_splits(text)  # arXiv passes read ids with PDF-inserted spaces removed
        self.lower = lower  # text.lower()
        self.mentions_arxiv = "arxiv" in lower
        self.dois: list[tuple[int, str]] = []
        self.arxiv: list[tuple[int, str]] = []
        self.bad: list[tuple[int, MalformedToken]] = []
        self.doi_starts: set[int] = set()
        self.arxiv_starts: list[int] = []
        self.doi_spans: list[tuple[int, int]] = []  # where well-formed DOIs stand in the text

    def add_doi(self, pos: int, token: str, end: int) -> None:
        """Judge one DOI candidate (at ``pos:end`` of the text); a 10.48550/arXiv.X DOI also names
        the arXiv id X."""
        if len(token) <= MAX_TOKEN and _PLAIN_DOI.fullmatch(token):
            cleaned, why = token.lower(), None  # (what clean_doi and doi_problem make of it: see _PLAIN_DOI)
        else:
            cleaned = clean_doi(token) if len(token) <= MAX_TOKEN else token
            why = doi_problem(cleaned)
        if why is not None:
            self.bad.append((pos, MalformedToken("doi", token[:80], why)))
            return
        self.dois.append((pos, cleaned))
        self.doi_spans.append((pos, end))
        if cleaned.startswith(ARXIV_DOI_PREFIX):
            aid, awhy = _check_arxiv(cleaned[len(ARXIV_DOI_PREFIX):])
            if aid:
                self.arxiv.append((pos, aid))
            else:
                self.bad.append((pos, MalformedToken("arxiv", cleaned[len(ARXIV_DOI_PREFIX):][:80], awhy or "")))

    def bad_arxiv(self, pos: int, token: str, why: str | None) -> None:
        """Report a malformed arXiv token, unless it is part of a well-formed DOI's suffix
        (``10.1000/ARXIV:00000`` is one DOI, not a DOI and a broken arXiv id). Positions are the
        arXiv passes' copy of the text: spans are compared only when it is the text itself."""
        if self.atext is self.text and any(a <= pos < b for a, b in self.doi_spans):
            return
        self.bad.append((pos, MalformedToken("arxiv", token, why or "")))

    def dois_by_shape(self) -> None:
        """Every 10.NNNN/ token (4-9 digit registrant, Crossref's heuristic for running text)."""
        text = self.text
        consumed = 0
        for m in DOI_RE.finditer(text, text.find("10.")):  # (each match starts at "10.")
            if m.start() < consumed:
                continue  # inside a DOI rejoined across a line break
            self.doi_starts.add(m.start())
            token, consumed = _join_break(text, m.group(0), m.end())
            control = _ENCODED_CONTROL.search(token)
            if control:  # "10.1038/x%5Cnhttp://...": a URL-encoded backslash or line break ends the DOI
                token, consumed = token[:control.start()], m.start() + control.start()
            elif _LITERAL_CONTROL.match(text, consumed):  # a literal "\n" (a .bib field's two URLs)
                self.add_doi(m.start(), token, consumed)
                continue
            if text[consumed:consumed + 1] == "\\":  # e.g. a SICI "<" mangled to "\" by PDF
                self.bad.append((m.start(), MalformedToken(
                    "doi", token[:80], "DOI runs into a backslash: cut short or mangled")))
                continue
            self.add_run_on(m.start(), token, consumed)

    def add_run_on(self, pos: int, token: str, end: int) -> None:
        """``add_doi`` for each DOI of a token that may hold several run together (``_RUN_ON_DOI``)."""
        cut = _RUN_ON_DOI.search(token, token.find("/") + 2) if len(token) > 16 else None
        while cut is not None:
            self.add_doi(pos, token[:cut.start()], pos + cut.start())
            pos, token = pos + cut.start(), token[cut.start():]
            cut = _RUN_ON_DOI.search(token, token.find("/") + 2)
        self.add_doi(pos, token, end)

    def dois_by_context(self) -> None:
        """Whatever "doi:", "DOI" or doi.org announces (any registrant the DOI Handbook allows)."""
        text, starts = self.text, self.doi_starts
        for m in DOI_CONTEXT.finditer(text, _first_doi(text, self.lower)):
            at = m.end()
            # "doi: N/A" (no digit) is not a DOI-like token. (The token's first character is this
            # one when it is a DOI character: printable ASCII, so its only digits are 0-9.)
            if at in starts or not "0" <= text[at:at + 1] <= "9":
                continue
            t = DOI_CONTEXT_TOKEN.match(text, at)
            assert t is not None  # (a digit is a DOI character)
            joined, end = _join_break(text, t.group(0), t.end())
            self.add_run_on(at, joined, end)

    def new_style_arxiv(self) -> None:
        """New-style numbers: context decides whether a number is an arXiv id."""
        text = self.atext
        hint = _NEW_HINT.search(text)
        if hint is None:
            return  # no "ddd.ddd" at all: the usual case, found by a fast literal-led scan
        marked = "[" in text or _words_before(self.lower if text is self.text else text.lower())
        for m in _NEW_SHAPE.finditer(text, max(0, hint.start() - 6)):  # (a match has 3-6 digits before its ".")
            if not marked and m.group(0)[4:5] != "." and text[m.start() - 1:m.start()] != "/":
                continue  # no arXiv context can be found, no archive before it, and not YYMM.N...: no id
            aid, why = _check_arxiv(m.group(0))
            if not (_arxiv_context(text, m.start(), m.end(), self.mentions_arxiv)
                    or archive_before(text, m.start())):
                if aid and bare_new_style_plausible(text, m.start(), m.end()):
                    self.arxiv.append((m.start(), aid))  # INSPIRE "(2012), 1207.7214", "[1512.05291]"
                continue  # any other bare number (a page, a report number...) is never arXiv
            self.arxiv_starts.append(m.start())
            if aid:
                self.arxiv.append((m.start(), aid))
            else:
                self.bad_arxiv(m.start(), m.group(0), why)

    def old_style_arxiv(self) -> None:
        """Old-style ``archive/YYMMNNN`` ids, well formed or reported when distinctive."""
        text = self.atext
        slash = _OLD_TAIL.search(text) if "/" in text else None
        if slash is None:
            return  # every old-style shape ends with _OLD_TAIL
        for m in _OLD_SHAPE.finditer(text, max(0, slash.start() - 20)):  # (at most 20 characters before "/")
            token = m.group(0)
            om = _OLD_ID.fullmatch(token)
            if om is None:
                continue
            aid, why = _check_old(om.group(1), om.group(2), om.group(3))
            if om.group(1).lower() in _URL_PATH_WORDS:
                why = "arXiv URL with a broken id"
            if aid:
                self.arxiv_starts.append(m.start())
                self.arxiv.append((m.start(), aid))
                continue
            # A known archive with 7 digits is distinctive enough to report even bare;
            # anything else only when the context says arXiv.
            distinctive = om.group(1).lower() in OLD_STYLE_ARCHIVES and len(om.group(3)) == 7
            if distinctive or _arxiv_context(text, m.start(), m.end(), self.mentions_arxiv):
                self.arxiv_starts.append(m.start())
                self.bad_arxiv(m.start(), token, why)

    def arxiv_prefixed(self) -> None:
        """``arXiv:`` followed by a token no other pass judged: malformed."""
        text, starts = self.atext, sorted(self.arxiv_starts)
        for m in _ARXIV_COLON.finditer(text):
            s, e = m.start(1), m.end(1)
            token = m.group(1).rstrip(".-/")
            i = bisect.bisect_left(starts, s)
            if len(token) < 5 or (i < len(starts) and starts[i] < e):
                continue  # "arXiv: 2017" is a year; shaped tokens were judged above
            if token.startswith("10.48550/") or DOI_RE.match(text, s):
                continue
            self.bad_arxiv(s, token, _check_arxiv(token)[1])


def _first_doi(text: str, lower: str) -> int:
    """Where a "doi" word can first start (``dx.`` before it included): every DOI_CONTEXT match
    holds "doi" in any case, "ı" for "i" too (the regex's case folding); 0 when the lower-case
    copy does not align with the text."""
    if len(lower) != len(text):
        return 0
    at, dotless = lower.find("doi"), lower.find("doı")
    if at < 0 or 0 <= dotless < at:
        at = dotless
    return max(0, at - 3) if at >= 0 else 0


def _words_before(lower: str) -> bool:
    """Does the lower-case text hold a word every ``_BEFORE`` match holds? (When it does not,
    no window of it does: ``_arxiv_context`` looks before a number only after finding one.)"""
    return "arx" in lower or "abs/" in lower or "abſ/" in lower or "epr" in lower


def _ordered_unique(items: Sequence[tuple[int, object]]) -> tuple:
    """Values sorted by where they were found, each kept once (first appearance wins)."""
    if len(items) < 2:  # (most strings: one identifier of a scheme, or none)
        return (items[0][1],) if items else ()
    seen: set = set()
    out = []
    for _, v in sorted(items, key=lambda p: p[0]):
        if v not in seen:
            seen.add(v)
            out.append(v)
    return tuple(out)
