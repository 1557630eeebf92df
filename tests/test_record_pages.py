"""The record's text and HTML pages as a record write makes them (``record_pages.render_page_files``,
both at once) are the pages ``render_ledger_text`` and ``render_ledger_html`` make one by one, and
control characters are made visible whichever path finds them."""
from __future__ import annotations

import copy
import sys

import pytest
from test_records import WORK_A, record_of

from citeledger.display import _CONTROLS, shown, visible_controls
from citeledger.records.render.record_pages import PageCache, render_ledger_html, render_ledger_text, render_page_files


def test_both_pages_at_once_are_the_pages_made_one_by_one():
    record = record_of("arXiv:0704.0001", WORK_A)
    assert record["with_notices"] and record["outbound"]["items"]
    assert render_page_files(record) == (render_ledger_text(record).encode(), render_ledger_html(record).encode())
    odd = copy.deepcopy(record)  # times the text page writes as None, text to escape, controls
    odd["outbound"]["items"][0].update(source_observed_at=None, source="a<b>&\"c'\x1b", resolved_at=None)
    odd["outbound"]["items"][1]["cited_as"]["raw"] = "  spaced \t out\n<i>x</i> " * 80
    text, page = (made.decode() for made in render_page_files(odd))
    assert (text, page) == (render_ledger_text(odd), render_ledger_html(odd))
    # a reference whose provenance differs from the page's says its own
    assert "provenance: read None from a<b>&\"c'\\x1b" in text
    assert 'Provenance: read None from a&lt;b&gt;&amp;&quot;c&#x27;\\x1b' in page


@pytest.mark.parametrize("code", [*range(0, 0x100), 0x2028, 0x202E, 0x2066, 0xFEFF, 0x1F600, 0xE0041, 0xD800])
def test_controls_are_made_visible_as_the_regex_says(code):
    """Every character up to U+00FF (C0, DEL, C1, the soft hyphen, and the Latin-1 letters whose
    UTF-8 shares the C1 lead byte 0xC2) and format characters past it in a page: the quick byte
    scan never lets one through."""
    text = f"a{chr(code)}b\n\t"
    expected = _CONTROLS.sub(lambda m: shown(m.group()), text)
    assert visible_controls(text) == expected
    hidden = code < 9 or 10 < code < 0x20 or 0x7F <= code <= 0x9F or code in (0xAD, 0x202E, 0x2066, 0xFEFF, 0xE0041)
    assert (expected == text) == (not hidden)


def test_the_byte_scan_is_what_skips_the_regex(monkeypatch):
    calls = []

    class Counting:
        def sub(self, *args):
            calls.append(args)
            return _CONTROLS.sub(*args)

    monkeypatch.setattr(sys.modules["citeledger.display"], "_CONTROLS", Counting())
    assert visible_controls("plain text, é, ñ\n") == "plain text, é, ñ\n"
    assert calls == []  # no byte that may begin a control or a format character: the regex is not run
    assert visible_controls("\u00a7 and \x1b") == "\u00a7 and \\x1b" and len(calls) == 1


def test_recurring_words_are_escaped_by_their_own_value():
    """The once-a-process escapes of states and numbers key on the value's type too: a ``True`` or
    ``1.0`` read from an odd record file is not page text for ``1``."""
    record = record_of("arXiv:0704.0001", WORK_A)
    render_ledger_html(record)  # reference numbers 1, 2, ... escaped and kept
    odd = copy.deepcopy(record)
    odd["outbound"]["items"][0]["reference_index"] = True
    odd["outbound"]["items"][1]["status"] = 1.0
    page = render_ledger_html(odd)
    assert 'id="ref-True"' in page and 'data-state="1.0"' in page and 'title="1.0: ' in page


@pytest.mark.parametrize("raw", ["A. Author, <i>Title</i> & \"more\" 'x'.", "NUL \x00 inside <b>", "\x00", "two\x00\x00<&>"])
def test_a_references_html_lines_are_each_part_escaped_on_its_own(raw):
    """The cited string, work and notice lines of a reference are escaped by one ``html.escape`` of
    them joined by NUL (or one by one when one of them holds a NUL): the page shows each escaped
    on its own."""
    import html

    record = copy.deepcopy(record_of("arXiv:0704.0001", WORK_A))
    item = record["outbound"]["items"][0]
    item["cited_as"]["raw"] = raw
    item["resolved"] = dict(item["resolved"] or {"work_id": "w"}, title="T <&> \x00 t")
    page = render_ledger_html(record)
    folded = " ".join(raw.split())
    assert f'<p class="raw">{visible_controls(html.escape(folded))}</p>' in page
    assert visible_controls(html.escape('"T <&> \x00 t"')) in page


def test_a_writers_cache_links_cited_works_that_are_ledger_papers():
    """A cited work that is a paper of the ledger links to that paper's record page; the pages with
    the writer's cache are otherwise those made one by one."""
    record = record_of("arXiv:0704.0001", WORK_A)
    plain = render_page_files(record)
    text, page = render_page_files(record, PageCache({"w-b": "10.1234/b"}))
    assert text == plain[0] and page != plain[1]
    assert b'<a href="10.1234%252Fb.html">w-b' in page
