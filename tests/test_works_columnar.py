"""The columnar works-JSONL reader gives exactly the per-row reader's parts, rejects and lines."""
import gzip
import json
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from citeledger.catalog import extract_parts as ce
from citeledger.sources import works_columnar
from citeledger.sources.source_rows import SourceFormat

SOURCES = Path(__file__).parent.parent / "data" / "sources"

# Rows the columnar path must read as the per-row reader does: odd values it normalises itself
# and rows it must hand to the per-row reader (another type, bad JSON, another format's keys).
ODD_ROWS = [
    '{"doi": "https://doi.org/10.1000/ABC.(1)", "title": "  Two  spaces\\tand a tab ", "year": 19999}',
    '{"doi": "", "arxiv_id": "arXiv:1706.03762v5", "title": "<i>Tagged</i> title", "authors": ["", " A.  One ", null]}',
    '{"title": "Only a title", "authors": ["B. Two"], "year": 1999, "first_page": "e12-15", "withdrawn": true}',
    '{"title": "No year", "year": -5, "first_page": "  12", "volume": "", "venue": "J.\\u00a0Phys."}',
    '{"doi": "10.1000/x.", "title": "Trailing dot", "pmid": " 123 ", "type": "journal-article", "extra": {"a": 1}}',
    '{"doi": null, "arxiv_id": null, "title": null}',
    '{"authors": ["no id, no title"]}',
    '{"doi": "10.1000/esc", "\\u0074itle": "Escaped key"}',
    '{"doi": "10.1000/\\ud83d\\ude00", "title": "A surrogate pair \\ud83d\\ude00"}',
    '{"doi": "10.1000/caf\\u00e9", "title": "Caf\\u00e9 \\u2028 line sep", "year": 2999}',
    '{"doi": "10.1000/tex", "title": "The $^{12}{\\\\rm C}(p,n)$ reaction", "authors": ["A. {\\\\\\"O}z"]}',
    '{"doi": "10.1000/lt", "title": "Survival for p < 0.05 and dose > 2 Gy in <i>vivo</i>"}',
    '{"doi": "10.1000/amp", "title": "Ecology &amp; evolution, p &lt; 0.05, &lt;i&gt;in vivo&lt;/i&gt;, R&D, &para"}',
]
PER_ROW_ROWS = [
    '{"doi": "10.1000/num", "title": "Year as string", "year": "2001-02-03"}',
    '{"doi": "10.1000/bad", "title": 12}',
    '{"doi": "10.1000/two", "title": "a"}{"doi": "10.1000/three", "title": "b"}',
    'not json at all',
    '[1, 2]',
    '{"DOI": "10.1000/crossref", "title": "Crossref shape"}',
    '{"doi": "10.1000/n", "title": "A null key of another format", "DOI": null}',
    '{"doi": "10.1000/e", "title": "An escaped key of another format", "D\\u004fI": null}',
    '{"doi": "10.1000/o", "title": "OpenAlex keys", "authorships": []}',
    '{"doi": "10.1000/dup", "doi": "10.1000/dup2", "title": "Duplicate key"}',
    '   ',
    '{"doi": "10.1000/ctl", "title": "raw\ttab"}',
]


def _parts(path: Path, monkeypatch, columnar: bool, block_bytes: int = works_columnar.BLOCK_BYTES):
    monkeypatch.setattr(ce, "COLUMNAR", columnar)
    monkeypatch.setattr(works_columnar, "BLOCK_BYTES", block_bytes)
    tasks = ce.plan(path, SourceFormat.WORKS_JSONL, 1)
    out = Path(tempfile.mkdtemp(dir=path.parent))
    results = [ce.run(t, str(out)) for t in tasks]
    tables = [pq.read_table(r.part) for r in results if r.part]
    return [(r.rows, r.lines, r.rejects, r.examples) for r in results], tables


def _same(path: Path, monkeypatch, block_bytes: int = works_columnar.BLOCK_BYTES):
    (columnar, tables), (per_row, row_tables) = (_parts(path, monkeypatch, True, block_bytes),
                                                 _parts(path, monkeypatch, False))
    assert columnar == per_row
    assert len(tables) == len(row_tables)
    for a, b in zip(tables, row_tables):
        assert a.schema == b.schema
        assert a.to_pylist() == b.to_pylist()
    return per_row


def test_columnar_and_per_row_give_the_same_parts_on_the_shared_works(tmp_path, monkeypatch):
    path = tmp_path / "glutton.jsonl"
    path.write_bytes(gzip.decompress((SOURCES / "glutton_works.jsonl.gz").read_bytes()))
    assert ce.columnar(ce.Task(1, path, SourceFormat.WORKS_JSONL))
    assert _same(path, monkeypatch, block_bytes=1 << 20)[0][0] > 15000  # several blocks


@pytest.mark.parametrize("odd", [*ODD_ROWS, *PER_ROW_ROWS])
def test_columnar_and_per_row_agree_on_odd_rows(tmp_path, monkeypatch, odd):
    good = [json.dumps({"doi": f"10.1000/ok.{i}", "title": f"Title {i}", "authors": ["A. B"], "year": 2000})
            for i in range(5)]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join([*good[:2], odd, *good[2:]]) + "\n", encoding="utf-8")
    _same(path, monkeypatch)


def test_odd_rows_together_and_a_file_without_a_last_line_end(tmp_path, monkeypatch):
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(ODD_ROWS), encoding="utf-8")
    rows = _same(path, monkeypatch)
    assert rows[0][2] == 2  # the row with no identifier and no title, and the one with only an author
    path.write_text("\r\n".join([*ODD_ROWS, *PER_ROW_ROWS]) + "\r\n", encoding="utf-8")
    _same(path, monkeypatch)


