"""A biblatex ``.bbl`` (what biber writes) read entry by entry: ``\\entry{key}{type}{options}``
... ``\\endentry``, its ``\\name`` lists (biber's ``family=``/``given=`` form and the older
positional one), ``\\list``s, ``\\field``s and ``\\verb`` fields (``doi``, ``eprint``, ``url``),
turned into BibTeX-like fields (``author = "Family, Given and ..."``) so one renderer writes both.
The entries are in the order biber wrote them: the order of the printed list."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from papers.braces import group_end

_ENTRY = re.compile(r"\\entry\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_END = re.compile(r"\\endentry\b")
_REFSECTION = re.compile(r"\\refsection\s*\{")
_COMMAND = re.compile(r"\\(name|list|field|strng|range|verb|keyw|warn|true|false|set|inset|key)\b\s*")
_VERB_LINE = re.compile(r"[ \t]*\\verb[ \t]?([^\n]*)\n")
_ENDVERB = re.compile(r"[ \t]*\\endverb")
_PART = re.compile(r"(family|given|prefix|suffix)\s*=\s*")
# biblatex's punctuation macros, as the default styles print them
_PUNCT = {"bibinitperiod": ".", "bibinitdelim": " ", "bibinithyphendelim": ".-", "bibnamedelima": " ",
          "bibnamedelimb": " ", "bibnamedelimc": " ", "bibnamedelimd": " ", "bibnamedelimi": " ",
          "bibrangedash": "--", "bibdatedash": "--", "bibrangessep": ", ", "mkbibordinal": ""}
_PUNCT_RE = re.compile(r"\\(" + "|".join(_PUNCT) + r")(?![A-Za-z@])\s?(?:\{\})?")
# biblatex field names -> the BibTeX names the renderer and the parser know
_RENAMED = {"journaltitle": "journal", "location": "address", "issue": "number", "eprintclass": "primaryclass",
            "eprinttype": "archiveprefix"}
_SKIPPED = re.compile(r"^(?:label|sort|extra|uniq|full|namehash|bibnamehash|authorbibnamehash|authornamehash|"
                      r"editorbibnamehash|editornamehash|urlraw|file|abstract|keywords|crossref|xref|entryset)")


@dataclass(slots=True)
class BiblatexEntry:
    offset: int
    key: str
    kind: str
    fields: dict[str, str] = field(default_factory=dict)


def is_biblatex(text: str) -> bool:
    return _ENTRY.search(text) is not None and "\\endentry" in text


def _group(text: str, i: int) -> int:
    return group_end(text, i)


def _groups(text: str, i: int, count: int) -> tuple[list[str], int]:
    """``count`` brace groups from ``i`` on (spaces and ``%`` line ends between them skipped)."""
    found = []
    for _ in range(count):
        while i < len(text) and text[i] in " \t\r\n%":
            i += 1
        end = _group(text, i) if text[i:i + 1] == "{" else -1
        if end < 0:
            break
        found.append(text[i + 1:end - 1])
        i = end
    return found, i


def _one_name(group: str) -> str:
    """One name of a ``\\name`` list, BibTeX style: ``prefix Family, Suffix, Given``."""
    inner, _ = _groups(group, 0, 9)
    parts: dict[str, str] = {}
    if len(inner) >= 2 and _PART.search(inner[1]):  # {{options}{family={..}, given={..}, ...}}
        for m in _PART.finditer(inner[1]):
            value, _ = _groups(inner[1], m.end(), 1)
            parts[m.group(1)] = value[0] if value else ""
    elif len(inner) >= 4:  # {{options}{Family}{F.}{Given}{G.}{prefix}{p.}{suffix}{s.}}
        parts = {"family": inner[1], "given": inner[3], "prefix": inner[5] if len(inner) > 5 else "",
                 "suffix": inner[7] if len(inner) > 7 else ""}
    family = " ".join(p for p in (parts.get("prefix", ""), parts.get("family", "")) if p)
    rest = [p for p in (parts.get("suffix", ""), parts.get("given", "")) if p]
    return ", ".join([family, *rest]) if family else ", ".join(rest)


def _names(text: str, i: int) -> tuple[str, str, int]:
    """A ``\\name{role}{count}{options}{names}`` at ``i``: (role, ``A and B``, end)."""
    head, i = _groups(text, i, 4)
    if len(head) < 4:
        return "", "", i
    names, pos = [], 0
    body = head[3]
    while (start := body.find("{", pos)) >= 0:
        end = _group(body, start)
        if end < 0:
            break
        name = _one_name(body[start + 1:end - 1])
        if name:
            names.append(name)
        pos = end
    return head[0], " and ".join(names), i


def _verb(text: str, i: int) -> tuple[str, str, int]:
    """``\\verb{name}`` then ``\\verb value`` lines until ``\\endverb``: (name, value, end)."""
    head, i = _groups(text, i, 1)
    i = text.find("\n", i) + 1 or len(text)
    lines = []
    while (m := _VERB_LINE.match(text, i)) and not _ENDVERB.match(text, i):
        lines.append(m.group(1).strip())
        i = m.end()
    end = _ENDVERB.match(text, i)
    return (head[0] if head else ""), "".join(lines), end.end() if end else i


def _entry_fields(body: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    pos = 0
    while (m := _COMMAND.search(body, pos)) is not None:
        kind, i = m.group(1), m.end()
        if kind == "name":
            name, value, pos = _names(body, i)
        elif kind == "verb":
            name, value, pos = _verb(body, i)
        elif kind == "list":
            parts, pos = _groups(body, i, 3)
            name = parts[0] if parts else ""
            items, _ = _groups(parts[2], 0, 99) if len(parts) == 3 else ([], 0)
            value = " and ".join(items) if name == "language" else ", ".join(items)
        elif kind in ("field", "strng", "range"):
            parts, pos = _groups(body, i, 2)
            name, value = (parts[0], parts[1]) if len(parts) == 2 else ("", "")
        else:
            name, value, pos = "", "", i
        name = name.lower()
        if name and value and not _SKIPPED.match(name) and kind != "range":
            fields.setdefault(_RENAMED.get(name, name), value)
    return fields


def _plain(value: str) -> str:
    if "\\bib" in value or "\\mkbib" in value:
        value = _PUNCT_RE.sub(lambda m: _PUNCT[m.group(1)], value)
    return value


def biblatex_entries(text: str) -> list[BiblatexEntry]:
    """Every entry of a biblatex ``.bbl`` in file order, each key once per reference section
    (``\\refsection{n}``): each section is a list of its own, where a second sorting list repeating
    an entry adds nothing."""
    entries: list[BiblatexEntry] = []
    sections = [m.start() for m in _REFSECTION.finditer(text)]
    seen: set[tuple[int, str]] = set()
    for m in _ENTRY.finditer(text):
        end = _END.search(text, m.end())
        key = (bisect.bisect_right(sections, m.start()), m.group(1).strip())
        if key in seen or m.group(2).strip().lower() == "set":
            continue
        seen.add(key)
        body = text[m.end():end.start() if end else len(text)]
        fields = {k: _plain(v) for k, v in _entry_fields(body).items()}
        if "subtitle" in fields and "title" in fields:
            fields["title"] = f"{fields['title']}: {fields.pop('subtitle')}"
        if "pages" not in fields and "eid" in fields:
            fields["pages"] = fields["eid"]
        entries.append(BiblatexEntry(m.start(), key[1], m.group(2).strip().lower(), fields))
    return entries
