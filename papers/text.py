"""LaTeX of a bibliography entry turned to plain text. The common vocabulary of ``.bbl`` files
(accents, font switches, ``\\newblock``, ``\\bibinfo``, ``\\url``, ``\\href``) is handled by a few
regular expressions, because pylatexenc takes about 2 ms a reference and a paper has dozens; what
is left (math, unknown macros) goes to pylatexenc."""
from __future__ import annotations

import re
import unicodedata

from typing import Any

from pylatexenc.latex2text import LatexNodes2Text

_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
            "r": "\u030a", "d": "\u0323", "b": "\u0331"}
_LETTERS = {"i": "ı", "j": "ȷ", "o": "ø", "O": "Ø", "l": "ł", "L": "Ł", "ss": "ß", "aa": "å", "AA": "Å",
            "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "dh": "ð", "DH": "Ð", "th": "þ", "TH": "Þ"}
_ACCENT = re.compile(r"\\([`'^\"~=.])\s*(?:\{\s*(\\?[A-Za-z]{1,2})\s*\}|(\\[ij](?![A-Za-z])|[A-Za-z]))"
                     r"|\\([uvHckrdb])(?:\s*\{\s*(\\?[A-Za-z])\s*\}|\s+([A-Za-z]))")
_LETTER = re.compile(r"\\(ss|aa|AA|ae|AE|oe|OE|dh|DH|th|TH|[ijoOlL])(?![A-Za-z])(?:\s*\{\}|\s)?")
# a macro and its brace arguments, turned to what is kept ("\1" the first argument, ...)
_ARG = r"\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}"
_REWRITES: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"\\(?:bibinfo|bibfield)\s*\{[^{}]*\}\s*" + _ARG), r"\1"),
    (re.compile(r"\\href\s*\{[^{}]*\}\s*" + _ARG), r"\1"),
    (re.compile(r"\\(?:url|path|nolinkurl)\s*" + _ARG), lambda m: m.group(1).replace("~", "\ue006")),
    (re.compile(r"\\natexlab\s*" + _ARG), r"\1"),
    (re.compile(r"\\penalty\s*-?\d+\s*"), " "),
    (re.compile(r"\\(?:doi|DOI)\s*" + _ARG), r"doi:\1"),
    (re.compile(r"\\(?:Eprint|eprint)\s*\{[^{}]*\}\s*" + _ARG), r"\1"),
    (re.compile(r"\\(?:BibitemShut|bibAnnote|bibAnnoteFile)\s*\{[^{}]*\}"), ""),
    (re.compile(r"\\(?:BibitemShut|bibAnnote|bibAnnoteFile|bibitemNoStop|urlprefix|providecommand\*?\\\w+|"
                r"penalty|BIBand|BibitemOpen|newblock|bibnamefont|bibfnamefont|citenamefont|"
                r"href@noop)\b\s*"), ""),
    (re.compile(r"\\(?:cite[tp]?|citealp|ref|label|protect|relax|hskip|vskip|newpage|bibliographystyle)"
                r"\b\s*(?:" + _ARG + ")?"), ""),
]
_FONT = re.compile(r"\\(?:emph|textit|textbf|textsc|textrm|texttt|textsf|textsl|textup|textmd|textnormal|"
                   r"mbox|hbox|text|mathrm|mathit|mathbf|em|it|bf|sc|rm|tt|sf|sl|upshape|itshape|bfseries|"
                   r"scshape|normalfont|small|footnotesize|large|Large)(?![A-Za-z])\s*")
_SYMBOLS = [("\\&", "\ue005"), ("\\%", "\ue001"), ("\\$", "\ue002"), ("\\_", "_"), ("\\#", "#"), ("\\{", "\ue003"),
            ("\\}", "\ue004"), ("---", "—"), ("--", "–"), ("``", "“"), ("''", "”"), ("\\ ", " "),
            ("\\,", " "), ("\\;", " "), ("\\@", ""), ("\\/", ""), ("\\-", ""), ("~", " "), ("\\\\", " ")]
_CONVERTER = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)
_WS = re.compile(r"\s+")
_PLACEHOLDERS = str.maketrans({"\ue001": "%", "\ue002": "$", "\ue003": "{", "\ue004": "}", "\ue005": "&",
                               "\ue006": "~"})


def _accent(m: re.Match[str]) -> str:
    mark = _ACCENTS[m.group(1) or m.group(4)]
    base = m.group(2) or m.group(3) or m.group(5) or m.group(6) or ""
    base = base.lstrip("\\") if base in ("\\i", "\\j") else _LETTERS.get(base[1:], base[1:]) \
        if base.startswith("\\") else base
    return unicodedata.normalize("NFC", base + mark)


def strip_comments(text: str) -> str:
    """Drop ``%`` comments to the end of their line (``\\%`` is a percent sign, kept)."""
    if "%" not in text:
        return text
    return re.sub(r"(?<!\\)((?:\\\\)*)%[^\n]*(?:\n[ \t]*|\Z)", r"\1", text)


def latex_to_text(latex: str) -> str:
    """One entry's LaTeX as one line of text: comments, font switches and braces out, accents
    and dashes in, ``\\bibinfo``/``\\href`` reduced to what they show."""
    text = strip_comments(latex)
    for _ in range(3):  # nested \bibinfo inside \bibfield inside \href: inner ones first
        before = text
        for pattern, keep in _REWRITES:
            if "\\" in text:
                text = pattern.sub(keep, text)
        if text == before:
            break
    text = _ACCENT.sub(_accent, text)
    text = _LETTER.sub(lambda m: _LETTERS[m.group(1)], text)
    text = _FONT.sub("", text)
    for latex_form, plain in _SYMBOLS:
        if latex_form in text:
            text = text.replace(latex_form, plain)
    if "\\" in text or "$" in text:
        text = _with_pylatexenc(text)
    text = text.replace("{", "").replace("}", "")
    text = text.translate(_PLACEHOLDERS)
    return _WS.sub(" ", text).strip()


def _with_pylatexenc(text: str) -> str:
    """What the fast path left (math, unknown macros) through pylatexenc; a macro it cannot
    parse is dropped, its arguments kept."""
    try:
        return str(_CONVERTER.latex_to_text(text))
    except Exception:  # pylatexenc raises IndexError and others on unusual macro arguments
        return re.sub(r"\\[A-Za-z]+\*?|\$", " ", text)
