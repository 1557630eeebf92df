"""A record's text and HTML pages as a record write makes them, fast: the bytes of
``record_pages.render_ledger_text`` and ``render_ledger_html`` (which stay the reference, and what
``citeledger record`` prints), made with one template per reference line and the parts the records
of a write share (a cited work's line, a notice's line, the "read ... resolved" line of a run) made
once, text and HTML escape together, for every record that shows them (``PageCache``). A reference
whose values are not what the builder writes (a number that is not an int, a time that is not text)
is made by ``record_pages``' own code, so the pages are its pages whatever the record holds
(tests/test_page_files.py compares both over varied and generated records)."""
from __future__ import annotations

from typing import Any, Mapping

from citeledger.display import visible_utf8
from citeledger.records import pages as rp
from citeledger.records.pages import ALARM, escape_html, escape_word, notice_line, snapshot_line, work_line

_TEXT_WORDS = (str, type(None))  # values a shared "when" line may be keyed by (1 == 1.0 == True)


class PageCache:
    """The lines of parts many records share, kept over a write (bounded: cleared at ``MOST``).
    ``tails``: each reference's lines after its cited string ("resolved to", "notice", "read ..."),
    text and HTML, by the ids of its resolved view and notice (kept with them, so an id is not
    reused while it is a key) and the values of its time line; these dicts must not change while
    kept (``fast_build.build_record`` changes none it shares)."""

    MOST = 100_000
    __slots__ = ("tails", "scores", "heads", "lines", "whens")

    def __init__(self) -> None:
        self.tails: dict[tuple, tuple] = {}
        self.scores: dict[Any, str] = {}
        self.heads: dict[tuple, tuple[str, str]] = {}
        self.lines: dict[int, tuple[Any, str, str]] = {}  # id of a resolved view or notice: (it, line, escaped)
        self.whens: dict[tuple, tuple[str, str]] = {}  # a "read ... resolved" line's values: its lines

    def head(self, key: tuple) -> tuple[str, str]:
        """A reference's text head ``[N] state via S`` and HTML head (up to its cited string) from
        (number, state, resolver source, notice standing); kept only for an int number and text
        values (1, 1.0 and True are one key but not one page)."""
        index, status, source, standing = key
        via = f" via {source}" if source else ""
        marker = ALARM.get(standing)
        index_h = escape_word(index)
        made = (f"[{index}] {status}{via}",
                f'<div class="ref {escape_word(standing)}" id="ref-{index_h}">\n<p><b>[{index_h}]</b> '
                f'<span class="state">{escape_word(status)}</span>' + (f" via {escape_word(source)}" if source else "")
                + (f' <span class="marker">{escape_word(marker)}</span>' if marker else "") + '</p>\n<p class="raw">')
        if (type(index) is int and type(status) is str and type(standing) is str and type(source) in _TEXT_WORDS
                and len(self.heads) < self.MOST):
            self.heads[key] = made
        return made

    def tail(self, item: Mapping[str, Any]) -> tuple[str, str]:
        """(text tail, HTML tail) of a reference of a v2 record (``KeyError`` for one lacking a field)."""
        resolved, notice = item["resolved"], item["notice"]
        key = (id(resolved), id(notice), item["source_observed_at"], item["source"], item["snapshot_fingerprint"],
               item["snapshot_observed_at"], item["resolved_at"])
        try:
            got = self.tails.get(key)
        except TypeError:  # a value that is no key (a list as a time): made as is
            return _tail(item)
        if got is not None and got[0] is resolved and got[1] is notice:
            return got[2]
        if not all(type(v) in _TEXT_WORDS for v in key[2:]):
            return _tail(item)
        if len(self.tails) >= self.MOST:
            self.tails.clear()
            self.lines.clear()
            self.whens.clear()
        work, work_h = self._line(resolved, work_line)
        notice_text, notice_h = self._line(notice, notice_line)
        when = self.whens.get(key[2:])
        if when is None:
            when = self.whens[key[2:]] = _when(item)
        made = (f"\n    resolved to: {work}\n    notice: {notice_text}{when[0]}",
                f"<p>resolved to: {work_h}</p>\n<p>notice: {notice_h}</p>\n{when[1]}")
        self.tails[key] = (resolved, notice, made)
        return made

    def _line(self, part: Any, make: Any) -> tuple[str, str]:
        """``make(part)`` and its escape, once for a part the records share (kept with the part)."""
        got = self.lines.get(id(part))
        if got is None or got[0] is not part:
            line = make(part)
            got = self.lines[id(part)] = (part, line, escape_html(line))
        return got[1], got[2]

    def score(self, score: Any) -> str:
        """The text page's " score 0.93" of a score (floats and ints only: the key is the value)."""
        got = self.scores.get(score)
        if got is None:
            if not score:  # -0.0 == 0 == False: keys that would share an entry, with "-0.00" and "0.00"
                return f" score {score:.2f}"
            got = f" score {score:.2f}"
            if len(self.scores) < self.MOST:
                self.scores[score] = got
        return got