def test_rows_the_columnar_path_reads_itself_are_vouched_for():
    assert all(works_columnar.vouched(row.encode() + b"\n") for row in ODD_ROWS)
    block = "\n".join(ODD_ROWS).encode() + b"\n"
    assert works_columnar.read_block(block) is not None
    lone_surrogate = '{"doi": "10.1000/lone", "title": "A lone surrogate \\ud800 escape"}'
    for row in [*PER_ROW_ROWS, lone_surrogate]:
        block = row.encode() + b"\n"
        assert not works_columnar.vouched(block) or works_columnar.read_block(block) is None, row


def test_ranges_of_a_big_file_read_columnar_match_the_per_row_reader(tmp_path, monkeypatch):
    monkeypatch.setattr(ce, "RANGE_BYTES", 4096)
    lines = [json.dumps({"doi": f"10.1000/r.{i}", "title": f"Range title {i}", "authors": [f"N{i}"]})
             for i in range(400)]
    lines[123] = PER_ROW_ROWS[3]
    lines[250] = ODD_ROWS[6]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = _same(path, monkeypatch, block_bytes=1000)
    assert len(results) > 3 and sum(r[2] for r in results) == 2


@pytest.mark.parametrize("columnar", [True, False])
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_lone_surrogate_escape_is_a_reject_naming_its_field(tmp_path, monkeypatch, columnar, gzipped):
    """A ``\\ud800`` escape decodes to a string no Parquet file can hold: before, the whole build
    failed with an internal error at the part's write; now that line is a reject with its field,
    and the lines around it are works."""
    rows = ['{"doi": "10.1000/a", "title": "Before"}',
            '{"doi": "10.1000/b", "title": "Lone \\ud800 escape"}',
            '{"doi": "10.1000/c", "title": "Author", "authors": ["A. One", "B. \\udc80"]}',
            '{"doi": "10.1000/d", "title": "A pair \\ud83d\\ude00 is fine"}']
    path = tmp_path / ("w.jsonl.gz" if gzipped else "w.jsonl")
    data = ("\n".join(rows) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gzipped else data)
    results, tables = _parts(path, monkeypatch, columnar)
    assert [(rows_, rejects) for rows_, _, rejects, _ in results] == [(2, 2)]
    assert [line for line, _ in results[0][3]] == [2, 3]
    assert results[0][3][0][1].startswith("title: not valid Unicode")
    assert results[0][3][1][1].startswith("authors[1]: not valid Unicode")
    assert sorted(d for t in tables for d in t.column("doi").to_pylist()) == ["10.1000/a", "10.1000/d"]


# Files Arrow's JSON reader would read otherwise than the per-row reader (independent review):
# bytes that are not UTF-8 (in a value, in a key), an object over two lines, two objects glued on
# one line (here with as many rows as lines, so no count gives them away), a DOI over 1,000 chars.
READ_OTHERWISE = {
    "latin1": b'{"doi": "10.1000/l1", "title": "Caf\xe9 au lait", "authors": ["M\xfcller"]}\n'
              b'{"doi": "10.1000/l2", "title": "Plain"}\n',
    "bad_key": b'{"tit\xffle": "x", "doi": "10.1000/k1"}\n{"doi": "10.1000/k2", "title": "Plain"}\n',
    "span_and_glued": b'{"title": "d", "doi": "10.1234/d"}\n{"title": "a", "doi": "10.1234/q", "x":\n'
                      b'{"y": 1}}\n{"title": "b", "doi": "10.1234/b"}{"title": "c", "doi": "10.1234/c"}\n',
    "long_doi": ('{"title": "t", "doi": "10.1' + ".1" * 50 + "/" + "a" * 901 + '"}\n').encode(),
}


@pytest.mark.parametrize("name", sorted(READ_OTHERWISE))
def test_files_arrow_reads_otherwise_give_the_per_row_readers_works(tmp_path, monkeypatch, name):
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(READ_OTHERWISE[name])
    results = _same(path, monkeypatch)
    if name == "span_and_glued":
        assert [(r[0], r[2]) for r in results] == [(1, 3)]  # one work; lines 2, 3 and 4 rejected


@pytest.mark.parametrize("title, clean", [
    ("The <i>Drosophila</i> gene <sub>2</sub>", "The Drosophila gene 2"),
    ("<mml:math><mml:mi>x</mml:mi></mml:math> spaces", "x spaces"),
    ("Survival for p < 0.05 and dose > 2 Gy", "Survival for p < 0.05 and dose > 2 Gy"),
    ("Model for 2<d<4 and (<100 mu m) capsules", "Model for 2<d<4 and (<100 mu m) capsules"),
    ("Ecology &amp; evolution", "Ecology & evolution"),  # Crossref's own title text
    ("Survival (p &lt; 0.05) &#8212; &lt;i&gt;in vivo&lt;/i&gt;", "Survival (p < 0.05) \u2014 in vivo"),
    ("R&D &para and AT&T", "R&D &para and AT&T"),  # no ";": no character reference
])
def test_clean_text_drops_tags_and_keeps_comparisons(title, clean):
    """A title's markup goes, its character references are read; "<" and ">" as comparisons stay (a
    "<...>" span was once taken for a tag whatever followed the "<", so "p < 0.05 and dose > 2" became
    "p 2"; "&amp;" stayed, and "amp" was a word of the title)."""
    from resolvers.work_fields import clean_text
    assert clean_text(title) == clean
