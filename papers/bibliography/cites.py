"""Which entries a paper cites, as BibTeX and biber see them: every citation command of LaTeX,
natbib and biblatex (``\\cite``, ``\\citet``, ``\\Citep*``, ``\\citealp``, ``\\textcite``,
``\\parencite``, ``\\autocite``, ``\\footcite``, ``\\smartcite``, ``\\citeauthor``, ``\\fullcite``,
``\\nocite``, the multi-citations ``\\cites(..)(..)[..]{a}[..]{b}``...) with their starred and
optional-argument forms, and the commands the paper defines around one (``\\newcommand{\\rf}[1]
{\\citep{#1}}``), gathered per printed list: biblatex prints one per reference section
(``refsection``, ``\\newrefsection``) that has a ``\\printbibliography``. The text given has its
comments stripped already; ``\\iffalse`` blocks and ``comment`` environments are left out here."""
from __future__ import annotations

import bisect
import re

from papers.macros import definitions

# a control word holding "cite": a citation command unless it sets citations up
_COMMAND = re.compile(r"\\([A-Za-z]*(?:cite|Cite)[A-Za-z]*)(?![A-Za-z@])\*?")
_NOT_CITING = re.compile(r"(?i)^(?:set|def|declare|provide|new|renew|bibliography)|(?:font|punct|style|setup|reset|"
                         r"true|false|tracker|text|delim|left|right|mid|dash|prefix|form|label|color)$")
_KEY_IN_BODY = re.compile(r"\{[^{}]*#(\d)[^{}]*\}")


# the groups after a citation command, each bounded and scanned by the regex engine: an optional
# ``[..]`` or ``(..)`` (a note, which may hold another citation), a ``{keys}`` group (keys hold no
# backslash or brace), so a text of unclosed commands costs linear time
_OPTIONAL = re.compile(r"\s*(?:\[[^\[\]]{0,400}\]|\([^()]{0,400}\))")
_KEYS = re.compile(r"\s*\{([^{}\\]{0,4000})\}")
_ANY_ARGUMENT = re.compile(r"\s*\{((?:[^{}]|\{[^{}]{0,400}\}){0,400})\}")


def _arguments(text: str, i: int, multi: bool) -> list[str]:
    """The keys groups after a command at ``i`` (optional ``[..]`` and ``(..)`` skipped): the
    first one, or every one of a multi-citation."""
    keys: list[str] = []
    while True:
        optional = _OPTIONAL.match(text, i)
        if optional:
            i = optional.end()
            continue
        group = _KEYS.match(text, i)
        if group is None:
            return keys
        keys.append(group.group(1))
        if not multi:
            return keys
        i = group.end()


def _swallowed(text: str, defined: dict[str, tuple[int, str]]) -> str:
    """The text without the arguments of the paper's one-argument macros that never show it
    (``\\newcommand{\\todo}[1]{}``, ``{\\iffalse #1\\fi}``): citations in a hidden note do not count."""
    names = [name for name, (nargs, body) in defined.items() if nargs == 1 and "#1" not in _typeset(body)]
    if not names:
        return text
    uses = re.compile(r"\\(?:" + "|".join(map(re.escape, names)) + r")(?![A-Za-z@])\*?")
    out, pos = [], 0
    for m in uses.finditer(text):
        if m.start() < pos:
            continue
        arg = _ANY_ARGUMENT.match(text, m.end())
        if arg is not None:
            out.append(text[pos:m.start()])
            pos = arg.end()
    return "".join(out) + text[pos:]


def _wrappers(defined: dict[str, tuple[int, str]]) -> dict[str, int]:
    """``name -> argument number`` of the macros the paper defines around a citation command."""
    found = {}
    for name, (nargs, body) in defined.items():
        cite = _COMMAND.search(body)
        if nargs and cite and not _NOT_CITING.search(cite.group(1)):
            arg = _KEY_IN_BODY.search(body, cite.end())
            if arg and int(arg.group(1)) <= nargs:
                found[name] = int(arg.group(1))
    return found


def _wrapped_keys(text: str, wrappers: dict[str, int]) -> list[tuple[int, str]]:
    """(offset, key argument) of every use of a wrapper macro."""
    if not wrappers:
        return []
    uses = re.compile(r"\\(" + "|".join(map(re.escape, wrappers)) + r")(?![A-Za-z@])\*?")
    found = []
    for m in uses.finditer(text):
        args, i = [], m.end()
        for _ in range(wrappers[m.group(1)]):
            arg = _ANY_ARGUMENT.match(text, i)
            if arg is None:
                break
            args.append(arg.group(1))
            i = arg.end()
        if len(args) == wrappers[m.group(1)]:
            found.append((m.start(), args[-1]))
    return found


_SKIPPED_BLOCK = re.compile(r"\\begin\s*\{comment\}.*?\\end\s*\{comment\}|\\iffalse(?![A-Za-z@])", re.DOTALL)
_LET_BEFORE = re.compile(r"\\(?:let|def|newcommand|renewcommand|providecommand)\b[^\n]*$")
_IF_OR_FI = re.compile(r"\\(?:if[A-Za-z@]*|fi)(?![A-Za-z@])")