def _tail(item: Mapping[str, Any]) -> tuple[str, str]:
    """A v2 reference's lines after its cited string, as ``record_pages`` writes them on each page
    (escaped part by part: ``html.escape`` maps each character on its own; a None is "" in HTML)."""
    work, notice = work_line(item["resolved"]), notice_line(item["notice"])
    when = _when(item)
    return (f"\n    resolved to: {work}\n    notice: {notice}{when[0]}",
            f"<p>resolved to: {escape_html(work)}</p>\n<p>notice: {escape_html(notice)}</p>\n{when[1]}")


def _when(item: Mapping[str, Any]) -> tuple[str, str]:
    """A v2 reference's "read ... resolved" line on each page."""
    read, source, resolved_at, snapshot = item["source_observed_at"], item["source"], item["resolved_at"], snapshot_line(item)
    return (f"\n    read {read} from {source}; judged against catalog {snapshot}; resolved {resolved_at}",
            f"<p class=\"when\">read {escape_html(read)} from {escape_html(source)}; judged against catalog {escape_html(snapshot)}; "
            f"resolved {escape_html(resolved_at)}</p>\n")


_HTML_SPECIAL = ("&", "<", ">", '"', "'")


def _references(items: list[dict[str, Any]], cache: PageCache) -> tuple[list[str], list[str]]:
    """Each listed reference's text lines and HTML block, in the page's order: a reference's head
    (number, state, resolver, marker) and tail (its shared lines) come made from ``cache``; its
    cited string is folded (when it is not already), cut and escaped here (not escaped when none of
    the record's has an HTML-special character). A reference lacking a field of the builder's is
    made as ``record_pages`` makes it."""
    texts: list[str] = []
    pages: list[str] = []
    heads, scores = cache.heads, cache.scores
    escape = _escapes(items)
    for item in items:
        try:
            index, status, source, score = item["reference_index"], item["status"], item["resolver_source"], item["score"]
            head = (index, status, source, item["notice"]["standing"])
            raw = item["cited_as"]["raw"] or ""
            text_tail, html_tail = cache.tail(item)
            made = heads.get(head)
        except (KeyError, TypeError):  # a field missing, a value that is no key: the reference's own code
            got = rp.ReferenceItem(item)
            texts.append(rp.text_reference(item, got))
            pages.append(rp.html_reference(item, got))
            continue
        if not (raw.isprintable() and "  " not in raw and raw[:1] != " " and raw[-1:] != " "):
            raw = " ".join(raw.split())  # printable: no whitespace but the space (tests/test_page_files.py)
        if made is None or type(index) is not int:
            made = cache.head(head)
        score_text = (scores.get(score) or cache.score(score)) if isinstance(score, (int, float)) else ""
        texts.append(f"{made[0]}{score_text}\n    cited as: {raw if len(raw) <= 300 else raw[:299] + '…'}{text_tail}")
        raw = raw if len(raw) <= 1000 else raw[:999] + "…"
        pages.append(f"{made[1]}{escape_html(raw) if escape else raw}</p>\n{html_tail}</div>")
    return texts, pages


def _escapes(items: list[dict[str, Any]]) -> bool:
    """Whether a cited string of these references may hold an HTML-special character (True when
    one is not text: the references' own code sees to it)."""
    try:
        joined = "".join([item["cited_as"]["raw"] or "" for item in items])
    except (KeyError, TypeError):
        return True
    return any(c in joined for c in _HTML_SPECIAL)


def render_page_files(record: Mapping[str, Any], cache: PageCache | None = None) -> tuple[bytes, bytes]:
    """The record's text and HTML pages in UTF-8 (controls made visible), as the record files take
    them: ``render_ledger_text(record).encode()`` and ``render_ledger_html(record).encode()``.
    ``cache``: the writer's ``PageCache`` over the records it writes (a fresh one without)."""
    cache = PageCache() if cache is None else cache
    header = rp.header_lines(record)
    texts, pages = _references(record["outbound"]["items"], cache)
    parts: rp.PageParts = {}  # (the listed notices' lines, made as the reference's own code makes them)
    text = rp.text_page(record, header, texts, parts)
    page = rp.html_page(record, header, pages, parts)
    return visible_utf8(text), visible_utf8(page)
