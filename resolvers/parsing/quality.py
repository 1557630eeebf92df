"""Is a raw string a usable reference at all? Strings that are not are ``parse_uncertain``.

Rules, each a ``Reason``: BibTeX ``.bst`` artefacts (the style language's own words leaked into
the text), lone author fragments (only name pieces, no title, venue or year), author lists of any
length with nothing else (``Surname AB, Surname C``; ``K.; Lee, K.; ...; and Kiros, R``), a string
cut inside its title right after the year (``Smith J (2001) The effect of``), too little text to
name a work, no words. A string carrying a well-formed identifier is never parse_uncertain (the
contract's precedence): the identifier speaks for it.
"""
from __future__ import annotations

import re

from resolvers.model import Reason
from resolvers.parsing.fields import ParsedReference, clean_raw, parse_reference

# Words of BibTeX's stack language (.bst): never in a real reference, always in a leak of it.
_BST_WORDS = {"write", "newline", "add.period", "output.check", "fin.entry", "new.block",
              "new.sentence", "output", "format.title", "format.authors", "bibitem", "empty.misc.check",
              "output.bibitem", "format.date", "format.btitle", "format.journal", "new.block.checka",
              "if$", "pop$", "duplicate$", "swap$", "skip$", "top$", "while$", "call.type$",
              "write$", "newline$", "entry.max$", "{}", "empty$", "output.nonnull", "add.blank"}
_BST_STRONG = re.compile(r"\b(?:add\.period|fin\.entry|new\.block|new\.sentence|output\.check|"
                         r"format\.\w+|\w+\$)|\bwrite\s+newline\b|\bnewline\s+write\b")
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
    # only names: a lone fragment ("E., and Stoica, I.": few pieces, an initial with its full
    # stop) or an author list of any length and form
    if is_author_list(text):
        name_pieces = [p for p in pieces if p.strip(".")]
        if len(name_pieces) <= 8 and re.search(r"\b[A-Z]\.", text):
            return Reason.AUTHOR_FRAGMENT
        return Reason.AUTHOR_LIST_NO_TITLE
    if len(text) < MIN_CHARS or len(words) < MIN_WORDS:
        return Reason.TOO_SHORT
    if title_cut_after_year(text, parsed if parsed is not None else parse_reference(raw)):
        return Reason.TITLE_CUT_SHORT
    return None


# --- author lists ----------------------------------------------------------------------------

_INITIALS = re.compile(r"(?:[A-Z]\.?-?){1,4}")
_SURNAME = re.compile(r"[A-Z\u00c0-\u024f][\w'’\u00c0-\u024f-]+|(?:van|von|de|der|den|da|di|du|del|la|le|ten|ter|"
                      r"dos|bin)|(?:Jr|Sr)\.?|I{2,3}|IV")
_LIST_SEPARATOR = re.compile(r"\s*[,;&]\s*|\s+(?:and|AND)\s+|^(?:and|AND)\s+")
_LEADING_AND = re.compile(r"^(?:and|AND)\s+")
_ET_AL = re.compile(r",?\s*\bet\.?\s*al\b\.?\s*$")
MAX_NAME_WORDS = 4


def _name_chunk(chunk: str, last: bool) -> str | None:
    """``initialled`` (a name with initials: "K.", "Nguyen DV", "M.-W. Chang"), ``surname`` (one
    capitalised word: APA's "Lee" before ", K."), ``full`` (forenames and surname, no initials), or
    None. Only an initialled name ends a list: a last word without initials is where a Title Case
    title or a word such as "Unpublished" stands."""
    words = chunk.replace(".", ". ").split()
    if not words or len(words) > MAX_NAME_WORDS:
        return None
    initials = [w for w in words if _INITIALS.fullmatch(w)]
    if not all(_INITIALS.fullmatch(w) or _SURNAME.fullmatch(w) for w in words):
        return None
    if initials:
        return "initialled"
    if last:
        return None
    return "surname" if len(words) == 1 else "full"


def is_author_list(text: str) -> bool:
    """Only personal names, however many: no title, venue, year or number."""
    if re.search(r"[\d:()\[\]\"“”?!/]", text):
        return False
    body = _ET_AL.sub("", re.sub(r"\s+\.", ".", text)).strip(" .,;")
    chunks = [_LEADING_AND.sub("", c.strip(" .")) for c in _LIST_SEPARATOR.split(body)]
    chunks = [c for c in chunks if c]
    kinds = [_name_chunk(c, i == len(chunks) - 1) for i, c in enumerate(chunks)]
    if not kinds or None in kinds or "initialled" not in kinds:
        return False
    return kinds.count("full") * 2 < len(kinds)


# --- a title cut short after the year --------------------------------------------------------

# the last word of a fragment that cannot end a title: a function word, or a dangling hyphen,
# comma, colon or opening bracket
_CUT_END = re.compile(r"(?:\b(?:of|the|and|in|for|with|to|on|a|an|by|from|at|via|as|or|its|their|between|"
                      r"into|than|versus|vs)|[-,:;(&])\s*$", re.I)


# a lower-case last word with no full stop: a sentence-case title that stopped mid-way
_LOWER_END = re.compile(r"\b[a-z][\w-]*\s*$")
CUT_MIN_WORDS = 4
# a "title" running into a venue or an editor is a parse that went on too long, not a cut title
_VENUE_IN_TITLE = re.compile(r"[()\[\]>]|\b[Ii]n:|\beds?\.|\bProc|\bJournal\b|\bPress\b")


def title_cut_after_year(text: str, parsed: ParsedReference) -> bool:
    """Authors, a year, then a title fragment and nothing after, that stops where no title ends
    (a function word, a dangling hyphen or comma), or in lower case mid-sentence with no full
    stop after several words: the string was cut inside its title (a PDF column or page break)."""
    title = parsed.title
    if parsed.kind != "after_authors" or not parsed.author_block or not parsed.year or not title:
        return False
    at = text.rfind(title)
    if at < 0 or text[at + len(title):].strip(" .,;:") or _VENUE_IN_TITLE.search(title):
        return False
    cut = bool(_CUT_END.search(text)) or (bool(_LOWER_END.search(text)) and len(title.split()) >= CUT_MIN_WORDS)
    return cut and bool(re.search(r"(?<!\d)" + str(parsed.year) + r"(?!\d)", text[:at]))
