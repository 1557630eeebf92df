"""Pages of positioned text lines (poppler's ``pdftotext -bbox-layout`` XHTML) in reading order.

Poppler gives every word its box; its own reading order can interleave the two columns of a
reference list, so the order is rebuilt here from the coordinates: per page, a gutter (an x that
almost no word covers, in the middle of the page) splits the lines into columns; lines that run
across it (a title, a wide figure) cut the page into bands; a band is read left column, then
right column. Running headers and footers (the same text, digits aside, at the top or bottom of
two pages or more) and bare page numbers are dropped. Plain data and pure functions: no I/O."""
from __future__ import annotations

import re

from papers.pdf.words import Line, Page, Word, parse_pages

SPAN = -1  # the column of a line that runs across the gutter
GUTTER_ZONE = (0.3, 0.7)  # where a column gutter may lie, as fractions of the page width
GUTTER_MAX_COVER = 0.1  # the share of a page's lines that may cross its gutter (titles, wide floats)
GUTTER_SLACK = 0.02  # share of the lines that may cross a gutter point and leave it in the gutter's run
GUTTER_MIN_LINES = 4  # lines needed on each side before a page counts as two columns
LABEL_COLUMN = 0.8  # share of one-word lines that makes a left "column" a list's labels
SHORT = 0.4  # a line narrower than this share of the page may be a heading over a two-column part
MAX_CUT_TRIES = 24  # short lines tried as the top of a two-column part, per page (bounds the work)
CENTRED = 0.05  # a line whose middle is this close to the gutter (share of the page width) spans both columns
GUTTER_MOVE = 0.01  # a page's gutter this far (share of the page width) from the document's usual one lies elsewhere
MARGIN_GAP = 2.0  # a gap (in line heights) no word space or justified line reaches
BAND_GAP = 3.0  # line steps of empty height across both columns that part two pairs of columns
BAND_ALIGN = 1.5  # points: two columns balanced over such a gap stop (and go on) at one height
EDGE_LINES = 3  # lines looked at, at the top and at the bottom of a page, for headers and footers
HEADER_DRIFT = 3.0  # points: a running header or footer sits at the same height on every page
PAGE_NUMBER_GAP = 1.4  # a page number stands over this many usual row steps from the text
LINE_NUMBERS_MIN = 5  # aligned numbers on a page before they count as a manuscript's line numbers
LINE_NUMBER_SIZE = 0.92  # line numbers are set smaller than the text beside them (lineno: \tiny)
LINE_NUMBER_ALIGN = 1.5  # points: the numbers of one margin share an edge (right-aligned, or left)
LINE_NUMBER_PAGES = 3  # pages (and half the document's at least) numbered at one edge: a margin's numbers
_DIGITS = re.compile(r"\d+")
_LABEL = re.compile(r"\[[^\[\]]{1,12}\]")  # a key label alone on its line
_LINE_NUMBER = re.compile(r"\d{1,5}")
_NAMES_ID = re.compile(r"doi|arxiv|#\.#/|https?:|www\.")
_PAGE_NUMBER = re.compile(r"(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?", re.I)


def drop_line_numbers(pages: list[Page]) -> None:
    """Drop a manuscript's line numbers (``lineno``, journals' review modes) wherever they stand:
    bare numbers sharing an edge (a margin, or the gutter between two columns) that rise down
    the page in even steps (one per line, or every fifth line numbered), either set smaller than
    the text beside them (at least ``LINE_NUMBERS_MIN`` on a page, or, once a page has shown such
    numbers, two or more of the same size: the short column of a last page), or, whatever their
    size, standing at the same edge on most pages of the document (body text and list alike: a
    list's own bare labels stand only on its pages). A list's labels are set in its text's size,
    so they stay. Read as text, line numbers would open an entry with a number, glue two
    entries, or sit inside a DOI cut at a line end."""
    small = [_line_number_groups(page, True) for page in pages]
    sizes = {round(w.height, 1) for page in small for members in page if _numbers_lines(members, LINE_NUMBERS_MIN)
             for _, w in members}
    every = [_line_number_groups(page, False) for page in pages]
    pages_at: dict[int, int] = {}
    for page_groups in every:
        for edge in {_edge_key(members) for members in page_groups if _numbers_lines(members, LINE_NUMBERS_MIN)}:
            pages_at[edge] = pages_at.get(edge, 0) + 1
    with_text = sum(1 for page in pages if page.lines)
    margins = {edge for edge, count in pages_at.items() if count >= max(LINE_NUMBER_PAGES, with_text / 2)}
    for page, small_groups, all_groups in zip(pages, small, every):
        drop: set[int] = set()
        for members in small_groups:
            if _numbers_lines(members, LINE_NUMBERS_MIN) or (
                    _numbers_lines(members, 2) and all(round(w.height, 1) in sizes for _, w in members)):
                drop.update(id(w) for _, w in members)
        for members in all_groups:
            if _edge_key(members) in margins and _numbers_lines(members, 2):
                drop.update(id(w) for _, w in members)
        if drop:
            _drop_words(page, drop)


