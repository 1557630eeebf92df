"""Which bibliography of a source tree is the paper's, and its entries as references.

The rule, first that applies wins: (1) a ``thebibliography`` inside the main file once its
``\\input``s are in place (inline, or a ``.bbl`` it inputs); (2) the ``.bbl`` named after the main
file (what arXiv's compiler uses: it never runs BibTeX), else the only ``.bbl``, else the first
by name; (3) the ``.bib`` files the main file names, entries in order of first citation (all,
file order, with ``\\nocite{*}`` or when nothing is cited); (4) with no main file: any ``.bbl``,
then every ``.bib``, then any ``.tex`` with an inline list."""
from __future__ import annotations

import bisect
import posixpath
import re

from papers.bibitems import Bibitem, bibliography_items
from papers.bibtex import BibEntry, parse_bib
from papers.macros import Expander, definitions
from papers.model import ExtractedReference, PaperLimits, PaperReject
from papers.render import UNSORTED_STYLES, fields_text, render, sort_key
from papers.suffixes import KINDS
from papers.text import latex_to_text
from papers.tree import Expanded, bib_names, cited_keys, expand, main_files, newline_offsets, strip_comments_keep_lines

_STYLE = re.compile(r"\\bibliographystyle\s*\{([^{}]*)\}")



def kind_of(member: str) -> str:
    return KINDS.get(posixpath.splitext(member)[1].lower(), "tex")


class Found:
    """What a tree gave: references, rejects and the rule that chose them; ``macros`` expands
    the author's macros and the journal abbreviations in entries."""

    def __init__(self, macros: Expander | None = None) -> None:
        self.references: list[ExtractedReference] = []
        self.rejects: list[PaperReject] = []
        self.rule = ""
        self.macros = macros or Expander({})

    def macros_fields(self, entry: BibEntry) -> dict[str, str]:
        return {k: self.macros.expand(v) for k, v in entry.fields.items()}


def choose(file: str, members: dict[str, str], source: str | None, limits: PaperLimits) -> Found:
    """The tree's bibliography by the module's rule; ``source`` None: each member's own kind."""
    clean = {n: strip_comments_keep_lines(t) if kind_of(n) != "bib" else t for n, t in members.items()}
    mains = main_files(clean)
    if mains:
        expanded = expand(file, clean, mains[0], limits)
        found = Found(Expander(definitions(expanded.text)))
        found.rejects += expanded.rejects
        if _inline(found, expanded, source) or _bbl(found, clean, mains[0], source) or \
                _bib(found, file, clean, expanded, source):
            found.rule = f"main file {mains[0]}: {found.rule}"
            return found
        found.rule = f"main file {mains[0]}: no bibliography"
        return found
    found = Found()
    for name in sorted(clean, key=lambda n: (kind_of(n) != "bbl", kind_of(n) != "bib", n)):
        if kind_of(name) == "bib":
            _bib_entries(found, file, clean, sorted(n for n in clean if kind_of(n) == "bib"), None, source)
        else:
            _items(found, bibliography_items(clean[name]), Expanded(clean[name], [(0, name, 0)], clean), source)
        if found.references:
            found.rule = f"no main file: {found.rule}"
            return found
    return found


def _inline(found: Found, expanded: Expanded, source: str | None) -> bool:
    if "thebibliography" not in expanded.text:
        return False
    _items(found, bibliography_items(expanded.text), expanded, source)
    if found.references:
        members = sorted({r.member or "" for r in found.references})
        found.rule = f"thebibliography in {', '.join(members)}"
    return bool(found.references)


def _items(found: Found, items: list[Bibitem], expanded: Expanded, source: str | None) -> None:
    for item in items:
        member, line = expanded.where(item.offset)
        fields = {"key": item.key} if item.key else {}
        found.references.append(ExtractedReference(len(found.references) + 1,
                                                   latex_to_text(found.macros.expand(item.body)),
                                                   source or kind_of(member), member, kind_of(member),
                                                   item.key, line, fields))
    if found.references and not found.rule:
        found.rule = f"\\bibitem entries of {found.references[0].member}"


def _bbl(found: Found, members: dict[str, str], main: str, source: str | None) -> bool:
    bbls = sorted(n for n in members if kind_of(n) == "bbl")
    if not bbls:
        return False
    named = posixpath.splitext(main)[0] + ".bbl"
    chosen = named if named in members else bbls[0]
    why = "named after the main file" if chosen == named else "the only .bbl" if len(bbls) == 1 else \
        f"first of {len(bbls)} .bbl files by name, none named after the main file"
    _items(found, bibliography_items(members[chosen]), Expanded(members[chosen], [(0, chosen, 0)], members), source)
    found.rule = f"{chosen} ({why}; a .bbl wins over .bib: arXiv compiles with the .bbl)"
    return bool(found.references)


def _bib(found: Found, file: str, members: dict[str, str], expanded: Expanded, source: str | None) -> bool:
    named = [n for n in bib_names(expanded.text) if n in members]
    bibs = named or sorted(n for n in members if kind_of(n) == "bib")
    if not bibs:
        return False
    keys, every = cited_keys(expanded.text)
    style = _STYLE.search(expanded.text)
    _bib_entries(found, file, members, bibs, None if every or not keys else keys, source,
                 style.group(1).strip() if style else None)
    return bool(found.references)


def _bib_entries(found: Found, file: str, members: dict[str, str], bibs: list[str], keys: list[str] | None,
                 source: str | None, style: str | None = None) -> None:
    """Entries of ``bibs`` in the order the paper lists them: all (in file order) or the cited
    ones (in order of first citation), then sorted as a sorting ``style`` sorts. An entry that
    cannot be read, or a key cited but in no ``.bib``, is a reject holding its place."""
    entries = _wanted(bibs, members, keys)
    prepared = {id(e): (f, fields_text(f)) for _, e, _ in entries if e is not None and not e.error
                for f in [found.macros_fields(e)]}
    sort = style is not None and style.lower() not in UNSORTED_STYLES
    if sort:
        entries.sort(key=lambda item: sort_key(*prepared[id(item[1])]) if id(item[1]) in prepared
                     else ("~", "", item[2]))
    newlines = {name: newline_offsets(members[name]) for name in bibs}
    for position, (name, entry, key) in enumerate(entries, start=1):
        if entry is None:
            found.rejects.append(PaperReject(file, None, "cited_key_missing",
                                             f"reference {position}: \\cite{{{key}}} is in no .bib file of the paper"))
            continue
        line = bisect.bisect_left(newlines[name], entry.offset) + 1
        if entry.error:
            found.rejects.append(PaperReject(file, name, "bad_bibtex", f"reference {position}: {entry.error}", line))
            continue
        fields, text = prepared[id(entry)]
        found.references.append(ExtractedReference(position, render(fields, text), source or "bib", name, "bib",
                                                   entry.key, line, text))
    order = "cited entries in order of first citation" if keys is not None else "every entry in file order"
    found.rule = f"{', '.join(bibs)} ({order}{f', sorted as {style} sorts' if sort else ''})"


def _wanted(bibs: list[str], members: dict[str, str], keys: list[str] | None) -> list[tuple[str, BibEntry | None, str]]:
    """(file, entry or None when missing, key) of every entry the list holds."""
    entries: list[tuple[str, BibEntry | None, str]] = [(n, e, e.key or "") for n in bibs for e in parse_bib(members[n])]
    if keys is None:
        return entries
    by_key: dict[str, tuple[str, BibEntry | None, str]] = {}
    for item in entries:
        by_key.setdefault(item[2].lower(), item)
    return [by_key.get(k.lower(), ("", None, k)) for k in keys]