def _typeset(text: str) -> str:
    """The text without what LaTeX never typesets: ``comment`` environments and ``\\iffalse``
    ... ``\\fi`` (nested conditionals counted), where drafts park citations."""
    if "\\iffalse" not in text and "{comment}" not in text:
        return text
    out, pos = [], 0
    while (m := _SKIPPED_BLOCK.search(text, pos)) is not None:
        end = m.end() if not m.group().startswith("\\iffalse") else _fi_after(text, m)
        if end < 0:  # ``\\let\\ifdraft\\iffalse``, or no matching ``\\fi``: not a block
            out.append(text[pos:m.end()])
        else:
            out.append(text[pos:m.start()])
        pos = m.end() if end < 0 else end
    return "".join(out) + text[pos:]


def _fi_after(text: str, m: re.Match[str]) -> int:
    """Where the ``\\iffalse`` at ``m`` ends with its matching ``\\fi``; -1 when it is the value of
    a ``\\let`` or never ends."""
    line_start = text.rfind("\n", 0, m.start()) + 1
    if _LET_BEFORE.search(text, line_start, m.start()):
        return -1
    depth = 1
    for token in _IF_OR_FI.finditer(text, m.end()):
        depth += -1 if token.group() == "\\fi" else 1
        if depth == 0:
            return token.end()
    return -1


_SECTIONING = re.compile(r"\\(?:(begin|end)\s*\{refsection\}|(newrefsection|printbibliography|bibbysection)"
                         r"(?![A-Za-z@]))")


def printed_sections(text: str) -> list[list[tuple[int, int]]]:
    """The spans of ``text`` making each reference section whose list is printed, in order. With
    no ``refsection`` the whole text is one list (BibTeX's ``\\bibliography``). Else text outside
    ``refsection`` environments is section 0 (it resumes after ``\\end{refsection}``),
    ``\\newrefsection`` starts a section running to the next, and a section is printed by a
    ``\\printbibliography`` inside it, or by ``\\bibbysection``."""
    marks = list(_SECTIONING.finditer(text))
    if not any(m.group(1) or m.group(2) == "newrefsection" for m in marks):
        return [[(0, len(text))]]
    sections: list[list[tuple[int, int]]] = [[]]
    printed, every, current, pos = [False], False, 0, 0
    for m in marks:
        if m.group(2) in ("printbibliography", "bibbysection"):
            printed[current] = printed[current] or m.group(2) == "printbibliography"
            every = every or m.group(2) == "bibbysection"
            continue
        sections[current].append((pos, m.start()))
        pos = m.end()
        current = 0 if m.group(1) == "end" else len(sections)
        if current:
            sections.append([])
            printed.append(False)
    sections[current].append((pos, len(text)))
    return [spans for spans, shown in zip(sections, printed) if shown or every]


def typeset_text(text: str) -> str:
    """The text LaTeX typesets, as citations are read from it: without ``comment`` environments,
    ``\\iffalse`` blocks and the arguments of the paper's macros that never show them."""
    return _swallowed(_typeset(text), definitions(text))


def cited_lists(text: str, body: str | None = None) -> list[tuple[list[str], bool]]:
    """For each printed list (``printed_sections``): its citation keys in order of first citation,
    and whether ``\\nocite{*}`` asks for all. A key cited in two sections is in both lists.
    ``body``: the text to read the citations of when the caller has made it (``typeset_text`` of
    ``text``, rewritten), the paper's macros still read from ``text``."""
    defined = definitions(text)
    if body is None:  # a definition's ``\\citep{#1}`` gives no key: keys with ``#`` go
        body = _swallowed(_typeset(text), defined)
    uses: list[tuple[int, str]] = []
    for m in _COMMAND.finditer(body):
        if _NOT_CITING.search(m.group(1)):
            continue
        args = _arguments(body, m.end(), m.group(1).endswith("cites"))
        uses += [(m.start(), a) for a in args]
    uses += _wrapped_keys(body, _wrappers(defined))
    spans = sorted((start, end, n) for n, section in enumerate(printed_sections(body)) for start, end in section)
    starts = [start for start, _, _ in spans]
    parts: list[list[tuple[int, str]]] = [[] for _ in range(1 + max((n for _, _, n in spans), default=-1))]
    for use in sorted(uses):
        at = bisect.bisect_right(starts, use[0]) - 1
        if at >= 0 and use[0] < spans[at][1]:
            parts[spans[at][2]].append(use)
    return [_keys(part) for part in parts]


def _keys(uses: list[tuple[int, str]]) -> tuple[list[str], bool]:
    """The keys of sorted (offset, keys argument) uses, each once, and whether one is ``*``."""
    keys: dict[str, None] = {}
    every = False
    for _, arg in uses:
        for key in arg.split(","):
            key = key.strip()
            if key == "*":
                every = True
            elif key and "\\" not in key and "#" not in key:
                keys.setdefault(key)
    return list(keys), every
