"""The author's own macros (``\\newcommand``, ``\\def``) and the journal abbreviations of the AAS
styles (``\\apj``, ``\\mnras``, ...) expanded in bibliography entries, so ``\\arxiv{1212.1721}``
keeps its ``arXiv:`` and ``\\apj, 753, 148`` keeps its journal."""
from __future__ import annotations

import re

from papers.braces import group_end

# the journal macros aastex, mnras and A&A classes define (as the journals print them)
JOURNALS = {
    "aj": "AJ", "actaa": "Acta Astron.", "araa": "ARA&A", "apj": "ApJ", "apjl": "ApJL", "apjs": "ApJS",
    "ao": "Appl. Opt.", "apss": "Ap&SS", "aap": "A&A", "aapr": "A&A Rev.", "aaps": "A&AS", "azh": "AZh",
    "baas": "BAAS", "bac": "Bull. astr. Inst. Czechosl.", "caa": "Chinese Astron. Astrophys.",
    "cjaa": "Chinese J. Astron. Astrophys.", "icarus": "Icarus", "jcap": "J. Cosmology Astropart. Phys.",
    "jrasc": "JRASC", "memras": "MmRAS", "mnras": "MNRAS", "na": "New A", "nar": "New A Rev.", "pra": "Phys. Rev. A",
    "prb": "Phys. Rev. B", "prc": "Phys. Rev. C", "prd": "Phys. Rev. D", "pre": "Phys. Rev. E",
    "prl": "Phys. Rev. Lett.",
    "pasa": "PASA", "pasp": "PASP", "pasj": "PASJ", "qjras": "QJRAS", "rmxaa": "Rev. Mexicana Astron. Astrofis.",
    "skytel": "S&T", "solphys": "Sol. Phys.", "sovast": "Soviet Ast.", "ssr": "Space Sci. Rev.", "zap": "ZAp",
    "nat": "Nature", "iaucirc": "IAU Circ.", "aplett": "Astrophys. Lett.", "apspr": "Astrophys. Space Phys. Res.",
    "bain": "Bull. Astron. Inst. Netherlands", "fcp": "Fund. Cosmic Phys.", "gca": "Geochim. Cosmochim. Acta",
    "grl": "Geophys. Res. Lett.", "jcp": "J. Chem. Phys.", "jgr": "J. Geophys. Res.",
    "jqsrt": "J. Quant. Spec. Radiat. Transf.", "memsai": "Mem. Soc. Astron. Italiana", "nphysa": "Nucl. Phys. A",
    "physrep": "Phys. Rep.", "physscr": "Phys. Scr", "planss": "Planet. Space Sci.", "procspie": "Proc. SPIE",
    "psj": "PSJ", "aas": "AAS",
}
_DEFINE = re.compile(r"\\(?:re)?(?:newcommand|providecommand|DeclareRobustCommand)\*?\s*\{?\s*\\([A-Za-z]+)\s*\}?"
                     r"\s*(?:\[(\d)\])?\s*(?:\[[^\]]*\])?\s*\{"
                     r"|\\def\s*\\([A-Za-z]+)\s*\{")


def _group(text: str, start: int, limit: int = 4000) -> int:
    """Offset after the brace group whose ``{`` is just before ``start``; -1 when it does not
    close within ``limit`` characters (so many unclosed groups cost linear time, not quadratic)."""
    depth, i, stop = 1, start, min(len(text), start + limit)
    while i < stop:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth == 0:
            return i + 1
        i += 1
    return -1


def definitions(text: str) -> dict[str, tuple[int, str]]:
    """``name -> (argument count, body)`` of the simple macros a LaTeX text defines in its
    preamble (at most two arguments, no optional default used)."""
    found: dict[str, tuple[int, str]] = {}
    begin = text.find("\\begin{document}")
    preamble = text[:begin] if begin > 0 else text
    for m in _DEFINE.finditer(preamble):
        end = group_end(preamble, m.end() - 1)
        nargs = int(m.group(2) or 0)
        if end > 0 and nargs <= 2 and end - m.end() < 1000:
            found[m.group(1) or m.group(3)] = (nargs, preamble[m.end():end - 1])
    return found


_NAME = re.compile(r"\\([A-Za-z]+)\s*")


# an entry is a few hundred characters; macros that each hold several others multiply it by
# their length per round, so an expansion past this stops (the entry keeps the round before)
MAX_EXPANDED_ENTRY = 64 * 1024
_OVER = "\0over"  # what a round past the bound gives (its text is never built)


class Expander:
    """Expands a fixed set of macros in short texts (entries), a few rounds deep; ``overflowed``
    counts the texts whose expansion passed ``MAX_EXPANDED_ENTRY`` and was stopped."""

    def __init__(self, defined: dict[str, tuple[int, str]]):
        self.macros = {**{k: (0, v) for k, v in JOURNALS.items()}, **defined}
        self.overflowed = 0

    def expand(self, text: str) -> str:
        for _ in range(4):
            if "\\" not in text:
                break
            expanded = self._round(text)
            if expanded is None:
                break
            if expanded is _OVER:
                self.overflowed += 1
                break
            text = expanded
        return text

    def _round(self, text: str) -> str | None:
        """Every known macro of ``text`` replaced once; None when there is none, ``_OVER`` when
        the result passes ``MAX_EXPANDED_ENTRY``."""
        out: list[str] = []
        pos, size = 0, 0
        for m in _NAME.finditer(text):
            found = self.macros.get(m.group(1))
            if m.start() < pos or found is None:
                continue
            args, end = self._args(text, m.end(), found[0])
            if args is None:
                continue
            body = found[1]
            for n, arg in enumerate(args, start=1):
                body = body.replace(f"#{n}", arg)
            spaced = found[0] == 0 and end < len(text) and text[end - 1:end].isspace()
            out += [text[pos:m.start()], body + (" " if spaced else "")]
            size += m.start() - pos + len(body) + 1
            pos = end
            if size > max(MAX_EXPANDED_ENTRY, len(text)):
                return _OVER  # over the bound: the caller keeps the text before
        if not out:
            return None
        return "".join(out) + text[pos:]

    @staticmethod
    def _args(text: str, start: int, nargs: int) -> tuple[list[str] | None, int]:
        args, i = [], start
        for _ in range(nargs):
            while i < len(text) and text[i].isspace():
                i += 1
            if text[i:i + 1] != "{":
                return None, start
            end = _group(text, i + 1)
            if end < 0:
                return None, start
            args.append(text[i + 1:end - 1])
            i = end
        return args, i
