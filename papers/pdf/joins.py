"""An entry's lines as one string: lines are joined with a space, a word hyphenated at a line end
is joined back (the hyphen kept when the document prints the word hyphenated elsewhere or the next
part starts with a capital or digit), a URL cut after ``/`` or ``.`` is joined, and an identifier
cut by a line break or a space is joined back (without TeX's hyphen where the resolvers read it
so) only when the resolvers' own identifier reading (``resolvers.identifiers.extract``) of the
broken text already gives the joined identifier: no identifier is made up here."""
from __future__ import annotations

import re
from collections.abc import Set

from papers.pdf.words import Line
from resolvers.identifiers.extract import extract_identifiers

ID_WINDOW = 80  # characters each side of a break that the identifier check reads
# A reference of 500 authors runs to ~20,000 characters; a longer "entry" is text that is no list
# (kept whole, but its spaces are not searched for identifiers, which would cost seconds)
MAX_REPAIR_CHARS = 50_000
_ID_HINT = re.compile(r"10\.\d|arxiv|abs/|doi|https?:|www\.", re.I)
_GAP = re.compile(r"(?<=[\d./:_-]) {1,2}(?=[\d./])|(?<=/) {1,2}(?=\S)")
UNHYPHEN = "\x00"  # the separator that also drops the hyphen before it
_URL = re.compile(r"(?:https?://|www\.)\S", re.I)
_URL_BREAKS = ("/", ".", "-", "_", "=", "?", "&", "#", "~")
_WORD_PART = re.compile(r"[^\W\d_]+-\Z")
# characters no DOI ends with, so a line break after one is inside it, with what must follow
_DOI_PUNCTUATION = ("-", ".", "/", "_")  # a DOI's punctuation, which opens no line of prose
_DOI_GOES_ON = {":": str.isdigit, "(": str.isdigit, "_": str.isalnum}
_LETTERS_END = re.compile(r"[^\W\d_]+-\Z")
_LETTERS = re.compile(r"[^\W\d_]+")
_YEAR_GROUP = re.compile(r"\(\d{2}\)\Z")  # Elsevier's DOIs of the 1990s: 10.1016/0370-1573(91)90064-S


def hyphenated_words(lines: list[Line]) -> set[str]:
    """Every hyphenated word printed whole on a line (``semi-supervised``), lower-cased."""
    return {w.text.strip(".,;:()").lower() for ln in lines for w in ln.words if "-" in w.text.strip("-")}


def join_lines(texts: list[str], keep_hyphen: set[str]) -> str:
    """One string from an entry's lines: a space between lines, a hyphenated word joined back,
    an identifier cut by the line break joined back (``_id_break``)."""
    out = ""
    for text in texts:
        text = " ".join(text.split())
        if not text:
            continue
        if not out:
            out = text
            continue
        sep = _separator(out, text, keep_hyphen)
        out = out[:-1] + text if sep == UNHYPHEN else out + sep + text
    return _join_id_gaps(out)


def _separator(before: str, after: str, keep_hyphen: set[str]) -> str:
    """What goes between two lines: "" for an identifier or a URL across the break and after a
    hyphen or dash (``317-`` + ``day``, ``Valenzuela-`` + ``Escarcega``), ``UNHYPHEN`` for a word
    cut at its syllables (``inter-`` + ``ventions``), else a space."""
    joint = _id_break(before, after, keep_hyphen)
    if joint is not None:
        return joint
    tail = before.rsplit(" ", 1)[-1]
    head = after.split(" ", 1)[0]
    if _URL.search(tail) and tail.endswith(_URL_BREAKS) and _url_goes_on(tail, head):
        return ""
    if tail.endswith(("-", "\u2010")) and len(tail) > 1 and tail[-2].isalnum():
        hyphenated = (tail + head).strip(".,;:()").lower()
        cut_word = bool(_WORD_PART.search(tail)) and head[:1].islower() and hyphenated not in keep_hyphen and not (
            _ID_HINT.search(tail) and _printed_whole(tail, head, keep_hyphen))  # "arXiv.astro-" + "ph/9905116"
        return UNHYPHEN if cut_word else ""
    if tail.endswith("\u2013") and head[:1].isdigit():
        return ""
    return " "


def _url_goes_on(tail: str, head: str) -> bool:
    """A URL cut after ``/``, ``-`` ... goes on with a letter or digit; after a full stop only
    with a lower-case letter or digit (a capital starts the next sentence)."""
    first = head[:1]
    return first.isalnum() and (not tail.endswith(".") or first.islower() or first.isdigit())


