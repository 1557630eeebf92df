"""A paper's source tree: its text members decoded, the main file found, and ``\\input`` /
``\\include`` followed inside the tree (depth-limited, loops and ``..`` refused) into one text
whose every offset maps back to its member and line."""
from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass, field

from papers.latex_text import strip_comments
from papers.paper_model import PaperLimits, PaperReject

_NEWLINE = re.compile("\n")
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 11, 12, 13))
_INPUT = re.compile(r"\\(?:input|include|subfile|InputIfFileExists)(?![A-Za-z@])\s*"
                    r"(?:\{\s*([^{}]*?)\s*\}|([^\s{}%\\]+))")
_DOCUMENT = re.compile(r"\\document(?:class|style)(?![A-Za-z])")
# names of a paper's companion documents, read only when the paper itself gives no list
_COMPANION = re.compile(r"(?i)(?:^|[^a-z])(?:supp|suppl|supplement(?:ary|al)?|si|sm|appendix|appendices|response|"
                        r"reply|rebuttal|referee|cover|letter|erratum|poster|slides|talk)(?:[^a-z]|$)")
_BIBCMD = re.compile(r"\\(?:bibliography|addbibresource|addglobalbib)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")


def decode(data: bytes) -> str | None:
    """Text of a member: UTF-8, else Latin-1 (old arXiv sources); None when it is binary (over
    5 % of its first 8 KiB, and more than 16, control bytes: a stray NUL in a text is not binary)."""
    head = data[:8192]
    controls = len(head) - len(head.translate(None, _CONTROL))
    if controls > max(16, len(head) // 20):  # over 5 % control bytes (and more than a stray few)
        return None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def strip_comments_keep_lines(text: str) -> str:
    """Comments out, newlines kept, so offsets still give the right line."""
    return strip_comments(text, keep_lines=True)


@dataclass(slots=True)
class Expanded:
    """The main file with its inputs in place: ``pieces`` are (offset in ``text``, member,
    offset in that member's comment-free text)."""

    text: str = ""
    pieces: list[tuple[int, str, int]] = field(default_factory=list)
    lines: dict[str, str] = field(default_factory=dict)
    rejects: list[PaperReject] = field(default_factory=list)
    size: int = 0
    inputs: int = 0  # \\input/\\include followed, repeats counted
    read: int = 0  # characters those inputs brought, repeats counted
    over: PaperReject | None = None  # the expansion budget passed: nothing of the text is used
    _starts: list[int] = field(default_factory=list)
    _newlines: dict[str, list[int]] = field(default_factory=dict)

    def where(self, offset: int) -> tuple[str, int]:
        """(member, line) of an offset of ``text`` (a bisection: thousands of entries stay linear)."""
        if len(self._starts) != len(self.pieces):
            self._starts = [p[0] for p in self.pieces]
        i = bisect.bisect_right(self._starts, offset) - 1
        start, member, member_offset = self.pieces[max(i, 0)]
        if member not in self._newlines:
            self._newlines[member] = newline_offsets(self.lines[member])
        return member, bisect.bisect_left(self._newlines[member], member_offset + offset - start) + 1


def newline_offsets(text: str) -> list[int]:
    """Offsets of every newline: the line of offset ``o`` is ``bisect_left(offsets, o) + 1``."""
    return [m.start() for m in _NEWLINE.finditer(text)]


def resolve_input(members: dict[str, str], current: str, target: str) -> str | None:
    """The member an ``\\input{target}`` names: relative to the root, then to the including
    file's folder, with ``.tex`` added when missing; None when not in the tree (a figure)."""
    if target.startswith("/") or ".." in target.split("/"):
        return None
    for base in ("", posixpath.dirname(current)):
        path = posixpath.normpath(posixpath.join(base, target)).removeprefix("./")
        for name in (path, path + ".tex"):
            if name in members:
                return name
    return None


def expand(file: str, members: dict[str, str], main: str, limits: PaperLimits) -> Expanded:
    out = Expanded(lines=members)
    parts: list[str] = []
    _expand_into(file, members, main, [main], limits, out, parts)
    out.text = "".join(parts) if out.over is None else ""
    if out.over is not None:  # a bomb gives nothing: its reject says why
        out.pieces, out.rejects = [(0, main, 0)], [out.over]
    return out


def _over_budget(file: str, name: str, text: str, line: int, limits: PaperLimits, out: Expanded) -> bool:
    """Whether following one more ``\\input`` of ``target`` passes the paper's expansion budget
    (inputs followed and characters read, repeats counted); the first time, the reject."""
    if out.over is None:
        out.inputs += 1
        out.read += len(text)
        if out.inputs > limits.max_inputs:
            why = (f"more than {limits.max_inputs:,} \\input/\\include followed, repeats counted "
                   "(papers.max_inputs): LaTeX that multiplies is not read")
        elif out.read > limits.max_expanded_bytes:
            why = (f"the text with its inputs in place passes {limits.max_expanded_bytes:,} characters, repeats "
                   "counted (papers.max_expanded_bytes): LaTeX that multiplies is not read")
        else:
            return False
        out.over = PaperReject(file, name, "expansion_budget", why, line)
    return True


def _expand_into(file: str, members: dict[str, str], name: str, stack: list[str], limits: PaperLimits,
                 out: Expanded, parts: list[str]) -> None:
    """Append member ``name`` to ``parts`` with each of its inputs expanded in place."""
    text, pos = members[name], 0
    for m in _INPUT.finditer(text):
        target = resolve_input(members, name, (m.group(1) or m.group(2) or "").strip())
        if target is None:
            continue
        _append(out, parts, name, pos, text[pos:m.start()])
        pos = m.end()
        line = text.count("\n", 0, m.start()) + 1
        if target in stack:
            out.rejects.append(PaperReject(file, name, "input_loop", "\\input loop: " + " -> ".join(stack + [target])
                                           + "; not followed again", line))
        elif len(stack) > limits.max_input_depth:
            out.rejects.append(PaperReject(file, name, "input_too_deep", f"\\input nested deeper than "
                                           f"{limits.max_input_depth} (papers.max_input_depth): {target} not read",
                                           line))
        elif _over_budget(file, name, members[target], line, limits, out):
            return
        else:
            _expand_into(file, members, target, stack + [target], limits, out, parts)
            if out.over is not None:
                return
    _append(out, parts, name, pos, text[pos:])


def _append(out: Expanded, parts: list[str], member: str, member_offset: int, chunk: str) -> None:
    if chunk:
        out.pieces.append((out.size, member, member_offset))
        parts.append(chunk)
        out.size += len(chunk)


def main_files(members: dict[str, str]) -> list[str]:
    """``.tex`` members holding ``\\documentclass``, the ones with a bibliography first, then those
    not named as a companion document (a supplement, an appendix, a reply to referees, a cover
    letter), then the shallowest, then by name (a paper and its supplement: the paper's list is
    read)."""
    mains = [n for n, t in members.items() if n.lower().endswith((".tex", ".ltx", ".latex")) and _DOCUMENT.search(t)]

    def rank(name: str) -> tuple[int, int, int, str]:
        text = members[name]
        stem = posixpath.splitext(name)[0]
        has_bib = "thebibliography" in text or f"{stem}.bbl" in members or _BIBCMD.search(text) is not None
        companion = _COMPANION.search(posixpath.basename(stem)) is not None
        return (0 if has_bib else 1, int(companion), name.count("/"), name)

    return sorted(mains, key=rank)


def bib_names(text: str) -> list[str]:
    """The ``.bib`` files ``\\bibliography{a,b}`` / ``\\addbibresource{a.bib}`` name, in order."""
    names = []
    for m in _BIBCMD.finditer(text):
        for part in m.group(1).split(","):
            part = part.strip()
            if part:
                names.append(part if part.lower().endswith(".bib") else part + ".bib")
    return names
