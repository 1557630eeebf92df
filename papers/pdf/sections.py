"""Where a PDF's reference list starts and ends in its lines in reading order (``layout``).

A section starts at a heading line ``References``, ``Bibliography``, ``Literature Cited``, ``Works
Cited`` (any case, numbered ``7``, ``VII.``, ``A.``, a colon after) and ends at the next heading of
an appendix, supplementary material, acknowledgements, author contributions or the like, at a
collaboration's author list (``The ATLAS Collaboration``), at a numbered or lettered heading set
larger than the body, or in capitals, at its column's edge (``A. Proofs``), or at the end of the
text. The paper's list is the last section with entries that
comes before any appendix or supplement heading (a supplement's own list does not replace it). With
no heading at all (styles that print none), the list starts at the last line opening with ``[1]``."""
from __future__ import annotations

import re

from papers.pdf.words import Line

HEADING = re.compile(
    r"(?:(?:\d{1,2}|[IVXL]{1,5}|[A-Z])\.?\s{0,3})?"
    r"(?:references(?:\s+and\s+notes)?|bibliography|literature\s+cited|works\s+cited|cited\s+literature"
    r"|reference\s+list)\s{0,2}[:.]?", re.I)
END_HEADING = re.compile(
    r"(?:(?:\d{1,2}|[IVXL]{1,5}|[A-Z])\.?\s{0,3})?"
    r"(?:appendix|appendices|supplementary|supplemental|supporting\s+information|acknowledge?ments?"
    r"|author\s+contributions|competing\s+interests|conflicts?\s+of\s+interest|declaration\s+of"
    r"|funding|abbreviations|about\s+the\s+authors?|biograph(?:y|ies)|figure\s+legends?|related\s+resources"
    r"|disclosure\s+statement)\b", re.I)
SUPPLEMENT_HEADING = re.compile(
    r"(?:(?:\d{1,2}|[IVXL]{1,5}|[A-Z])\.?\s{0,3})?(?:appendix|appendices|supplementary|supplemental"
    r"|supporting\s+information)\b", re.I)
END_HEADING_MAX_WORDS = 8  # a heading is short: a sentence starting "Supplementary data show ..." is not one
# a heading's words hold no sentence break, no "et al.", no "pyRing: a ..." (an entry's do)
NUMBERED_HEADING = re.compile(r"(?:[A-Z]|\d{1,2}|[IVX]{1,4})(?:\.\d{1,2}){0,2}\.?\s{1,3}"
                              r"[A-Z](?:[^,;.:]|[.:](?!\s)){0,80}\.?")
LARGER = 1.1  # a heading's line is this much taller than the body's median line
# the heading of a collaboration's author list after the paper's list, a line of its own (an entry's
# author "ATLAS Collaboration," goes on after a comma): "The ATLAS Collaboration", "A The CMS Collaboration"
COLLABORATION_HEADING = re.compile(r"(?:[A-Z]\.?\s{1,3})?(?:[Tt]he\s+)?[A-Z][\w-]*(?:\s+(?:and|&)\s+[A-Z][\w-]*)?"
                                   r"\s+Collaborations?")
FIRST_LABEL = re.compile(r"\s*\[1\]\s")  # the first entry of a bracket-numbered list
LABEL_LOOKBACK = 200  # lines looked back for a cut list's last label (a long entry runs to 60)
BRACKET_LABEL = re.compile(r"\[(\d{1,4})\]")
HANG_MIN = 3.0  # points: continuation lines indented at least this much make a hanging list


