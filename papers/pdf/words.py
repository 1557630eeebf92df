"""A PDF's pages as poppler's ``pdftotext -bbox-layout`` gives them: every word with its box, in
lines (``Word``, ``Line``, ``Page``), read one page at a time (``parse_pages``). A word poppler cut in
two is joined back: at a change of font with no space between (``join_glued``), or in a URL or DOI
that a justified line stretched apart (``join_spaced``). Plain data and pure functions: no I/O."""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Iterator

from lxml import etree

XHTML = "{http://www.w3.org/1999/xhtml}"
GLUE_GAP = 0.06  # a gap narrower than this share of the line height is no space (a word space is ~0.25)
LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                           "\ufb05": "st", "\ufb06": "st"})
# ASCII control codes XML 1.0 forbids (all but tab, line feed, carriage return); a parser in
# recovery mode would drop the text around them
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 13))
_DOI_IN_WORD = re.compile(r"10\.\d{4,9}/")
COLUMN_GAP = 2.0  # a gap this many line heights wide parts two columns' lines poppler put on one line
SPACED = 0.6  # a gap narrower than this share of a line's word space is a stretched URL's, no space
URL_MARKS = frozenset("./-:_~?=&#%()")  # characters after which the url package lets a line break (and stretch)
_PROSE = re.compile(r"[(\[]?[^\W\d_]{2,}[.,;:)\]]?")  # a word of letters (its punctuation aside)
_URL_OR_DOI = re.compile(r"10\.\d{4,9}/|://|www\.", re.I)


@dataclass(frozen=True, slots=True)
class Word:
    x0: float
    x1: float
    text: str
    height: float = 0.0  # the glyphs' height (0: not known), which tells a line number's small font


@dataclass(slots=True)
class Line:
    """One printed line: its page (0-based), column (0 left or only, 1 right, ``SPAN`` across),
    box, and words left to right."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    words: list[Word] = field(default_factory=list)
    column: int = 0
    left: float = 0.0  # the left edge of the line's column on its page

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def indent(self) -> float:
        return self.x0 - self.left


@dataclass(slots=True)
class Page:
    number: int
    width: float
    lines: list[Line]


def parse_pages(xhtml: bytes) -> Iterator[Page]:
    """The pages of ``pdftotext -bbox-layout`` output, one at a time (each page's elements are
    freed once read, so a long document is never held as one tree). Control codes are dropped
    first: poppler passes them through from a PDF's text, and XML forbids them."""
    xhtml = xhtml.translate(None, _CONTROL)  # poppler writes a glyph's control code as is: no XML
    context = etree.iterparse(io.BytesIO(xhtml), events=("end",), tag=f"{XHTML}page", recover=True,
                              resolve_entities=False, no_network=True, huge_tree=False)
    for number, (_, element) in enumerate(context):
        lines = []
        for line_el in element.iter(f"{XHTML}line"):
            words = join_spaced(join_glued(
                [Word(float(w.get("xMin", 0)), float(w.get("xMax", 0)), _unligature(w.text or ""),
                      float(w.get("yMax", 0)) - float(w.get("yMin", 0)))
                 for w in line_el.iter(f"{XHTML}word") if (w.text or "").strip()],
                float(line_el.get("yMax", 0)) - float(line_el.get("yMin", 0))))
            y0, y1 = float(line_el.get("yMin", 0)), float(line_el.get("yMax", 0))
            parts = split_at_columns(words, y1 - y0)
            for k, part in enumerate(parts):  # the line's own box (a blank word, a drawn dash, opens it)
                x0 = float(line_el.get("xMin", 0)) if k == 0 else part[0].x0
                x1 = float(line_el.get("xMax", 0)) if k == len(parts) - 1 else part[-1].x1
                lines.append(Line(number, x0, y0, x1, y1, part))
        yield Page(number, float(element.get("width", 0) or 0), lines)
        element.clear()
        while element.getprevious() is not None:
            del element.getparent()[0]


def _unligature(text: str) -> str:
    """Typographic ligatures (U+FB00-FB06: ``ﬁ``, ``ﬃ`` ...) as their letters, so ``Oﬃce`` reads
    ``Office`` for matching; and in a word holding a DOI, the dot accent ``˙`` as the underscore
    it stands for (TeX's default OT1 text fonts keep the accent in the underscore's slot, so a DOI
    set as text prints ``10.1007/978-1-4612-2544-7˙9``); nothing else of the text is normalised."""
    if any("\ufb00" <= c <= "\ufb06" for c in text):
        text = text.translate(LIGATURES)
    if "\u02d9" in text and _DOI_IN_WORD.search(text):
        text = text.replace("\u02d9", "_")
    return text


def join_glued(words: list[Word], height: float) -> list[Word]:
    """Words poppler cut at a change of font with no space between (small capitals: ``A BADI``
    printed as ``ABADI``) joined back: a gap under ``GLUE_GAP`` of the line's height."""
    out: list[Word] = []
    for word in words:
        if out and 0 <= word.x0 - out[-1].x1 < GLUE_GAP * height:
            out[-1] = Word(out[-1].x0, word.x1, out[-1].text + word.text, max(out[-1].height, word.height))
        else:
            out.append(word)
    return out


def join_spaced(words: list[Word]) -> list[Word]:
    """A URL or DOI whose characters a justified line stretched apart, joined back: TeX's url
    package lets a line stretch the glue it puts after ``/``, ``.``, ``-`` (biblatex's ``\\url``:
    ``10 . 3847 / 2041 - 8213 / aab370``), gaps poppler reads as spaces. A gap narrower than
    ``SPACED`` of the line's word space (the middle gap between two words of letters, else the
    widest gap) is no space when a word of one punctuation mark stands on either side of it, or the
    word before it is a URL or DOI ending with such a mark (``10.1146/annurev-`` + ``astro-...``)."""
    if len(words) < 3:
        return words
    gaps = [b.x0 - a.x1 for a, b in zip(words, words[1:])]
    prose = sorted(g for a, b, g in zip(words, words[1:], gaps)
                   if _PROSE.fullmatch(a.text) and _PROSE.fullmatch(b.text))
    space = prose[len(prose) // 2] if prose else max(gaps)
    out = [words[0]]
    for previous, word, gap in zip(words, words[1:], gaps):
        before = out[-1]
        mark = word.text in URL_MARKS or previous.text in URL_MARKS or (
            previous.text[-1:] in URL_MARKS and _URL_OR_DOI.search(before.text) is not None)
        if mark and 0 < gap < SPACED * space:
            out[-1] = Word(before.x0, word.x1, before.text + word.text, max(before.height, word.height))
        else:
            out.append(word)
    return out


def split_at_columns(words: list[Word], height: float) -> list[list[Word]]:
    """A line poppler made of two columns' lines on one baseline (``et al. 2018, JAX: composable``
    and ``Ambikasaran, S., & Angus, R. 2017,``) cut where a gap wider than ``COLUMN_GAP`` line heights,
    which no word space reaches, parts two runs of two words or more (a margin's line number or a
    list's label alone beside its text stays in the line)."""
    cuts = [0] + [i for i in range(2, len(words) - 1)
                  if words[i].x0 - words[i - 1].x1 > COLUMN_GAP * height] + [len(words)]
    parts: list[list[Word]] = []
    for a, b in zip(cuts, cuts[1:]):
        if parts and (b - a < 2 or len(parts[-1]) < 2):
            parts[-1] = parts[-1] + words[a:b]
        else:
            parts.append(words[a:b])
    return [part for part in parts if part]
