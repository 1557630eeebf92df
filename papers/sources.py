"""Which bibliography of a source tree is the paper's, and its entries as references.

The rule, first that applies wins: (1) a ``thebibliography`` inside the main file once its
``\\input``s are in place (inline, or a ``.bbl`` it inputs); (2) the ``.bbl`` named after the main
file (what arXiv's compiler uses: it never runs BibTeX), else the only ``.bbl``, else the first
by name, its ``\\bibitem``s or, from biblatex, its ``\\entry`` records; (3) the ``.bib`` files
the main file names, the entries cited (by any citation command of LaTeX, natbib or biblatex) in
order of first citation, then with ``\\nocite{*}`` every other in file order, one list per printed
reference section (biblatex), under the keys as first cited, a REVTeX paper's footnotes among
them as entries ``NoteN`` (``notes``); a paper citing nothing lists nothing
(BibTeX prints no entry) and says so; (4) with no main file: any ``.bbl``,
then every ``.bib``, then any ``.tex`` with an inline list. Entries that repeat the authors
before as a dash get them back, and identifiers held in link targets or fields are written
into the string (``idents``, ``repeats``)."""
from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass, field

from papers.bibliography.bibitems import Bibitem, bibinfo_fields, bibliography_items
from papers.bibliography.biblatex import biblatex_entries, is_biblatex
from papers.bibliography.bibtex import BibEntry, iter_bib
from papers.bibliography.cites import cited_lists
from papers.bibliography.idents import with_identifiers
from papers.bibliography.notes import Note, cited_with_notes, footnotes_in_bibliography
from papers.bibliography.render import fields_text, keeps_citation_order, render, sort_key
from papers.bibliography.repeats import author_block, fill_repeated_authors, starts_with_dash
from papers.latex_text import latex_to_text
from papers.macros import MAX_EXPANDED_ENTRY, Expander, definitions
from papers.paper_model import ExtractedReference, PaperLimits, PaperReject
from papers.suffixes import KINDS
from papers.titles import tex_title
from papers.tree import Expanded, bib_names, expand, main_files, newline_offsets, strip_comments_keep_lines

_STYLE = re.compile(r"\\bibliographystyle\s*\{([^{}]*)\}")


def kind_of(member: str) -> str:
    return KINDS.get(posixpath.splitext(member)[1].lower(), "tex")


class Found:
    """What a tree gave: references, rejects and the rule that chose them; ``macros`` expands
    the author's macros and the journal abbreviations in entries."""

    def __init__(self, limits: PaperLimits, macros: Expander | None = None) -> None:
        self.references: list[ExtractedReference] = []
        self.rejects: list[PaperReject] = []
        self.rule = ""
        self.title: str | None = None  # the main file's \title, when it has one
        self.limits = limits
        self.macros = macros or Expander({})
        self._latex = ""  # the LaTeX of the last entry added (its authors are read when a dash follows)
        self._filled: str | None = None  # the authors filled into the last entry added

    def macros_fields(self, fields: dict[str, str]) -> dict[str, str]:
        return {k: self.macros.expand(v) for k, v in fields.items()}

    def too_many(self, file: str, member: str | None, count: int) -> bool:
        """Whether a list of ``count`` entries passes the paper's bound (then a reject says so)."""
        if count <= self.limits.max_references:
            return False
        self.rejects.append(PaperReject(file, member, "too_many_references", "more than "
                                        f"{self.limits.max_references:,} bibliography entries "
                                        "(papers.max_references): not read"))
        return True

    def add(self, order: int, raw: str, where: tuple[str, str, str, int | None], key: str | None,
            fields: dict[str, str], latex: str = "") -> None:
        """One reference: the identifiers its entry holds written into the string when it does not
        show them, an author dash filled from the entry before (``where``: source, member, kind,
        line)."""
        raw, ids = with_identifiers(raw, latex, fields)
        fields = {**fields, **{k: v for k, v in ids.items() if k not in fields}}
        filled = None
        if self.references and starts_with_dash(raw):
            before = self.references[-1]
            block = self._filled or (author_block(self._latex) if self._latex else None)
            filled = fill_repeated_authors(raw, before.raw, before.fields, block)
        self._latex, self._filled = latex, None
        if filled is not None:
            fields["as_printed"] = raw
            raw, self._filled = filled
        source, member, kind, line = where
        self.references.append(ExtractedReference(order, raw, source, member, kind, key, line, fields))


