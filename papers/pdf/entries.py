"""A PDF's reference list from its lines in reading order (``layout``): its entries, and each
entry as one string; the section itself is found by ``sections``.

* Entries are numbered (``[n]``, ``n.``, ``n)`` or a bare ``n``: a line starts an entry only when
  it carries the next number of the list, one lost label allowed, and a run of bare numbers must
  cut the list into entries of plausible length, so volumes, pages and years at a line's start
  are not read as labels), or keyed (alpha-like ``[AL09]``, cut wherever the right-aligned label
  starts), or, without labels, cut where a line starts at its column's edge when the list hangs
  its continuation lines (a page of one long entry's continuation lines measured from the edge
  the list keeps on other pages), else where the gap between lines widens, else where a name
  (``Surname, A.``) follows a line that ends an entry.
* Each entry's lines become one string (``joins``)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from statistics import median

from papers.pdf.joins import hyphenated_words, join_lines
from papers.pdf.layout import SPAN
from papers.pdf.sections import HANG_MIN, find_sections
from papers.pdf.words import Line

# Nothing says where the text after a list's last entry begins when no heading stands there (an
# author list, the other column's text, figure captions): that entry keeps at most this many times
# the lines of the longest other entry (and at least MAX_LINES_PER_ENTRY)
LAST_ENTRY_LINES = 2
LAST_ENTRY_AFTER = 5  # entries a list needs before its last one is bounded so
FOOTNOTE_MARK_SIZE = 0.8  # a footnote's raised mark is this much smaller than the note's text
FOOTNOTE_LINES = 4  # a footnote under a column is this many lines at most
EDGE_GAP = 1.5  # a page's top or foot line this many wide line steps from the list is the page's, not the list's
EDGE_STEP = 0.9  # the quantile of a list's steps from line to line that is its wide step (between entries)
ROW_SHARE = 0.35  # lines whose bottoms differ by less than this share of their height stand on one row
_FOOTNOTE_MARK = re.compile(r"\d{1,2}|[*\u2020\u2021\u00a7\u00b6\u2016#]{1,2}|[a-z]")
TALLER = 1.08  # body text is set this much taller than a list in a smaller size (9 pt beside 10 pt)
MAX_LINES_PER_ENTRY = 8  # more lines per entry on average means the cuts were missed
# a run of bare numbers (1, 2, 3 at lines' starts) is believed as labels only while it cuts the
# list into entries of at most this many lines on average (a thousand-author entry runs to 60)
MAX_LINES_PER_NUMBERED_ENTRY = 25
AUTHOR_START = re.compile(r"[A-Z][\w'\u2019-]+(?: [A-Z][\w'\u2019-]+){0,2},? (?:[A-Z]\.|[A-Z]{1,3}\b|[A-Z][a-z]+,)")
_ENTRY_ENDS = (".", ")", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
# Labels of numbered lists, each with the run of numbers (1, 2, 3 ...) it needs to be believed:
# a bracketed label ([1], or (1) as the ACS styles print it) is plain from two entries on; a bare
# number or ``n.`` may start a line of an author-year list by chance (a volume, a page), so those
# need three.
LABELS = ((re.compile(r"\[(\d{1,4})\]"), 2), (re.compile(r"\((\d{1,4})\)(?=\s|$)"), 2),
          (re.compile(r"(\d{1,4})\.(?=\s|$)"), 3),
          (re.compile(r"(\d{1,4})\)(?=\s|$)"), 3), (re.compile(r"(\d{1,4})(?=\s+\S)"), 3))
# a key label as alpha-like styles print it: letters (a "+" for more authors), then the year's digits
# (any script's letters: [DĎ86]; a raised "+" may come out spaced: [HSK +22]; a particle or a body's
# name before a space: [De 90], [ET 20a])
# (an entry with neither author nor editor has the year's digits alone, or nothing: ``[21] IBM Quantum.``,
# ``[] CodeChef Rating Mechanism.``)
_KEY_LABEL = re.compile(r"\[(?!Online\]|Internet\]|Accessed)(?:[^\W\d_][\w+\-.'\u2019\u0300-\u036f]{0,11}"
                        r"(?: ?\+ ?\d{0,4}[a-z]?| \d\d[a-z]?)?|\d\d[a-z]?)?\](?=\s)")
# an author-year label: a name (a particle may open it), the year, in brackets: [van Son et al. 2022a]
_AUTHOR_YEAR_LABEL = re.compile(r"\[(?:[^\W\d_]|\w+ [A-Z])[^\[\]]{0,80}?[\s,](?:1[6-9]|20)\d\d[a-z]?\](?=\s)")
KEY_LABELS_AT_LEAST = 3
MAX_SKIP = 1  # one label may be lost (printed as a glyph the text layer lacks) without ending the list



# what a page prints after or among the entries that is no reference: a figure's or table's
# caption, a journal's closing line, a copyright line
CAPTION = re.compile(r"(?:Figure|Fig\.|Table|Extended Data Fig\.)\s*[A-Z]?\d+[.:|]", re.I)
CAPTION_STEP = 1.6  # a caption's lines follow one another within this many line heights
WIDE = 1.5  # a line this many times wider than a two-column list's usual line runs across its page
FURNITURE = re.compile(r"(?:(?:Figure|Fig\.|Table|Box|Extended Data Fig\.)\s*[A-Z]?\d+[.:|]"
                       r"|Received\b.{0,60}\b(?:accepted|revised|published)\b"
                       r"|This (?:paper|article|manuscript) (?:has been|was) (?:typeset|produced)"
                       r"|\u00a9|\(c\)\s*(?:19|20)\d\d|Copyright\b)", re.I)
FURNITURE_INSIDE = re.compile(r"(?:\bThis (?:paper|article|manuscript) (?:has been|was) (?:typeset|produced) "
                              r"(?:from|using|with)\b|(?<=[.)] )Box \d+[.:] [A-Z]|(?<=[.)] )Received \d"
                              r"[^.]{0,60}\b(?:accepted|revised|published)\b).*$", re.I | re.S)
# a surname's lowercase particle opening an author-year entry (van Son, de Mink, de la Fuente)
PARTICLE_START = re.compile(r"(?:van|von|de|da|das|dos|del|della|der|den|di|du|la|le|ten|ter|zu|af|av|'t)"
                            r"(?:\s+(?:la|der|den|de|het|van|da|los|las))?\s+[A-Z\u00c0-\u024f]")
_YEAR_OPENS = re.compile(r"\(?(?:1[6-9]|20)\d\d[a-z]?\)?[.,:] ")
YEAR = re.compile(r"(?<!\d)(?:1[6-9]|20)\d\d(?!\d)|\bin press\b|\bn\.\s?d\.|\bforthcoming\b|\bsubmitted\b", re.I)


@dataclass(slots=True)
class Entry:
    """One reference: its lines in order and its label's number (None for author-year lists)."""

    lines: list[Line] = field(default_factory=list)
    number: int | None = None