def _edge_key(members: list[tuple[Line, Word]]) -> int:
    """Where a group of numbers stands: its members' shared edge (the right one for right-aligned
    numbers, else the left), in ``LINE_NUMBER_ALIGN`` steps."""
    rights = sorted(w.x1 for _, w in members)
    lefts = sorted(w.x0 for _, w in members)
    spread = (rights[-1] - rights[0], lefts[-1] - lefts[0])
    return round((rights[len(rights) // 2] if spread[0] <= spread[1] else lefts[len(lefts) // 2]) / LINE_NUMBER_ALIGN)


def _line_number_groups(page: Page, smaller: bool) -> list[list[tuple[Line, Word]]]:
    """The page's bare numbers (``smaller``: those set smaller than the text beside them) grouped
    by a shared edge (right-aligned numbers by their right edge, left-aligned ones by their left)."""
    text = [ln for ln in page.lines if not _LINE_NUMBER.fullmatch(ln.text)]
    if not text:
        return []
    heights = sorted(ln.y1 - ln.y0 for ln in text)
    page_height = heights[len(heights) // 2]

    def small(line: Line, word: Word) -> bool:
        """Smaller than the text beside it: the other words of its line, else the lines on its
        row (a list's label is its entry's size)."""
        size = word.height or line.y1 - line.y0
        beside = sorted(w.height for w in line.words
                        if w is not word and w.height and not _LINE_NUMBER.fullmatch(w.text))
        if not beside:
            beside = sorted(t.y1 - t.y0 for t in text if t.y0 < line.y1 and line.y0 < t.y1 and t is not line)
        return size < LINE_NUMBER_SIZE * (beside[len(beside) // 2] if beside else page_height)

    found = [(ln, w) for ln in page.lines for w in ln.words
             if _LINE_NUMBER.fullmatch(w.text) and (not smaller or small(ln, w))]
    out: list[list[tuple[Line, Word]]] = []
    for edge in (lambda w: w.x1, lambda w: w.x0):
        groups: dict[int, list[tuple[Line, Word]]] = {}
        for line, word in found:
            groups.setdefault(round(edge(word) / LINE_NUMBER_ALIGN), []).append((line, word))
        for key in sorted(groups):  # an edge that falls between two buckets: join the neighbours
            if key - 1 in groups and len(groups[key - 1]) < len(groups[key]):
                groups[key] += groups.pop(key - 1)
        out += groups.values()
    return out


def _drop_words(page: Page, drop: set[int]) -> None:
    kept = []
    for line in page.lines:
        words = [w for w in line.words if id(w) not in drop]
        if len(words) == len(line.words):
            kept.append(line)
        elif words:
            kept.append(Line(line.page, words[0].x0, line.y0, words[-1].x1, line.y1, words, line.column, line.left))
    page.lines = kept


def _numbers_lines(members: list[tuple[Line, Word]], at_least: int) -> bool:
    """Numbers that rise down the page in even steps (1, 2, 3 or 5, 10, 15: a gap between
    paragraphs or entries skips no number), most pairs of neighbours rising by the same step."""
    if len(members) < at_least:
        return False
    ordered = sorted(members, key=lambda m: m[0].y0)
    steps = [int(b[1].text) - int(a[1].text) for a, b in zip(ordered, ordered[1:]) if b[0].y0 > a[0].y0]
    if not steps:
        return False
    common = max(set(steps), key=steps.count)
    return common > 0 and steps.count(common) >= 0.6 * len(steps) and sum(s > 0 for s in steps) >= 0.8 * len(steps)


def edge_key(line: Line) -> str:
    """A header or footer's text with its numbers blanked: ``Journal 12 (2019) 345`` recurs."""
    return _DIGITS.sub("#", " ".join(line.text.split())).lower()


def drop_headers(pages: list[Page]) -> None:
    """Drop running headers and footers (the same text, numbers aside, among the first or last
    ``EDGE_LINES`` lines of two pages or more) and bare page numbers at a page's top or bottom."""
    def edges(page: Page) -> list[Line]:
        ordered = sorted(page.lines, key=lambda ln: ln.y0)
        return ordered[:EDGE_LINES] + ordered[-EDGE_LINES:]

    seen: dict[str, list[tuple[int, float]]] = {}
    for number, page in enumerate(pages):
        for line in edges(page):
            seen.setdefault(edge_key(line), []).append((number, line.y0))
    for page in pages:
        drop = {id(ln) for ln in edges(page)
                if _running(edge_key(ln), ln.y0, seen, len(pages))
                or (_PAGE_NUMBER.fullmatch(ln.text.strip()) and _outside(ln, page))}
        page.lines = [ln for ln in page.lines if id(ln) not in drop]


def _running(key: str, y0: float, seen: dict[str, list[tuple[int, float]]], count: int) -> bool:
    """A running header or footer: text (a letter at least: a bare number is a page number or a
    list's label, told apart by ``_outside``) seen at the same height at the edge of two pages or
    more (two entries that open alike, ``[9] Abbott, R., ...`` and ``[10] Abbott, R., ...``, at
    a page's foot and the next page's head are no header). A line that names an identifier
    (``104037. arXiv:1205.2287, doi:10.1103/PhysRevD.86.104037.``: numbers blanked, the last
    line of two entries of one journal can read alike) must stand on half the ``count`` pages,
    three at least, as a journal's DOI in its running footer does."""
    pages = {number for number, y in seen.get(key, []) if abs(y - y0) <= HEADER_DRIFT}
    least = max(3, count // 2) if _NAMES_ID.search(key) else 2
    return len(pages) >= least and any(c.isalpha() for c in key)


def _outside(line: Line, page: Page) -> bool:
    """A bare number outside the text: on the page's first or last row, or alone on its row (a
    list's label ``4`` has its entry's text beside it, inside the page), set apart from the nearest
    other row by over ``PAGE_NUMBER_GAP`` times the page's usual step from row to row (an entry's last
    line ``1217``, the end of a DOI at the foot of a page, sits at the usual step: the lower quartile
    of the steps, as a page's last lines may stand far above its number)."""
    top = min(ln.y1 for ln in page.lines)
    bottom = max(ln.y0 for ln in page.lines)
    beside = [other for other in page.lines if other is not line and other.y0 < line.y1 and line.y0 < other.y1]
    if not (line.y0 < top or line.y1 > bottom or not beside):
        return False
    rows = sorted({round(ln.y0) for ln in page.lines})
    steps = sorted(b - a for a, b in zip(rows, rows[1:]) if b > a + 1)
    others = [abs(ln.y0 - line.y0) for ln in page.lines if ln is not line and ln not in beside]
    if not steps or not others:
        return True
    return min(others) > PAGE_NUMBER_GAP * steps[(len(steps) - 1) // 4]


def find_gutter(page: Page) -> float | None:
    """The x between two columns: the point of the page's middle that the fewest words cover,
    when at most ``GUTTER_MAX_COVER`` of the lines cross it and both sides hold lines."""
    width = int(page.width) or int(max((ln.x1 for ln in page.lines), default=0)) + 1
    if width <= 0 or not page.lines:
        return None
    cover = [0] * (width + 2)
    for line in page.lines:
        for word in line.words:
            a, b = max(0, int(word.x0)), min(width + 1, int(word.x1) + 1)
            if a < b:
                cover[a] += 1
                cover[b] -= 1
    running, counts = 0, []
    for step in cover[:width + 1]:
        running += step
        counts.append(running)
    lo, hi = int(width * GUTTER_ZONE[0]), int(width * GUTTER_ZONE[1])
    if hi <= lo:
        return None
    best = min(counts[lo:hi])
    if best > GUTTER_MAX_COVER * len(page.lines):
        return None
    # the middle of the longest run of (nearly) least-covered points: a line or two across the
    # gutter (a note under both columns) must not cut it into pieces narrower than a list's labels
    near = best + max(1, int(GUTTER_SLACK * len(page.lines)))
    runs, start = [], None
    for x in range(lo, hi + 1):
        low = x < hi and counts[x] <= near
        if low and start is None:
            start = x
        elif not low and start is not None:
            runs.append((x - start, start, x))
            start = None
    _, a, b = max(runs)
    gutter = (a + b) / 2
    left = [ln for ln in page.lines if ln.x1 <= gutter]
    right = [ln for ln in page.lines if ln.x0 >= gutter]
    if len(left) < GUTTER_MIN_LINES or len(right) < GUTTER_MIN_LINES:
        return None
    # a column of single words is a list's labels set apart from its entries (biblatex's
    # alphabetic [Fan+08] in a wide margin, [De 90] of a particle), not a column of text
    single = sum(1 for ln in left if len(ln.words) == 1 or _LABEL.fullmatch(ln.text))
    return None if single >= LABEL_COLUMN * len(left) else gutter


def split_columns(page: Page, gutter: float) -> list[Line]:
    """Each line cut at the gutter when its words fall on both sides; a line with a word across
    the gutter that is centred on it (a heading over both columns) or reaches well into both
    columns is ``SPAN``, else it joins the column holding most of it (a long URL run over)."""
    out: list[Line] = []
    for line in page.lines:
        left = [w for w in line.words if w.x1 <= gutter]
        right = [w for w in line.words if w.x0 >= gutter]
        if len(left) + len(right) == len(line.words):
            for column, words in ((0, left), (1, right)):
                if words:
                    out.append(Line(line.page, words[0].x0, line.y0, words[-1].x1, line.y1, words, column))
            continue
        margin = 0.15 * page.width
        centred = abs((line.x0 + line.x1) / 2 - gutter) < CENTRED * page.width
        if centred or (line.x0 < gutter - margin and line.x1 > gutter + margin):
            line.column = SPAN
        else:
            line.column = 0 if gutter - line.x0 > line.x1 - gutter else 1
        out.append(line)
    return out


def merge_rows(lines: list[Line]) -> list[Line]:
    """Lines of one column that sit on the same row (a ``[12]`` label apart from its text, a
    line poppler cut in two) become one line, words left to right."""
    out: list[Line] = []
    for line in sorted(lines, key=lambda ln: (ln.y1, ln.x0)):
        prev = out[-1] if out else None
        height = min(line.y1 - line.y0, prev.y1 - prev.y0) if prev else 0.0
        if prev and abs(prev.y1 - line.y1) < 0.35 * height and (line.x0 >= prev.x1 or line.x1 <= prev.x0):
            words = sorted(prev.words + line.words, key=lambda w: w.x0)
            out[-1] = Line(prev.page, min(prev.x0, line.x0), min(prev.y0, line.y0), max(prev.x1, line.x1),
                           max(prev.y1, line.y1), words, prev.column)
        else:
            out.append(line)
    return out


def drop_margin_number(line: Line) -> Line:
    """A line without the bare number printed far to its right (a manuscript's line numbers in
    the margin or gutter): digits after a gap of over ``MARGIN_GAP`` line heights."""
    words = line.words
    if len(words) >= 2 and words[-1].text.isdigit() and \
            words[-1].x0 - words[-2].x1 > MARGIN_GAP * (line.y1 - line.y0):
        return Line(line.page, line.x0, line.y0, words[-2].x1, line.y1, words[:-1], line.column, line.left)
    return line


def _columns(page: Page, usual: float | None = None) -> list[Line]:
    """The page's lines with their columns: split at the page's gutter; else, when the page ends
    in two columns under one-column text (a reference list set in two columns at the end of a
    one-column paper), the lines under the highest short line across the page's middle (a
    heading) below which the same gutter still appears are split there and the lines above are
    ``SPAN``; else, on a page of a
    two-column document whose wide figures leave too few lines for a gutter of its own, split at
    the document's ``usual`` gutter (a line across it spans both columns). A page whose own
    gutter lies elsewhere than the usual one, which is as clear a gutter on this page, is split at
    the usual one: a wide table's cells over the columns can leave the narrowest cover at the gap
    between a list's labels and its entries' text."""
    gutter = find_gutter(page)
    if gutter is not None and usual is not None and abs(gutter - usual) > GUTTER_MOVE * page.width \
            and _clear_gutter(page, usual):
        gutter = usual
    if gutter is not None:
        return split_columns(page, gutter)
    middle = page.width / 2
    short = [ln for ln in sorted(page.lines, key=lambda ln: -ln.y0)
             if ln.x1 - ln.x0 < SHORT * page.width and ln.x0 < middle < ln.x1]
    found: tuple[float, Page, float] | None = None
    for head in short[:MAX_CUT_TRIES]:  # upwards, while the part below keeps its gutter
        below = Page(page.number, page.width, [ln for ln in page.lines if ln.y0 >= head.y1])
        gutter = find_gutter(below)
        if found is not None and (gutter is None or abs(gutter - found[2]) > GUTTER_MOVE * page.width):
            break
        if gutter is not None:
            found = (head.y1, below, gutter)
    if found is None:
        return split_columns(page, usual) if usual is not None else list(page.lines)
    cut, below, gutter = found
    above = [ln for ln in page.lines if ln.y0 < cut]
    for line in above:
        line.column = SPAN
    return above + split_columns(below, gutter)


def _clear_gutter(page: Page, x: float) -> bool:
    """``x`` can be the page's gutter: at most ``GUTTER_MAX_COVER`` of its lines have a word across
    it and ``GUTTER_MIN_LINES`` lines at least stand wholly on each side."""
    across = sum(1 for line in page.lines if any(w.x0 < x < w.x1 for w in line.words))
    left = sum(1 for line in page.lines if line.x1 <= x)
    right = sum(1 for line in page.lines if line.x0 >= x)
    return across <= GUTTER_MAX_COVER * len(page.lines) and min(left, right) >= GUTTER_MIN_LINES


def usual_gutter(pages: list[Page]) -> float | None:
    """The gutter most pages of a two-column document share (half the pages or more, within
    ``CENTRED`` of the page's width of each other), else None."""
    found = [(g, page.width) for page in pages if page.lines for g in [find_gutter(page)] if g is not None]
    if not found or 2 * len(found) < sum(1 for page in pages if page.lines):
        return None
    middle = sorted(g for g, _ in found)[len(found) // 2]
    near = [g for g, width in found if abs(g - middle) <= CENTRED * width]
    return middle if 2 * len(near) >= len(found) else None


def page_order(page: Page, usual: float | None = None) -> list[Line]:
    """The page's lines in reading order: bands cut by ``SPAN`` lines, each band's left column
    then its right column, top to bottom; every line knows its column's left edge."""
    lines = _columns(page, usual)
    by_column: dict[int, list[Line]] = {}
    for line in lines:
        by_column.setdefault(line.column, []).append(line)
    merged = [drop_margin_number(ln) for col in by_column.values() for ln in merge_rows(col)]
    for column, group in by_column.items():
        edge = min(ln.x0 for ln in group)
        for line in merged:
            if line.column == column:
                line.left = edge
    spans = sorted((ln for ln in merged if ln.column == SPAN), key=lambda ln: ln.y0)
    cuts = sorted({ln.y0 for ln in spans} | set(band_cuts(merged))) + [float("inf")]
    ordered: list[Line] = []
    top = float("-inf")
    for cut in cuts:
        band = [ln for ln in merged if ln.column != SPAN and top <= ln.y0 < cut]
        ordered += sorted(band, key=lambda ln: (ln.column, ln.y0, ln.x0))
        ordered += [ln for ln in spans if ln.y0 == cut]
        top = cut
    return ordered


def band_cuts(lines: list[Line]) -> list[float]:
    """Where a page's two columns both stop at one height and both go on lower at one height, over a
    gap of ``BAND_GAP`` line steps (balanced columns over a new pair of columns with nothing across
    the page between: REVTeX sets a short paper's list under its body so): the top of the lower
    pair, which is read after the whole of the upper one."""
    columns = [sorted((ln for ln in lines if ln.column == c), key=lambda ln: ln.y0) for c in (0, 1)]
    if not all(len(c) >= 2 for c in columns):
        return []
    steps = sorted(b.y0 - a.y0 for c in columns for a, b in zip(c, c[1:]) if b.y0 > a.y0)
    step = steps[len(steps) // 2]
    gaps = [[(a.y0, b.y0) for a, b in zip(c, c[1:]) if b.y0 - a.y0 > BAND_GAP * step] for c in columns]
    return [min(b, d) for a, b in gaps[0] for c, d in gaps[1]
            if abs(a - c) <= BAND_ALIGN and abs(b - d) <= BAND_ALIGN]


def reading_order(xhtml: bytes) -> list[Line]:
    """Every line of the document in reading order, running headers and page numbers dropped."""
    pages = list(parse_pages(xhtml))
    drop_line_numbers(pages)
    drop_headers(pages)
    usual = usual_gutter(pages)
    return [line for page in pages for line in page_order(page, usual)]
