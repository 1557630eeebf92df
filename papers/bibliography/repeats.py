"""An entry that repeats the previous entry's authors as a dash (``—. 2011, MNRAS, 414, 3458``,
``---.``, ``------,``, amsplain's ``\\bysame``) gets those authors back, as a reader of the list
understands it: from the previous entry's author field when the source had one, else from the
previous string up to its year when the entry goes on with a year, else from the previous
entry's LaTeX up to where its title starts (``\\newblock``, ``\\emph``, quotes). The string as
printed stays in the entry's fields (``as_printed``)."""
from __future__ import annotations

import re

from papers.bibliography.render import authors
from papers.latex_text import latex_to_text

# one em dash or a rule of several dashes or underscores, then punctuation or a space
_DASH = re.compile(r"^\s*(?:—[—–\-_]*|[–\-_]{2,})\s*(?=[.,;:(]|\s|\d)")
_YEAR = re.compile(r"(?<![\w/.])(?:1[6-9]\d\d|20\d\d|\?{4})[a-z]?(?![\w/])")  # "????": BibTeX's missing year
_STARTS_WITH_YEAR = re.compile(r"^[\s.,;:(]*(?:1[6-9]\d\d|20\d\d|\?{4})[a-z]?(?![\w/])")
# an author-year style's year closing the author block: "Ricker, G. R., ... (2015a)", "Chepurnoy, A. (????)"
_ENDS_WITH_YEAR = re.compile(r"[\s,;:]*\(?(?:1[6-9]\d\d|20\d\d|\?{4})[a-z]?\)?[\s.,;:]*$")
# a long author list (a collaboration's thousand names) is still one block: bounded for safety only
_MOST_AUTHOR_CHARS = 50_000


# where the authors of a ``\\bibitem`` end: the first block, the emphasised or quoted title
_TITLE_STARTS = re.compile(r"\\newblock|\\emph\s*\{|\\textit\s*\{|\\textsl\s*\{|\{\\(?:em|it|sl)\b|``|\\enquote")


def author_block(latex: str) -> str | None:
    """The authors of a ``\\bibitem``'s LaTeX: its text before the title starts."""
    m = _TITLE_STARTS.search(latex, 0, _MOST_AUTHOR_CHARS)
    block = latex_to_text(latex[:m.start()]).rstrip(" ,.;:") if m else ""
    return block if block and not _DASH.match(block) else None


def _authors_of(previous: str, fields: dict[str, str], block: str | None, rest: str) -> str | None:
    """The author block of the previous entry, as it would be printed before ``rest``."""
    who = fields.get("author") or fields.get("editor")
    if who:
        return latex_to_text(authors(who))
    if block and not _STARTS_WITH_YEAR.match(rest):
        return block
    if block and _ENDS_WITH_YEAR.search(block):  # the dash stands for the names, the year follows it
        return _ENDS_WITH_YEAR.sub("", block) or None
    if _STARTS_WITH_YEAR.match(rest):
        year = _YEAR.search(previous)
        if year is not None and 0 < year.start() <= _MOST_AUTHOR_CHARS:  # (an author list of 60 names: 1,500)
            block = previous[:year.start()].rstrip(" ,;(")
            return block or None
    return None


def starts_with_dash(raw: str) -> bool:
    """Whether a reference string begins with an author dash."""
    return _DASH.match(raw) is not None


def fill_repeated_authors(raw: str, previous: str | None, previous_fields: dict[str, str],
                          previous_block: str | None = None) -> tuple[str, str] | None:
    """(``raw`` with its leading author dash replaced by the previous entry's authors, those
    authors); None when it has no dash or the authors cannot be told. ``previous_block`` is
    the previous entry's ``author_block`` (or the authors filled into it)."""
    m = _DASH.match(raw)
    if m is None or not previous:
        return None
    rest = raw[m.end():]
    block = _authors_of(previous, previous_fields, previous_block, rest)
    if not block:
        return None
    shown = block
    sep = rest[:1] if rest[:1] in ".,;:" else ""
    body = rest[1:] if sep else rest
    if sep == "." and block.endswith("."):
        block = block[:-1]
    return (f"{block}{sep} {body.lstrip()}" if sep else f"{block} {body.lstrip()}"), shown