def _id_break(before: str, after: str, keep_hyphen: Set[str] = frozenset()) -> str | None:
    """How to close a line break the resolvers read an identifier across that neither side holds
    alone: "" when the two sides joined print that same identifier, ``UNHYPHEN`` when they print
    it without the hyphen at the line's end (TeX's, in a DOI set as text: ``mn-`` + ``ras``);
    None for any other break."""
    a, b = before[-ID_WINDOW:], after[:ID_WINDOW]
    if not (_ID_HINT.search(a) or _ID_HINT.search(b)):
        return None
    broken = extract_identifiers(a + "\n" + b)
    alone = extract_identifiers(a), extract_identifiers(b)
    if _doi_runs_on(a, b, alone[0].dois):
        return ""
    new = {i for i in broken.dois + broken.arxiv_ids
           if all(i not in side.dois + side.arxiv_ids for side in alone)}
    new |= _runs_on(a, broken.dois, alone[0].dois)
    if not new:
        return None
    joined = extract_identifiers(a + b)
    if new <= set(joined.dois + joined.arxiv_ids):
        return ""
    if a.endswith("-"):
        unhyphened = extract_identifiers(a[:-1] + b)
        if new <= set(unhyphened.dois + unhyphened.arxiv_ids):
            return "" if _printed_whole(a, b, keep_hyphen) else UNHYPHEN
    return None


def _runs_on(a: str, broken: tuple[str, ...], before: tuple[str, ...]) -> set[str]:
    """The DOIs the resolvers read across the break that go on from the DOI the line ends with
    (``10.21105/joss.`` + ``00024``), though the next line holds the whole DOI again (a URL of it)."""
    if not before or not a.lower().rstrip("./-_:(").endswith(before[-1].rstrip("./-_:(")):
        return set()
    return {d for d in broken if d.startswith(before[-1]) and len(d) > len(before[-1]) and d not in before}


def _printed_whole(a: str, b: str, keep_hyphen: Set[str]) -> bool:
    """The letters before the line's closing hyphen and after the break are printed elsewhere as one
    hyphenated word (``annurev-astro`` of another DOI): the hyphen is the text's, not TeX's."""
    left, right = _LETTERS_END.search(a), _LETTERS.match(b)
    if left is None or right is None:
        return False
    piece = (left.group(0) + right.group(0)).lower()
    return any(piece in word for word in keep_hyphen)


def _doi_runs_on(a: str, b: str, dois: tuple[str, ...] | list[str]) -> bool:
    """The line ends inside a DOI, at a character no DOI ends with (``10.1051/0004-6361:`` +
    ``20066082``, ``10.1016/s0375-9474(`` + ``00)00131-7``, ``10.1162/evco_`` + ``a_00278``; after a
    year in parentheses, ``10.1016/0019-1035(92)`` + ``90185-A``), or the
    next line opens with the DOI's own punctuation, which no word or sentence opens with
    (``10.1145/3297858`` + ``.3304007``, ``10.3847/2041`` + ``-8213/ab0f`` where a URL breaks anywhere),
    and the resolvers read the joined text as that DOI run on."""
    if not dois:
        return False
    last = dois[-1].lower()
    tail = a.lower()
    if b[:1] in _DOI_PUNCTUATION and b[1:2].isalnum() and tail.endswith(last):
        pass  # a URL's break before the DOI's own punctuation (biblatex: "10.1088/0264" + "-9381/25/...")
    elif not b[:1].isalnum():
        return False
    else:
        ends = last[-1] if tail.endswith(last) else next((c for c in _DOI_GOES_ON if tail.endswith(last + c)), "")
        year_group = ends == ")" and _YEAR_GROUP.search(last) is not None and b[0].isdigit()  # "(92)" + "90185-A"
        if not year_group and (ends not in _DOI_GOES_ON or not _DOI_GOES_ON[ends](b[0])):
            return False
    joined = extract_identifiers(a + b)
    return any(d.lower().startswith(last) and any(c.isalnum() for c in d[len(last):]) for d in joined.dois)


def _join_id_gaps(text: str) -> str:
    """Remove a space PDF extraction put inside an identifier (``arXiv:1402. 1517``,
    ``10.1103/ PhysRevD...``) when the resolvers already read the spaced text as the joined id.
    Each space is judged on the words around it (``ID_WINDOW`` characters, widened to whole
    words), so a long entry costs time in proportion to its length."""
    if (not _ID_HINT.search(text) and "." not in text) or len(text) > MAX_REPAIR_CHARS:
        return text
    out: list[str] = []
    pos = 0
    for m in _GAP.finditer(text):
        a = text.rfind(" ", 0, max(0, m.start() - ID_WINDOW)) + 1
        b = text.find(" ", m.end() + ID_WINDOW)
        b = len(text) if b < 0 else b
        window = text[a:b]
        candidate = window[:m.start() - a] + window[m.end() - a:]
        ids = extract_identifiers(window)
        if _shows_more(candidate, window, set(ids.dois + ids.arxiv_ids)):
            out.append(text[pos:m.start()])
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _shows_more(candidate: str, text: str, have: set[str]) -> bool:
    """The joined text prints an id (literally) the spaced text does not, and reads no id the
    spaced text was not already read as."""
    joined = extract_identifiers(candidate)
    got = set(joined.dois + joined.arxiv_ids)
    if not got or not got <= have:
        return False
    lower, spaced = candidate.lower(), text.lower()
    return any(i.lower() in lower and i.lower() not in spaced for i in got)