# rejects that end the search for a document's list: the list is there, but too long to read
_NOT_MISSING = frozenset({"too_many_references", "expansion_budget"})


def choose(file: str, members: dict[str, str], source: str | None, limits: PaperLimits) -> Found:
    """The tree's bibliography by the module's rule; ``source`` None: each member's own kind."""
    clean = {n: strip_comments_keep_lines(t) if kind_of(n) != "bib" else t for n, t in members.items()}
    mains = main_files(clean)
    if mains:
        first = _from_main(file, clean, mains[0], source, limits)
        # a tarball of two documents (a paper and its supplement): when the one ranked first gives
        # no list (it cites nothing, or prints none), the next one's is the paper's
        for other in mains[1:]:
            if first.references or any(r.code in _NOT_MISSING for r in first.rejects):
                break
            found = _from_main(file, clean, other, source, limits)
            if found.references:
                found.rule += f" ({mains[0]} gives no list)"
                return found
        return first
    found = Found(limits)
    for name in sorted(clean, key=lambda n: (kind_of(n) != "bbl", kind_of(n) != "bib", n)):
        if kind_of(name) == "bib":
            bibs = sorted(n for n in clean if kind_of(n) == "bib")
            _bib_entries(found, file, clean, Database.read(bibs, clean, None, False, limits.max_references), None,
                         source)
        else:
            _list_items(found, file, name, clean, source)
        if found.references or any(r.code == "too_many_references" for r in found.rejects):
            found.rule = f"no main file: {found.rule}"
            return found
    return found


def _from_main(file: str, clean: dict[str, str], main: str, source: str | None, limits: PaperLimits) -> Found:
    """The bibliography of the document ``main`` (its inline list, its ``.bbl``, its ``.bib``)."""
    expanded = expand(file, clean, main, limits)
    found = Found(limits, Expander(definitions(expanded.text)))
    found.rejects += expanded.rejects
    if expanded.over is not None:
        found.rule = f"main file {main}: not read (expansion budget)"
        return found
    found.title = tex_title(expanded.text, found.macros) or _member_title(clean, main)
    if _inline(found, file, expanded, source) or _bbl(found, file, clean, main, source) or \
            _bib(found, file, clean, expanded, source):
        found.rule = f"main file {main}: {found.rule}"
    else:
        found.rule = f"main file {main}: no bibliography"
    if found.macros.overflowed:
        found.rejects.append(PaperReject(file, main, "macro_expansion", "the paper's macros multiply: "
                                         f"{found.macros.overflowed} entries passed {MAX_EXPANDED_ENTRY:,} "
                                         "characters being expanded and keep their macros unexpanded"))
    return found


def _member_title(members: dict[str, str], main: str) -> str | None:
    """A ``\\title`` the main file's inputs do not bring (a class that reads ``metadata.tex`` itself),
    from another ``.tex`` member with its own macros."""
    for name in sorted(n for n in members if n != main and kind_of(n) == "tex"):
        text = members[name]
        if "\\title" in text or "title{" in text:
            title = tex_title(text, Expander(definitions(text)))
            if title:
                return title
    return None


def _inline(found: Found, file: str, expanded: Expanded, source: str | None) -> bool:
    if "thebibliography" not in expanded.text:
        return False
    _items(found, file, bibliography_items(expanded.text, found.limits.max_references), expanded, source)
    if found.references:
        members = sorted({r.member or "" for r in found.references})
        found.rule = f"thebibliography in {', '.join(members)}"
    return bool(found.references)


