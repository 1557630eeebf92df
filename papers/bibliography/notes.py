"""REVTeX's footnotes in the bibliography (``footinbib``). Under REVTeX 4.1/4.2 a footnote is a
bibliography entry: the class writes its text to a ``<job>Notes.bib`` database named before the
paper's own as ``@FOOTNOTE{NoteN, key="NoteN", note="..."}`` and cites ``NoteN`` where the mark
stands, so BibTeX lists it among the cited entries (``\\make@footnote@endnote`` in revtex4-2.cls,
``\\footinbib@sw`` set by the society files aps4-2.rtx, aip4-2.rtx, aapm4-2.rtx, sor4-2.rtx). It is
off with the class option ``nofootinbib`` and in author-year mode (the ``rmp`` journal, the
``author-year`` option, AIP's ``jor``; AIP's ``author-numerical`` keeps notes).

As the class numbers them: ``\\footnote{..}`` steps the footnote counter, cites ``Note<counter>``
and writes its text; ``\\footnote[n]{..}`` cites and writes ``Note<n>``; ``\\footnotemark`` steps
and cites, ``\\footnotemark[n]`` cites ``Note<n>``; ``\\footnotetext{..}`` writes the current
number's text, ``\\footnotetext[n]{..}`` ``Note<n>``'s, and is printed only where the text cites
it (``\\cite{Note1}``). A footnote in a figure, a table or the abstract writes no note (they
keep their own footnote counter), nor does one in the title page's commands (``\\title``,
``\\author``, ``\\affiliation``...: the class drops it with a warning). A note's text is written
out, not typeset in place, so the citations inside it are made when the bibliography prints it:
after the text's own."""
from __future__ import annotations

import re
from dataclasses import dataclass

from papers.bibliography.cites import cited_lists, typeset_text
from papers.braces import group_end

_CLASS = re.compile(r"\\documentclass\s*(?:\[([^\]]*)\])?\s*\{\s*revtex4-[12]\s*\}")
# the society files above turn ``footinbib`` on (APS when none is named); REVTeX 4.1's OSA
# journals are not read as writing notes
_OTHER_SOCIETY = frozenset({"osa", "osameet", "opex", "tops", "josa"})
_FOOTNOTE = re.compile(r"\\footnote(text|mark)?(?![A-Za-z@])\s*(?:\[\s*(\d{1,6})\s*\]\s*)?")
_FLOAT = re.compile(r"\\(begin|end)\s*\{(?:figure|table|abstract)\*?\}")
_BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_FRONT_MATTER = re.compile(r"\\(?:title|author|affiliation|altaffiliation|email|homepage|thanks|collaboration|"
                           r"keywords|date)(?![A-Za-z@])\s*(?:\[[^\[\]{}]{0,400}\]\s*)?(?=\{)")


@dataclass(frozen=True, slots=True)
class Note:
    """One footnote written to the bibliography: its key (``Note3``) and its text as LaTeX."""

    key: str
    body: str


def footnotes_in_bibliography(text: str) -> bool:
    """Whether the paper's class writes its footnotes to the bibliography (the module's rule)."""
    m = _CLASS.search(text)
    if m is None:
        return False
    options = {o.strip() for o in (m.group(1) or "").split(",")}
    if "nofootinbib" in options or options & _OTHER_SOCIETY:
        return False
    author_year = bool(options & {"rmp", "author-year"} or {"aip", "jor"} <= options)
    return not author_year or "numerical" in options or "author-numerical" in options


def _without_notes(text: str, start: int) -> list[tuple[int, int]]:
    """(start, end) of what writes no note, from ``start``, in order and apart: every figure, table
    and abstract (nested ones inside the outer), every argument of a title page command."""
    spans, depth, opened = [], 0, 0
    for m in _FLOAT.finditer(text, start):
        if m.group(1) == "begin":
            opened = m.start() if depth == 0 else opened
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append((opened, m.end()))
    if depth:
        spans.append((opened, len(text)))
    for m in _FRONT_MATTER.finditer(text, start):
        end = group_end(text, m.end())
        spans.append((m.start(), end if end > 0 else m.end()))
    merged: list[tuple[int, int]] = []
    for span in sorted(spans):
        if merged and span[0] < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], span[1]))
        else:
            merged.append(span)
    return merged


def notes_as_cites(text: str) -> tuple[str, dict[str, Note]]:
    """The text as BibTeX sees its citations when footnotes are entries: each footnote mark made
    a ``\\cite{NoteN}``, each footnote's text taken out; and the notes written, by key (the first
    text of a number kept, as BibTeX keeps the first entry of a key). Footnotes are read from
    ``\\begin{document}`` on (a ``\\footnote{#1}`` of a definition is no note)."""
    begin = _BEGIN_DOCUMENT.search(text)
    start = begin.end() if begin else 0
    skipped = iter(_without_notes(text, start))
    span = next(skipped, None)
    out, pos, counter = [text[:start]], start, 0
    notes: dict[str, Note] = {}
    for m in _FOOTNOTE.finditer(text, start):
        while span is not None and span[1] <= m.start():
            span = next(skipped, None)
        if m.start() < pos or (span is not None and span[0] <= m.start()):
            continue  # inside a note already taken, a float or a title page command
        kind, number = m.group(1), m.group(2)
        if number is None and kind != "text":
            counter += 1
        key = f"Note{number if number is not None else counter}"
        out.append(text[pos:m.start()])
        pos = m.end()
        if kind != "mark":
            end = group_end(text, m.end()) if text[m.end():m.end() + 1] == "{" else -1
            if end < 0:
                continue
            notes.setdefault(key, Note(key, text[m.end() + 1:end - 1]))
            pos = end
        if kind != "text":
            out.append(f"\\cite{{{key}}}")
    return "".join(out) + text[pos:], notes


def cited_with_notes(text: str) -> tuple[list[tuple[list[str], bool]], dict[str, Note]]:
    """``cited_lists`` of a paper whose footnotes are entries, and its notes by key: a mark cites
    its note where it stands; the citations inside the notes' texts follow the text's own, in the
    order the notes are first cited (BibTeX matches ``\\cite{note1}`` to ``Note1``)."""
    body, notes = notes_as_cites(typeset_text(text))
    lists = cited_lists(text, body)
    folded = {key.lower(): note for key, note in notes.items()}
    cited = dict.fromkeys(folded[k.lower()] for keys, _ in lists for k in keys if k.lower() in folded)
    if any("\\" in note.body for note in cited):
        lists = cited_lists(text, body + "".join("\n" + note.body for note in cited))
    return lists, notes