def _chain(lines: list[Line], label: re.Pattern[str]) -> list[int]:
    """Indexes of the lines that carry the next number of a list labelled by ``label``, the list
    starting at 0 or 1; one number may be missing (``MAX_SKIP``)."""
    found: list[int] = []
    expected: int | None = None
    for i, line in enumerate(lines):
        m = label.match(line.text.lstrip())
        if m is None:
            continue
        n = int(m.group(1))
        if (expected is None and n <= 1) or (expected is not None and expected <= n <= expected + MAX_SKIP):
            found.append(i)
            expected = n + 1
    return found


def split_numbered(lines: list[Line]) -> list[Entry] | None:
    """Entries cut at the labels of the longest run of numbers, when one style makes a run."""
    best: list[int] = []
    best_label = LABELS[0][0]
    for label, at_least in LABELS:
        found = _chain(lines, label)
        if at_least > 2 and len(found) * MAX_LINES_PER_NUMBERED_ENTRY < len(lines):
            continue  # a few line-initial numbers in a long list are volumes and pages, not labels
        if len(found) >= at_least and len(found) > len(best):
            best, best_label = found, label
    if not best:
        return None
    entries = []
    for a, b in zip(best, best[1:] + [len(lines)]):
        first = lines[a]
        m = best_label.match(first.text.lstrip())
        assert m is not None
        n = int(m.group(1))
        entries.append(Entry([_without_label(first, m.group(0))] + lines[a + 1:b], n))
    return entries