def _items(found: Found, file: str, items: list[Bibitem], expanded: Expanded, source: str | None) -> None:
    if not items or found.too_many(file, expanded.where(items[0].offset)[0], len(items)):
        return
    for item in items:
        member, line = expanded.where(item.offset)
        body = found.macros.expand(item.body)
        # the entry's own fields; its citation key, never printed, is the reference's ``key`` only
        fields = {k: latex_to_text(v) for k, v in bibinfo_fields(body).items()}
        found.add(len(found.references) + 1, latex_to_text(body), (source or kind_of(member), member,
                  kind_of(member), line), item.key, fields, body)
    if found.references and not found.rule:
        found.rule = f"\\bibitem entries of {found.references[0].member}"


def _biblatex(found: Found, file: str, name: str, text: str, source: str | None) -> None:
    """The entries of a biblatex ``.bbl``, rendered as the BibTeX entries are."""
    entries = biblatex_entries(text)
    if not entries or found.too_many(file, name, len(entries)):
        return
    newlines = newline_offsets(text)
    for entry in entries:
        fields = found.macros_fields(entry.fields)
        shown = fields_text(fields)
        found.add(len(found.references) + 1, render(fields, shown), (source or "bbl", name, "bbl",
                  bisect.bisect_left(newlines, entry.offset) + 1), entry.key, shown)
    found.rule = f"biblatex \\entry records of {name}"


def _list_items(found: Found, file: str, name: str, members: dict[str, str], source: str | None) -> None:
    """The entries of one member read alone: biblatex's ``\\entry`` records or ``\\bibitem``s."""
    text = members[name]
    if is_biblatex(text):
        _biblatex(found, file, name, text, source)
    else:
        _items(found, file, bibliography_items(text, found.limits.max_references),
               Expanded(text, [(0, name, 0)], members), source)


def _bbl(found: Found, file: str, members: dict[str, str], main: str, source: str | None) -> bool:
    bbls = sorted(n for n in members if kind_of(n) == "bbl")
    if not bbls:
        return False
    named = posixpath.splitext(main)[0] + ".bbl"
    chosen = named if named in members else bbls[0]
    why = "named after the main file" if chosen == named else "the only .bbl" if len(bbls) == 1 else \
        f"first of {len(bbls)} .bbl files by name, none named after the main file"
    text = members[chosen]
    _list_items(found, file, chosen, members, source)
    if not found.references:
        if not any(r.code == "too_many_references" for r in found.rejects):
            found.rejects.append(PaperReject(file, chosen, "bbl_unread", "the .bbl holds no \\bibitem and no biblatex "
                                             "\\entry: the bibliography is looked for elsewhere"))
        return False
    found.rule = f"{chosen} ({'biblatex entries, ' if is_biblatex(text) else ''}{why}; a .bbl wins over .bib: " \
        "arXiv compiles with the .bbl)"
    return True


def _bib(found: Found, file: str, members: dict[str, str], expanded: Expanded, source: str | None) -> bool:
    named = [n for n in dict.fromkeys(bib_names(expanded.text)) if n in members]
    bibs = named or sorted(n for n in members if kind_of(n) == "bib")
    if not bibs:
        return False
    style, exact = _list_style(expanded.text)
    notes: dict[str, Note] = {}
    if style is not None and style.startswith("biblatex") or not footnotes_in_bibliography(expanded.text):
        cited = cited_lists(expanded.text)
    else:
        cited, notes = cited_with_notes(expanded.text)
    lists = [(_first_spellings(keys, exact), every) for keys, every in cited]
    if not any(keys or every for keys, every in lists):
        main = expanded.pieces[0][1] if expanded.pieces else None
        found.rejects.append(PaperReject(file, main, "no_citations", "the paper cites nothing (no \\cite, \\nocite or "
                                         "other citation command outside comments and \\iffalse"
                                         f"{'' if lists else ' in a reference section it prints'}): BibTeX lists no "
                                         f"entry of {', '.join(bibs)}"))
        return False
    wanted = None if any(every for _, every in lists) else {k for keys, _ in lists for k in keys}
    database = Database.read(bibs, members, wanted, exact, found.limits.max_references)
    database.add_notes(notes, expanded)
    total = 0
    for keys, every in lists:
        total += len(database.listed(keys, every))
        if found.too_many(file, bibs[0], total):
            return False
    position, rules = 1, []
    for keys, every in lists:  # one list per printed reference section, numbered on
        position = _bib_entries(found, file, members, database, keys, source, style, every, position)
        rules.append(found.rule)
    if len(lists) > 1:
        found.rule = f"{len(lists)} reference sections, one list each: " + "; ".join(rules)
    return bool(found.references)


