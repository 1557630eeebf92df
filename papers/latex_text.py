"""LaTeX of a bibliography entry turned to plain text, in one pass over its macros.

The common vocabulary of ``.bbl`` files (accents, font switches, ``\\newblock``, ``\\bibinfo``,
``\\url``, ``\\href``, ``\\penalty0``) is handled by a small scanner, because pylatexenc takes
about 2 ms a reference and a paper has dozens; symbols (``\\alpha``, ``\\odot``) come from
pylatexenc's own table, other macros are dropped and their arguments kept (as pylatexenc does),
math ``$`` goes; environments and odd control symbols go to pylatexenc itself."""
from __future__ import annotations

import functools
import html
import re
import unicodedata
from typing import Any

from papers.braces import group_end

_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
            "r": "\u030a", "d": "\u0323", "b": "\u0331"}
_LETTERS = {"i": "ı", "j": "ȷ", "o": "ø", "O": "Ø", "l": "ł", "L": "Ł", "ss": "ß", "aa": "å", "AA": "Å",
            "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "dh": "ð", "DH": "Ð", "th": "þ", "TH": "Þ"}
# what each macro of a bibliography entry becomes
_DROP = frozenset("""newblock BibitemOpen bibitemNoStop urlprefix BIBand bibnamefont bibfnamefont citenamefont
protect relax newpage raggedright sloppy unskip ignorespaces hfill hfil break linebreak nolinebreak allowbreak
em it bf sc rm tt sf sl upshape itshape bfseries scshape normalfont mdseries rmfamily sffamily ttfamily
small footnotesize scriptsize tiny large Large normalsize doibase BIBentryALTinterwordspacing
BIBentrySTDinterwordspacing BIBdecl""".split())
# cross-references (their number is the compiled paper's; a reference string has none) and citations
REFERENCE_MACROS = ("ref", "cref", "Cref", "eqref", "autoref", "pageref", "vref", "nameref")
_DROP_ARG = frozenset("BibitemShut bibAnnote bibAnnoteFile label cite citet citep citealp citealt citeauthor "
                      "citeyear nocite bibliographystyle hskip vskip".split() + list(REFERENCE_MACROS))
_KEEP_ARG = frozenset("""emph textit textbf textsc textrm texttt textsf textsl textup textmd textnormal mbox hbox
text mathrm mathit mathbf mathsf mathtt natexlab enquote textsuperscript textsubscript uppercase MakeUppercase
bibsection""".split())
# first argument dropped, second kept
_SKIP_KEEP = frozenset("bibinfo bibfield href href@noop Eprint BIBforeignlanguage".split())
_LITERAL = frozenset("url path nolinkurl".split())
_CONTROL_SPACE = re.compile(r"(?<!\\)((?:\\\\)*)\\[\t\r\n]")
# amsplain's author repeat, ellipses, iopart's ``\\etal``
_SHOWN = {"bysame": "———", "dots": "…", "ldots": "…", "etal": "et al."}
# a math group that is only a super- or subscript (``$^{12}$C``, ``$_2$``): its text
_URL_ARGUMENT = re.compile(r"\\(?:url|href|nolinkurl|path)\s*\{[^{}\n]*\}")
_CITATION = re.compile(r"(?:[A-Za-z]*@)?(?:[a-z]*cite[a-z]*|[A-Z][a-z]*cite[a-z]*)")
_ENTITY = re.compile(r"&(?:amp|lt|gt|quot|apos|nbsp|ndash|mdash|#\d{2,6}|#x[0-9a-fA-F]{2,6});")
_ESCAPED_LATEX = re.compile(r"\{\\textbackslash\}|\\textbackslash(?:\{\}|\s+|(?![A-Za-z]))|\\[${}]")
_BACKSLASH = re.compile(r"\$?\\backslash\s*\$?(?=[A-Za-z])")
_VPHANTOM = re.compile(r"\\\{\\vphantom\s*\\\}|\\vphantom\s*\\\{\\\}|\\vphantom\s*(?:\{[^{}]*\}|\\[A-Za-z]+|\\.)")
_ZOTERO_BRACES = re.compile(r"\\\{([^{}\\]{1,40})\\\}")
_MATH = re.compile(r"(?<!\\)\$[^$]{1,300}(?<!\\)\$")
_SUBSCRIPT = re.compile(r"(?<!\\)_\s*")
_LONE_SCRIPT = re.compile(r"\$\s*[\^_]\s*(?:\{([^{}$]{1,40})\}|([^{}$\s\\]))\s*\$")
_TOKEN = re.compile(r"\\([A-Za-z@]+)\*?|\\([`'^\"~=.])")
_SYMBOLS = [("\\&", "\ue005"), ("\\%", "\ue001"), ("\\$", "\ue002"), ("\\_", "_"), ("\\#", "#"), ("\\{", "\ue003"),
            ("\\}", "\ue004"), ("---", "—"), ("--", "–"), ("``", "“"), ("''", "”"), ("\\ ", " "),
            ("\\,", " "), ("\\;", " "), ("\\@", ""), ("\\/", ""), ("\\-", ""), ("~", " "), ("\\\\", " ")]
_PLACEHOLDERS = [("\ue001", "%"), ("\ue002", "$"), ("\ue003", "{"), ("\ue004", "}"), ("\ue005", "&"), ("\ue006", "~")]
_WS = re.compile(r"\s+")
_MACRO = re.compile(r"\\([A-Za-z]+)\*?\s*")
_ODD = re.compile(r"\\[^A-Za-z\s]")
_COMMENT = re.compile(r"%[^\n]*(\n[ \t]*)?")
_COMMENT_KEEP = re.compile(r"%[^\n]*")
_ACCENT_BASE = re.compile(r"\s*\{\s*(\\?[A-Za-z]{1,2})\s*\}|\s*(\\[ij](?![A-Za-z]))|(?<=[`'^\"~=.])([A-Za-z])"
                          r"|\s+([A-Za-z])")


# pylatexenc parses recursively; an entry longer than this (no real one is) is not given to it
PYLATEXENC_MAX_CHARS = 100_000


@functools.cache
def _converter() -> Any:
    """pylatexenc's converter, made on first use: importing pylatexenc costs every command that
    loads the configuration (which names ``papers.paper_model.PaperLimits``) 40-100 ms otherwise."""
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    context = get_default_latex_context_db()  # a cross-reference drops out, as on the fast path (not "<ref>")
    context.add_context_category("citeledger-references", prepend=True,
                                 macros=[MacroTextSpec(name, simplify_repl="") for name in REFERENCE_MACROS])
    return LatexNodes2Text(latex_context=context, math_mode="text", strict_latex_spaces=False)


@functools.cache
def symbol_macros() -> dict[str, str]:
    """pylatexenc's own table of argument-less macros that stand for a character (``\\alpha``,
    ``\\odot``, ``\\textendash``...), read once, so the fast path writes them as pylatexenc does."""
    from pylatexenc.latex2text import get_default_latex_context_db
    from pylatexenc.latexwalker import get_default_latex_context_db as walker_context_db

    walker = walker_context_db()
    table = {}
    for spec in get_default_latex_context_db().iter_macro_specs():
        repl, parsed = spec.simplify_repl, walker.get_macro_spec(spec.macroname)
        if isinstance(repl, str) and "%" not in repl and spec.macroname.isalpha() and spec.macroname != "today" \
                and not getattr(parsed, "arguments_spec_list", None):
            table[spec.macroname] = repl
    return table


def strip_comments(text: str, keep_lines: bool = False) -> str:
    """Drop ``%`` comments to the end of their line (a ``%`` after an odd number of backslashes
    is a percent sign). A comment takes its newline and the next line's indent with it, as in
    TeX, unless ``keep_lines`` (so offsets still give the right line)."""
    if "%" not in text:
        return text
    literal = "\\url" in text or "\\href" in text or "\\path" in text or "\\nolinkurl" in text
    if literal:  # a URL's ``%20`` is no comment: ``\\url`` reads its argument verbatim
        text = _URL_ARGUMENT.sub(lambda m: m.group().replace("%", "\ue007"), text)

    def comment(m: re.Match[str]) -> str:
        before = text[max(0, m.start() - 64):m.start()]
        if (len(before) - len(before.rstrip("\\"))) % 2 == 0:
            return ""  # a comment (and, unless keep_lines, its newline and the next indent)
        tail = m.group(1) or "" if m.re is _COMMENT else ""
        rest = m.group(0)[1:len(m.group(0)) - len(tail)]  # after a percent sign: a comment further on?
        i = rest.find("%")
        while i >= 0 and (i - len(rest[:i].rstrip("\\"))) % 2:
            i = rest.find("%", i + 1)
        return "%" + (rest + tail if i < 0 else rest[:i])

    text = (_COMMENT_KEEP if keep_lines else _COMMENT).sub(comment, text)
    return text.replace("\ue007", "%") if literal else text


def latex_to_text(latex: str) -> str:
    """One entry's LaTeX as one line of text: comments, font switches and braces out, accents
    and dashes in, ``\\bibinfo``/``\\href`` reduced to what they show."""
    text = strip_comments(latex)
    if "\\\n" in text or "\\\t" in text:  # a control space at a line's end (``225},\\`` then a newline)
        text = _CONTROL_SPACE.sub(lambda m: m.group(1) + " ", text)
    if "textbackslash" in text:  # Zotero escapes LaTeX: ``\\${\\textbackslash}texttt\\{x\\}\\$``
        text = _ESCAPED_LATEX.sub(lambda m: "\\" if "textbackslash" in m.group() else m.group()[1], text)
    if "backslash" in text:  # Google Scholar's ``$\\backslash$mu`` meant ``\\mu``
        text = _BACKSLASH.sub(r"\\", text)
    if "\\{" in text or "vphantom" in text:  # Zotero's protected capitals: ``\\{\\vphantom\\}{{JAX}}``, ``\\{P\\}``
        text = _ZOTERO_BRACES.sub(lambda m: m.group(1) or "", _VPHANTOM.sub("", text))
    if "$" in text:
        text = _LONE_SCRIPT.sub(lambda m: m.group(1) or m.group(2), text)
        if "_" in text:  # a subscript reads as its letters: ``$M_\\odot$`` M⊙, ``$H_0$`` H0
            text = _MATH.sub(lambda m: _SUBSCRIPT.sub("", m.group()), text)
    if "\\" in text:
        text = _convert(text)
    for latex_form, plain in _SYMBOLS:
        if latex_form in text:
            text = text.replace(latex_form, plain)
    if "\\" in text:
        if "\\begin" in text or _ODD.search(text):
            text = _with_pylatexenc(text)  # environments, odd control symbols: the full converter
        else:
            text = _MACRO.sub(lambda m: symbol_macros().get(m.group(1), " " if m.group(0)[-1:].isspace() else ""),
                              text)
    text = text.replace("$", "").replace("{", "").replace("}", "")
    for placeholder, plain in _PLACEHOLDERS:
        if placeholder in text:
            text = text.replace(placeholder, plain)
    if "&" in text and ";" in text:  # HTML entities some exports leave (``Lewin &amp; van der Klis``)
        text = _ENTITY.sub(lambda m: html.unescape(m.group()), text)
    return _WS.sub(" ", text).strip()


def _convert(text: str) -> str:
    """Every known macro replaced by what it shows, left to right; unknown ones kept for later."""
    out, pos = [], 0
    while (m := _TOKEN.search(text, pos)) is not None:
        out.append(text[pos:m.start()])
        shown, pos = _macro(text, m)
        out.append(shown)
    out.append(text[pos:])
    return "".join(out)


def _macro(text: str, m: re.Match[str]) -> tuple[str, int]:
    """(what the macro at ``m`` shows, where the text goes on)."""
    name, end = m.group(1), m.end()
    if name is None or (name in "uvHckrdb" and len(name) == 1):
        return _accent(text, m.group(2) or name, end)
    if name in _LETTERS and not text[end:end + 1].isalpha():
        return _LETTERS[name], end + 2 if text.startswith("{}", end) else _skip_spaces(text, end)
    if name in _SPECIAL:
        return _special(text, name, end)
    if name in _DROP:
        return "", _skip_spaces(text, end)
    if _CITATION.fullmatch(name) and not name.endswith("font"):  # ``\\rev@citealpnum{key}``: a key is no text
        return _with_args(text, "cite", end)
    if "@" in name:  # ``\\@noop``, ``\\@ifundefined``: a class's internals show nothing
        return "", _skip_spaces(text, end)
    if name in _SHOWN:
        return _SHOWN[name], end
    if name == "penalty":
        digits = re.match(r"\s*-?\d*", text[end:end + 12])
        return " ", end + (digits.end() if digits else 0)
    if name in _DROP_ARG or name in _KEEP_ARG or name in _SKIP_KEEP or name in _LITERAL or name in ("doi", "DOI"):
        return _with_args(text, name, end)
    return m.group(0), end


_SPECIAL = frozenset({"sqrt", "eprint", "mn@doi", "mn@eprint", "MR"})


def _special(text: str, name: str, end: int) -> tuple[str, int]:
    """Macros whose text is not just an argument: ``\\sqrt{s}`` (√s), the AAS ``\\eprint{id}``
    (``arXiv:id``; two arguments: link and text), mnras's ``\\mn@doi[shown]{doi}`` and
    ``\\mn@eprint{arXiv}{id}``, amsplain's ``\\MR{number}``."""
    optional = re.match(r"\s*\[([^\]]{0,200})\]", text[end:end + 210]) if name in ("sqrt", "mn@doi") else None
    first = _argument(text, end + (optional.end() if optional else 0))
    if first is None:
        return ("√" if name == "sqrt" else ""), end
    shown = _convert(first[0]) if "\\" in first[0] else first[0]
    if name == "sqrt":
        return "√" + shown, first[1]
    if name == "MR":
        return "MR" + shown, first[1]
    if name == "mn@doi":
        return (_convert(optional.group(1)) if optional else "doi:" + shown), first[1]
    second = _argument(text, first[1])
    if name == "eprint" and second is None:
        return "arXiv:" + shown, first[1]
    if second is None:
        return shown, first[1]
    value = _convert(second[0]) if "\\" in second[0] else second[0]
    return (f"{shown}:{value}" if name == "mn@eprint" else value), second[1]


def _with_args(text: str, name: str, end: int) -> tuple[str, int]:
    if name in _DROP_ARG:
        optional = re.match(r"\s*(?:\[[^\]]*\]\s*){0,2}", text[end:end + 200])
        arg = _argument(text, end + (optional.end() if optional else 0))
        return ("", arg[1]) if arg else ("", end)
    skip = _argument(text, end) if name in _SKIP_KEEP else None
    arg = _argument(text, skip[1] if skip else end)
    if arg is None:
        return "", end
    if name in _LITERAL:
        return arg[0].replace("~", "\ue006"), arg[1]
    shown = _convert(arg[0]) if "\\" in arg[0] else arg[0]
    return ("doi:" + shown if name in ("doi", "DOI") else shown), arg[1]


def _argument(text: str, start: int) -> tuple[str, int] | None:
    """The brace group at ``start`` (spaces skipped before it): (its content, offset after it)."""
    i = _skip_spaces(text, start)
    if text[i:i + 1] != "{":
        return None
    end = group_end(text, i)
    return (text[i + 1:end - 1], end) if end > 0 else None


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _accent(text: str, mark: str, end: int) -> tuple[str, int]:
    """``\\'e``, ``\\'{e}``, ``\\v{S}``, ``\\'{\\i}``: the letter with its combining mark."""
    m = _ACCENT_BASE.match(text, end)
    if m is None:
        return ("" if mark in "uvHckrdb" else f"\\{mark}"), end
    base = next(g for g in m.groups() if g)
    base = base[1:] if base in ("\\i", "\\j") else _LETTERS.get(base[1:], base[1:]) if base.startswith("\\") else base
    return unicodedata.normalize("NFC", base + _ACCENTS[mark]), m.end()


def _with_pylatexenc(text: str) -> str:
    """What the fast path left (environments, unusual macros) through pylatexenc; a macro it
    cannot parse is dropped, its arguments kept."""
    if len(text) > PYLATEXENC_MAX_CHARS:
        return re.sub(r"\\[A-Za-z]+\*?|\$", " ", text)
    try:
        return str(_converter().latex_to_text(text))
    except Exception:  # pylatexenc raises IndexError and others on unusual macro arguments
        return re.sub(r"\\[A-Za-z]+\*?|\$", " ", text)