def _without_label(line: Line, label: str) -> Line:
    """The entry's first line less the words its label (``[12]``, ``[AL09]``, ``[HSK +22]``) took."""
    return Line(line.page, line.x0, line.y0, line.x1, line.y1, line.words[len(label.split()):],
                line.column, line.left)


def _hang(lines: list[Line]) -> float | None:
    """The indent of continuation lines when the list hangs them (a good share of lines indented
    by about the same amount past their column's edge: the most common indent, so a figure's
    labels after the list, each indented its own way, do not move it), else None."""
    indents = [ln.indent for ln in lines]
    deep = [i for i in indents if i >= HANG_MIN]
    if len(deep) < max(2, len(indents) // 5) or len(deep) == len(indents):
        return None
    common = max(set(round(i) for i in deep), key=lambda r: sum(abs(i - r) <= HANG_MIN / 2 for i in deep))
    return median(i for i in deep if abs(i - common) <= HANG_MIN / 2)


def split_unnumbered(lines: list[Line]) -> list[Entry]:
    """Author-year entries: cut where a line starts at its column's edge in a hanging list, else
    where the gap above a line is wider than the list's usual line spacing; a list with neither
    (entries would run over ``MAX_LINES_PER_ENTRY`` lines) is cut where a line opens with a
    name (``Surname, A.``) after a line that ends an entry (``.``, ``)``, a digit)."""
    hang = _hang(lines)
    if hang is not None:
        indents = _list_indents(lines, hang)
        starts = [i for i, indent in enumerate(indents) if indent < hang / 2]
    else:
        starts = [i for i, ln in enumerate(lines) if i == 0 or _wide_gap(lines, i)]
    if hang is None and len(starts) * MAX_LINES_PER_ENTRY < len(lines):  # neither indent nor gaps
        starts = [i for i, ln in enumerate(lines)
                  if i == 0 or ((AUTHOR_START.match(ln.text) or PARTICLE_START.match(ln.text))
                                and lines[i - 1].text.rstrip().endswith(_ENTRY_ENDS))]
    if not starts or starts[0] != 0:
        starts = [0] + starts
    return [Entry(lines[a:b]) for a, b in zip(starts, starts[1:] + [len(lines)])]


def _list_indents(lines: list[Line], hang: float) -> list[float]:
    """Each line's indent in a hanging list. A page (or column) that holds only continuation
    lines (one entry of a thousand authors filling it) has its edge at the hang: measured from
    the edge the list keeps on other pages of the same column, its lines are continuations."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i, line in enumerate(lines):
        groups.setdefault((line.page, line.column), []).append(i)
    edges: dict[tuple[int, int], list[float]] = {}  # (column, page parity): margins differ on facing pages
    for (page, column), members in groups.items():
        if any(lines[i].indent >= HANG_MIN for i in members):  # this page shows both edges
            edges.setdefault((column, page % 2), []).append(lines[members[0]].left)
    indents = [ln.indent for ln in lines]
    for (page, column), members in groups.items():
        left = lines[members[0]].left
        if all(lines[i].indent < HANG_MIN for i in members):
            known = edges.get((column, page % 2)) or edges.get((column, 1 - page % 2), [])
            near = [e for e in known if abs(left - e - hang) <= max(HANG_MIN / 2, hang / 4)]
            if near:
                for i in members:
                    indents[i] = lines[i].x0 - near[0]
    return indents


def _wide_gap(lines: list[Line], i: int) -> bool:
    """A line whose gap to the line above (same page and column) is well over the spacing that
    lines of one entry keep; the first line of a column counts as a start only if capitalised."""
    prev, line = lines[i - 1], lines[i]
    if (prev.page, prev.column) != (line.page, line.column):
        return line.text[:1].isupper() or PARTICLE_START.match(line.text) is not None
    spacing = _spacing(lines)
    return spacing is not None and line.y0 - prev.y0 > spacing * 1.3


def _spacing(lines: list[Line]) -> float | None:
    steps = sorted(b.y0 - a.y0 for a, b in zip(lines, lines[1:])
                   if (a.page, a.column) == (b.page, b.column) and b.y0 > a.y0)
    return steps[len(steps) // 4] if steps else None


def skip_body_text(lines: list[Line]) -> list[Line]:
    """The section less what is not the list: the body text a column or page break brings into
    it (the other column's acknowledgements beside the list's first part, a figure's labels):
    from a break, lines set taller than the list's own (``TALLER`` than the section's median),
    two at least, up to the next line of the list's size; and a figure's stray glyphs (a word of
    one or two letters beyond where the list's lines end). Each line's column edge is then
    measured on the list's own lines, not on the figure beside them."""
    heights = sorted(_size(ln) for ln in lines)
    if len(heights) < 4:
        return lines
    limit = TALLER * heights[len(heights) // 2]
    ends = sorted(ln.x1 for ln in lines)
    out: list[Line] = []
    skipping = False
    for i, line in enumerate(lines):
        taller = _size(line) > limit
        if i and (line.page, line.column) != (lines[i - 1].page, lines[i - 1].column):
            skipping = taller and i + 1 < len(lines) and _size(lines[i + 1]) > limit
        elif not taller:
            skipping = False
        stray = len(line.text) <= 2 and not any(c.isdigit() for c in line.text) and line.x0 > ends[len(ends) // 2]
        if _footnote_mark(line, lines[i + 1] if i + 1 < len(lines) else None) and _column_foot(lines, i):
            skipping = True  # a footnote under the column: to the column's end
        if not skipping and not stray:
            out.append(line)
    edges: dict[tuple[int, int], float] = {}
    for line in out:
        key = (line.page, line.column)
        edges[key] = min(edges.get(key, line.x0), line.x0)
    for line in out:
        line.left = edges[(line.page, line.column)]
    return out


def without_wide_captions(lines: list[Line]) -> list[Line]:
    """The section less a figure's or table's caption set across both columns of a page of the list
    (``Figure C1. Results of ...``): its lines across the gutter, and its short last line, which
    stands in the left column at the caption's edge and step, apart from the list's next line."""
    out: list[Line] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.column != SPAN or not CAPTION.match(line.text):
            out.append(line)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].column == SPAN and lines[j].page == line.page:
            j += 1
        if j < len(lines) and _caption_end(lines, j, line):
            j += 1
        i = j
    return out


def without_wide_lines(lines: list[Line]) -> list[Line]:
    """A list set in two columns less the lines much wider than its column (``WIDE`` times the
    upper quartile of its lines' widths on its two-column pages, where full lines are the column's
    width): a figure's caption or body text across the page, on the list's pages or on the pages of
    figures after it, is no part of the list."""
    two = {ln.page for ln in lines if ln.column == 1}
    widths = sorted(ln.x1 - ln.x0 for ln in lines if ln.page in two and ln.column in (0, 1))
    if len(widths) < 4:
        return lines
    limit = WIDE * widths[3 * len(widths) // 4]
    return [ln for ln in lines if ln.x1 - ln.x0 <= limit]


def _caption_end(lines: list[Line], j: int, caption: Line) -> bool:
    """``lines[j]`` ends the caption that ``lines[j - 1]`` goes on: at the caption's left edge, one
    line's step below, and farther from the line after it than from the caption."""
    last, line = lines[j - 1], lines[j]
    step = line.y0 - last.y0
    after = lines[j + 1].y0 - line.y0 if j + 1 < len(lines) and lines[j + 1].page == line.page else float("inf")
    return (line.page == caption.page and abs(line.x0 - caption.x0) <= 1.0
            and 0 < step < CAPTION_STEP * (last.y1 - last.y0) and (after < 0 or after > step + 2.0))


def without_page_edges(lines: list[Line]) -> list[Line]:
    """The section less a page's furniture that no header rule caught (a running head or foot seen
    on one page only: ``A. Author`` over the list's second page, ``MNRAS 000, 000-000 (0000)`` under
    it): the top row of a page after the list's first, or the foot row of a page, set apart from the
    list's nearest line by over ``EDGE_GAP`` times the list's wide steps from line to line (the
    ``EDGE_STEP`` quantile: the steps between entries, where a style sets its entries apart)."""
    steps = sorted(b.y0 - a.y0 for a, b in zip(lines, lines[1:])
                   if (a.page, a.column) == (b.page, b.column) and b.y0 > a.y0)
    if len(steps) < 4:
        return lines
    wide = EDGE_GAP * steps[int(EDGE_STEP * (len(steps) - 1))]
    pages: dict[int, list[Line]] = {}
    for line in lines:
        pages.setdefault(line.page, []).append(line)
    drop: set[int] = set()
    for page, members in pages.items():
        ordered = sorted(members, key=lambda ln: ln.y1)
        top = [ln for ln in ordered if _same_row(ln, ordered[0])]
        below = [ln.y1 for ln in ordered if ln not in top]
        if page != lines[0].page and below and min(below) - top[0].y1 > wide:
            drop.update(id(ln) for ln in top)
        foot = [ln for ln in ordered if _same_row(ln, ordered[-1])]
        above = [ln.y1 for ln in ordered if ln not in foot]
        if above and foot[-1].y1 - max(above) > wide:
            drop.update(id(ln) for ln in foot)
    return [ln for ln in lines if id(ln) not in drop]


def _same_row(line: Line, other: Line) -> bool:
    """Two lines on one row: their bottoms (the baseline, give or take a descender) nearly level (a
    tall glyph box does not put the next row's line on this one)."""
    return abs(line.y1 - other.y1) < ROW_SHARE * min(line.y1 - line.y0, other.y1 - other.y0)


def _size(line: Line) -> float:
    """A line's type size: the lower quartile of its words' heights (a ligature or an accent whose
    glyph box runs tall makes the line's own box taller; an italic title's or a typewriter URL's font
    may have a taller box than the roman words of its line), the median of fewer than four words (a
    figure's label and a bracket), else the line's height."""
    heights = sorted(w.height for w in line.words if w.height)
    if not heights:
        return line.y1 - line.y0
    return heights[(len(heights) - 1) // 4] if len(heights) >= 4 else heights[len(heights) // 2]


def _footnote_mark(line: Line, after: Line | None) -> bool:
    """A footnote's first line: a raised mark (a number of one or two digits, ``*``, ``†``...)
    smaller than the text that follows it on its row (``² https://github.com/...``), in its
    line or (set apart by poppler) the next one."""
    mark = line.words[0]
    if not (_FOOTNOTE_MARK.fullmatch(mark.text) and mark.height):
        return False
    if len(line.words) > 1:
        return bool(line.words[1].height) and mark.height < FOOTNOTE_MARK_SIZE * line.words[1].height
    return (after is not None and after.y0 < line.y1 and line.y0 < after.y1 and after.words[0].height > 0
            and mark.height < FOOTNOTE_MARK_SIZE * after.words[0].height)


def _column_foot(lines: list[Line], i: int) -> bool:
    """The line is among the last ``FOOTNOTE_LINES`` of its page's column in the section."""
    key = (lines[i].page, lines[i].column)
    after = 0
    for line in lines[i + 1:]:
        if (line.page, line.column) != key:
            break
        after += 1
    return after < FOOTNOTE_LINES


def split_entries(lines: list[Line]) -> list[Entry]:
    body = [ln for ln in lines if ln.text.strip()]
    body = skip_body_text(without_page_edges(without_wide_lines(without_wide_captions(body))))
    if not body:
        return []
    return bound_last(split_numbered(body) or split_labelled(body) or split_unnumbered(body))


def bound_last(entries: list[Entry]) -> list[Entry]:
    """The list with its last entry cut to a plausible length: ``LAST_ENTRY_LINES`` times the
    longest other entry's lines, at least ``MAX_LINES_PER_ENTRY`` (a list's end that no heading
    marks would glue what follows, up to a whole author list, onto its last entry)."""
    if len(entries) < LAST_ENTRY_AFTER:
        return entries
    most = max(MAX_LINES_PER_ENTRY, LAST_ENTRY_LINES * max(len(e.lines) for e in entries[:-1]))
    if len(entries[-1].lines) > most:
        entries[-1] = Entry(entries[-1].lines[:most], entries[-1].number)
    return entries


def _label_at(text: str) -> re.Match[str] | None:
    """The key label opening ``text``: alpha-like (``[AL09]``) or author-year (``[Name et al.
    2018]``, ``[Name and Other 2020]``, as ACM's and some journals' styles print it)."""
    return _KEY_LABEL.match(text) or _AUTHOR_YEAR_LABEL.match(text)


def split_labelled(lines: list[Line]) -> list[Entry] | None:
    """Entries cut at key labels (``[AL09]``, ``[GFY+20]``, ``[Coda]``: alpha-like styles, the
    label right-aligned so its start moves), when most entries carry one; the label is dropped as
    a number's is."""
    starts = [i for i, ln in enumerate(lines) if _label_at(ln.text.lstrip())]
    if len(starts) < KEY_LABELS_AT_LEAST or len(starts) * MAX_LINES_PER_NUMBERED_ENTRY < len(lines):
        return None
    if starts[0] != 0:
        starts = [0] + starts
    entries = []
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        first = lines[a]
        m = _label_at(first.text.lstrip())
        entries.append(Entry([_without_label(first, m.group(0) if m else "")] + lines[a + 1:b]))
    return entries


def entry_text(entry: Entry, keep_hyphen: set[str]) -> str:
    return join_lines([ln.text for ln in entry.lines], keep_hyphen).strip()


def reference_strings(lines: list[Line]) -> list[str]:
    """The reference strings of a document's lines in reading order, in the list's order; an
    empty list when there is no reference section or it holds nothing that reads as an entry.
    Of several sections the paper's list is the last one with entries before any appendix or
    supplement heading (a supplement's own list comes after), else the last one with entries."""
    main: list[Entry] = []
    other: list[Entry] = []
    for supplement, section in find_sections(lines):
        entries = split_entries(section)
        if entries and not supplement:
            main = entries
        elif entries:
            other = entries
    keep = hyphenated_words(lines)
    chosen = main or other
    texts = [entry_text(e, keep) for e in chosen]
    texts = [_before_furniture(t) for t in texts]
    keep_entry = [any(c.isalpha() for c in t) and not FURNITURE.match(t) for t in texts]
    if chosen and all(e.number is None for e in chosen):  # an author-year list: what follows its last entry
        hang = _hang([ln for e in chosen for ln in e.lines])
        last = max((i for i, t in enumerate(texts) if keep_entry[i] and (
            _opens_author_year(t) or _hung(chosen[i], hang))), default=-1)
        keep_entry[last + 1:] = [False] * (len(texts) - last - 1)
    return [t for t, ok in zip(texts, keep_entry) if ok]


def _hung(entry: Entry, hang: float | None) -> bool:
    """An entry set as its hanging list sets them, whatever it opens with (a work with no author or
    year: ``Farming Volatility: How ... reddit.com/r/...``): its first line at the column's edge, the
    others at the list's hang."""
    first, *rest = entry.lines
    return hang is not None and bool(rest) and first.indent < hang / 2 and all(
        abs(ln.indent - hang) <= HANG_MIN / 2 for ln in rest)


def _before_furniture(text: str) -> str:
    """An entry less a journal's closing line glued to it (``This paper has been typeset from a
    TeX/LaTeX file prepared by the author.``, a copyright line)."""
    m = FURNITURE_INSIDE.search(text)
    return text[:m.start()].rstrip() if m and m.start() > 0 else text


def _opens_author_year(text: str) -> bool:
    """An author-year entry: it opens with a name (a capital, a lowercase particle ``van``,
    ``de la``, or the dash of a repeated author) and gives a year, or opens with its year where the
    repeated author's dash is a drawn rule, no glyph (biblatex: ``(2019). An Efficient ...``)."""
    return bool((text[:1].isupper() or PARTICLE_START.match(text) or text[:1] in "\u2014\u2013-_")
                and YEAR.search(text)) or _YEAR_OPENS.match(text) is not None