def _first_spellings(keys: list[str], exact: bool) -> list[str]:
    """The keys as matched: BibTeX matches whatever their case and keeps the first citation's
    spelling (``exact`` False); biber matches them as they are."""
    if exact:
        return keys
    first: dict[str, str] = {}
    for key in keys:
        first.setdefault(key.lower(), key)
    return list(first.values())


def _bib_entries(found: Found, file: str, members: dict[str, str], database: Database, keys: list[str] | None,
                 source: str | None, style: str | None = None, every: bool = False, first: int = 1) -> int:
    """Entries of the ``database`` in the order a list shows them: all (in file order) or the cited
    ones (in order of first citation), then sorted as a sorting ``style`` sorts. An entry that
    cannot be read, or a key cited but in no ``.bib``, is a reject holding its place; one BibTeX
    reads despite a fault (its closing brace missing) is listed, and a reject names the fault.
    Places are numbered from ``first``; the number after the last is returned."""
    bibs = database.bibs
    entries = database.listed(keys, every)
    if found.too_many(file, bibs[0], len(entries)):
        return first
    prepared = {id(e): (f, fields_text(f)) for _, e, _ in entries if e is not None and not e.error
                for f in [found.macros_fields(e.fields)]}
    sort = style is not None and not keeps_citation_order(style)
    if sort:
        entries.sort(key=lambda item: sort_key(*prepared[id(item[1])]) if id(item[1]) in prepared
                     else ("~", "", item[2]))
    newlines = {name: newline_offsets(members[name]) for name in bibs}
    for position, (name, entry, key) in enumerate(entries, start=first):
        if entry is None:
            found.rejects.append(PaperReject(file, None, "cited_key_missing",
                                             f"reference {position}: \\cite{{{key}}} is in no .bib file of the paper"))
            continue
        if entry.kind == "footnote":  # a footnote's text, its link targets read as a \bibitem's are
            fields, text = prepared[id(entry)]
            found.add(position, render(fields, text), (source or "bib", name, kind_of(name), entry.offset or None),
                      key or None, text, fields["note"])
            continue
        line = bisect.bisect_left(newlines[name], entry.offset) + 1
        if entry.error:
            found.rejects.append(PaperReject(file, name, "bad_bibtex", f"reference {position}: {entry.error}", line))
            continue
        if entry.warning:
            found.rejects.append(PaperReject(file, name, "bibtex_unclosed", f"reference {position}: {entry.warning}",
                                             line))
        fields, text = prepared[id(entry)]
        found.add(position, render(fields, text), (source or "bib", name, "bib", line), key or None, text)
    order = "every entry in file order" if keys is None else "cited entries in order of first citation" + \
        (", then every other (\\nocite{*})" if every else "")
    found.rule = f"{', '.join(bibs)} ({order}{f', sorted as {style} sorts' if sort else ''})"
    return first + len(entries)