def find_sections(lines: list[Line]) -> list[tuple[bool, list[Line]]]:
    """Each reference list's lines (without its heading), from a heading to the next heading of
    a list, an appendix or the like (``END_HEADING``, or a numbered heading in a larger font:
    ``A. Operator Constraints``), or the end of the text; with whether it comes after an
    appendix or supplement heading (a supplement's own list). A bracket-numbered list cut by
    such a heading goes on where a line opens with its next label (``[12]`` after ``[11]``: the
    other column's acknowledgements and competing interests set beside the list's first part).
    Without any heading, the list that starts at the last line opening with ``[1]`` (styles that
    print no heading), to the next heading that would end it."""
    sections: list[tuple[bool, list[Line]]] = []
    body = _body_height(lines)
    first = [i for i, line in enumerate(lines) if FIRST_LABEL.match(line.text)]
    if not any(HEADING.fullmatch(line.text.strip()) for line in lines):
        if first:
            sections.append((False, []))
            _collect(lines[first[-1]:], sections, body)
        return sections
    _collect(lines, sections, body)
    return sections


def _collect(lines: list[Line], sections: list[tuple[bool, list[Line]]], body: float) -> None:
    """Append each section's lines to ``sections`` (whose last one, when given, is open). A
    list's heading repeated as the first line of a page while the list is open is its running
    header, not a new list."""
    current: list[Line] | None = sections[-1][1] if sections else None
    cut: list[Line] | None = None  # a list a heading interrupted, and the label it waits for
    waiting = ""
    supplement = False
    previous: Line | None = None
    for line in lines:
        text = line.text.strip()
        new_page = previous is None or line.page != previous.page
        previous = line
        if HEADING.fullmatch(text) and current and new_page:
            continue  # "References" atop each page of the list (a running header): the list goes on
        if HEADING.fullmatch(text):
            current, cut = [], None
            sections.append((supplement, current))
        elif current and (_ends(text, line, body) or _section_heading(line, text, body)) or \
                current is None and _ends(text, line, body):
            if current:  # an appendix or a supplement comes after the list: never resumed
                cut = None if SUPPLEMENT_HEADING.match(text) else current
                waiting = _next_bracket_label(current)
            current = None
            supplement = supplement or bool(SUPPLEMENT_HEADING.match(text))
        elif current is not None:
            current.append(line)
        elif cut is not None and waiting and text.startswith(waiting):
            current, cut = cut, None
            current.append(line)


def _next_bracket_label(section: list[Line]) -> str:
    """``[n+1]`` for a section whose last label is ``[n]`` (within its last lines), else ""."""
    for line in reversed(section[-LABEL_LOOKBACK:]):
        m = BRACKET_LABEL.match(line.text.lstrip())
        if m:
            return f"[{int(m.group(1)) + 1}]"
    return ""


def _ends(text: str, line: Line, body: float) -> bool:
    """A heading that ends a list: an appendix, acknowledgements ... in a few words, a longer title
    set larger than the body (``Supplemental Material for "..."``), or a collaboration's author list."""
    if COLLABORATION_HEADING.fullmatch(text):
        return True
    if not END_HEADING.match(text) or text.endswith(","):
        return False
    return len(text.split()) <= END_HEADING_MAX_WORDS or line.y1 - line.y0 >= LARGER * body


def _body_height(lines: list[Line]) -> float:
    heights = sorted(ln.y1 - ln.y0 for ln in lines)
    return heights[len(heights) // 2] if heights else 0.0


def _section_heading(line: Line, text: str, body: float) -> bool:
    """A numbered or lettered heading (``A. Proofs``, ``5 Discussion``) set larger than the
    body text or in capitals (``A DERIVATIONS``: bold small capitals, the body's size), at its
    column's edge: what follows is no longer the list. (An entry's indented
    line that opens with an author's initials, ``J. V. The Excited ...``, is no heading, however
    tall an accent or a superscript makes it.)"""
    if not NUMBERED_HEADING.fullmatch(text) or line.indent >= HANG_MIN:
        return False
    words = text.split()[1:]
    capitals = "".join(words)
    shouted = len(capitals) >= 4 and capitals.isupper() and len(words) <= END_HEADING_MAX_WORDS
    return line.y1 - line.y0 >= LARGER * body or shouted
