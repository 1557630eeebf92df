"""A paper's own title, as its source gives it: the ``\\title`` of its main LaTeX file (its macros
expanded, footnotes and ``\\thanks`` out), or a PDF's title (its metadata when that reads as a
title, else the largest line at the top of its first page). Citing papers that the catalog does
not hold get their title in the site's index from here. Pure functions: no I/O."""
from __future__ import annotations

import re
from typing import Iterable

from papers.braces import group_end
from papers.latex_text import latex_to_text
from papers.macros import Expander

MAX_TITLE = 500  # characters kept of a title (a real one is a line or two)
MIN_TITLE = 4
TEX = "LaTeX \\title"
PDF_METADATA = "PDF metadata"
PDF_FIRST_PAGE = "PDF first page"

_TITLE = re.compile(r"\\(?:title|icmltitle|Title)\s*(?:\[[^\]{}]{0,500}\])?\s*\{")
# what a title carries that is not its words: footnotes and their marks, PDF-only variants
_NOTES = re.compile(r"\\(?:thanks|footnote|tnoteref|fnref|corref|tnotetext|titlenote|[vh]space\*?|label)\s*"
                    r"(?:\[[^\]{}]*\])?\s*\{")
_PDFSTRING = re.compile(r"\\texorpdfstring\s*\{")
_BREAKS = re.compile(r"\\\\(?:\[[^\]]*\])?|\\newline\b|\\linebreak\b")
# a PDF's metadata title that is a file or a program's placeholder, not the paper's title
_NOT_A_TITLE = re.compile(r"(?i)^(?:microsoft (?:word|powerpoint) - |untitled\b|title\b|paper\b\s*\d*$|"
                          r"arxiv:\S+$|doi:\S+$|https?://)|\.(?:dvi|tex|pdf|docx?|ps|eps)$")
_ARXIV_STAMP = re.compile(r"(?i)^arxiv:\s*\d")


def _without_groups(text: str, macro: re.Pattern[str]) -> str:
    """``text`` without each ``macro`` and its brace group (a ``\\thanks{...}`` and what it says)."""
    while (m := macro.search(text)) is not None:
        end = group_end(text, m.end() - 1)
        text = text[:m.start()] + (text[end:] if end > 0 else "")
    return text


def _pdf_strings(text: str) -> str:
    """``\\texorpdfstring{TeX}{PDF}`` as its TeX form (what the page shows)."""
    while (m := _PDFSTRING.search(text)) is not None:
        first = group_end(text, m.end() - 1)
        second = group_end(text, first) if first > 0 and text[first:first + 1] == "{" else -1
        if second < 0:
            return text[:m.start()] + text[m.end():]
        text = text[:m.start()] + text[m.end():first - 1] + text[second:]
    return text


def clean_title(text: str) -> str | None:
    """A title as one line of words, or None when it is too short to be one."""
    title = " ".join(text.split()).strip(" .,;:")
    if len(title) < MIN_TITLE or not any(c.isalpha() for c in title):
        return None
    return title if len(title) <= MAX_TITLE else title[:MAX_TITLE - 1].rstrip() + "…"


def tex_title(text: str, macros: Expander | None = None) -> str | None:
    """The title a LaTeX document's ``\\title{...}`` gives (``\\title[short]{long}``: the long one),
    or None. ``text``: the main file with its inputs in place; ``macros``: its own macros."""
    for m in _TITLE.finditer(text):
        end = group_end(text, m.end() - 1)
        if end < 0 or end - m.end() > 4 * MAX_TITLE:
            continue
        body = _pdf_strings(_without_groups(text[m.end():end - 1], _NOTES))
        body = _BREAKS.sub(" ", body)
        if macros is not None:
            body = macros.expand(body)
        title = clean_title(latex_to_text(body))
        if title:
            return title
    return None


def metadata_title(title: str | None) -> str | None:
    """A PDF's Title metadata when it reads as a paper's title (not a file name or a placeholder)."""
    if not title:
        return None
    cleaned = clean_title(title)
    if cleaned is None or _NOT_A_TITLE.search(cleaned) or len(cleaned.split()) < 2:  # one word: a file's name
        return None
    return cleaned


# lines at the top of a first page that are no title: class and journal stamps, contact lines
_NOT_TITLE_LINE = re.compile(r"(?i)^(?:draft version|typeset using|preprint typeset|accepted\b|received\b|"
                             r"published\b|submitted\b|arxiv:|mnras\b|astronomy & astrophysics|"
                             r"corresponding author|keywords|abstract\b|contents\b|journal of\b|proceedings of\b)"
                             r"|@|©|\bcopyright\b|https?://")
_MARKS = re.compile(r"(?:^|[\s,])(?:\d{1,2}|[∗*†‡§¶])(?=[\s,]|$)")  # an author line's affiliation marks
TOP_SHARE = 0.45  # a first page's title is in its top part (a share of its height, taken as 1.3 x its width)
NARROW = 0.15  # a line narrower than this share of the page width is a stamp or a fragment, no title line


def _size(line: tuple[float, float, float, float, str, float]) -> float:
    return line[5] or (line[3] - line[1])


def first_page_title(lines: Iterable[tuple[float, float, float, float, str, float]],
                     width: float = 0.0) -> str | None:
    """The title on a PDF's first page from its lines ((x0, y0, x1, y1, text, type size: the median
    height of its words), top down): the lines set in the largest type near the top, next to each
    other, read as one; None when they do not read as a title (one word, a whole paragraph, a
    stamp). ``width``: the page's (0: not known)."""
    found = [line for line in lines if line[4].strip() and line[2] - line[0] > line[3] - line[1]
             and (not width or line[2] - line[0] >= NARROW * width) and not _NOT_TITLE_LINE.search(line[4])]
    if not found:
        return None
    top = min(line[1] for line in found)
    limit = top + TOP_SHARE * 1.3 * width if width else max(line[3] for line in found)
    upper = [line for line in found if line[1] < limit]
    largest = max(_size(line) for line in upper)
    parts: list[tuple[float, float, float, float, str, float]] = []
    for line in sorted(upper, key=lambda line: (line[1], line[0])):
        if _size(line) < 0.97 * largest or (parts and (line[1] - parts[-1][3] > 1.2 * largest
                                                        or len(_MARKS.findall(line[4])) >= 2)):
            if parts:
                break  # the title's lines are over: the next line is set smaller, or names authors
            continue
        parts.append(line)
    title = clean_title(" ".join(p[4] for p in parts))
    if title is None or len(title.split()) < 2 or len(title.split()) > 40:
        return None
    return title