@dataclass(slots=True)
class Database:
    """The entries of a paper's ``.bib`` files (``bibs``, in the order the paper names them) that its
    lists may hold, read once for every list. Keys match whatever their case (BibTeX) unless
    ``exact`` (biber); the first entry of a key wins, as BibTeX and biber keep it."""

    bibs: list[str]
    exact: bool
    entries: list[tuple[str, BibEntry]]
    by_key: dict[str, tuple[str, BibEntry | None, str]] = field(default_factory=dict)

    def fold(self, key: str) -> str:
        return key if self.exact else key.lower()

    @classmethod
    def read(cls, bibs: list[str], members: dict[str, str], wanted: set[str] | None, exact: bool,
             limit: int | None = None) -> Database:
        """The entries of ``wanted`` keys (every entry with None) in file order; past ``limit`` entries
        of every one, one more and the files are read no further (the caller rejects the list)."""
        database = cls(bibs, exact, [])
        folded = None if wanted is None else {database.fold(k) for k in wanted}
        in_order = ((name, entry) for name in bibs for entry in iter_bib(members[name]))
        for name, entry in in_order:
            if folded is None or database.fold(entry.key or "") in folded:
                database.entries.append((name, entry))
            if limit is not None and folded is None and len(database.entries) > limit:
                break
        for name, entry in database.entries:
            database.by_key.setdefault(database.fold(entry.key or ""), (name, entry, entry.key or ""))
        return database

    def add_notes(self, notes: dict[str, Note], expanded: Expanded) -> None:
        """The paper's footnotes as entries ``@FOOTNOTE{NoteN, note=...}`` of a database named
        before its own (REVTeX's ``<job>Notes.bib``): a note's key wins over a ``.bib`` entry's.
        Each is placed at the member and line of its text (``offset`` holds the line)."""
        placed: dict[str, tuple[str, BibEntry | None, str]] = {}
        at = 0
        for key, note in notes.items():
            found = expanded.text.find(note.body, at) if note.body else -1
            member, line = expanded.where(found) if found >= 0 and expanded.pieces else ("", 0)
            at = found if found >= 0 else at
            entry = BibEntry(line, "footnote", key, {"key": key, "note": note.body})
            placed.setdefault(self.fold(key), (member or (self.bibs[0] if self.bibs else ""), entry, key))
        self.by_key = {**placed, **{k: v for k, v in self.by_key.items() if k not in placed}}

    def listed(self, keys: list[str] | None, every: bool = False) -> list[tuple[str, BibEntry | None, str]]:
        """(file, entry or None when missing, key) of every entry a list holds: all with ``keys``
        None, else the cited ones, then (``every``) the others in file order. A cited entry's key
        is the key as cited, as BibTeX writes ``\\bibitem{lin2020}`` for ``\\cite{lin2020}`` of the
        entry ``Lin2020``."""
        if keys is None:
            return [(name, entry, entry.key or "") for name, entry in self.entries]
        by_key = self.by_key
        cited = [(name, entry, k) for k in keys for name, entry, _ in [by_key.get(self.fold(k), ("", None, k))]]
        if every:
            seen = {self.fold(k) for k in keys}
            cited += [by_key[k] for k in by_key if k not in seen]
        return cited


_BIBLATEX = re.compile(r"\\usepackage\s*(?:\[([^\]]*)\])?\s*\{\s*biblatex\s*\}")
_OPTION = re.compile(r"\b(backend|style|bibstyle|sorting)\s*=\s*([\w-]+)")
# biblatex styles whose list keeps citation order (every other sorts by name, year, title)
BIBLATEX_UNSORTED = frozenset({"nature", "ieee", "phys", "science", "chem-acs", "chem-angew", "chem-biochem",
                               "chem-rsc", "nejm", "vancouver", "numeric-comp-none"})


def _list_style(text: str) -> tuple[str | None, bool]:
    """(the style the list is ordered by, whether keys match case-sensitively): BibTeX's
    ``\\bibliographystyle``, or biblatex's options (its ``sorting``, else its style's; biber,
    its default backend, matches keys exactly; ``backend=bibtex`` does not)."""
    blx = _BIBLATEX.search(text)
    if blx is None:
        style = _STYLE.search(text)
        return (style.group(1).strip() if style else None), False
    options: dict[str, str] = {m.group(1): m.group(2) for m in _OPTION.finditer(blx.group(1) or "")}
    exact = not options.get("backend", "biber").startswith("bibtex")
    sorting = options.get("sorting") or ("none" if (options.get("bibstyle") or options.get("style", "numeric"))
                                         in BIBLATEX_UNSORTED else "nty")
    return ("unsrt" if sorting == "none" else f"biblatex {sorting}"), exact
