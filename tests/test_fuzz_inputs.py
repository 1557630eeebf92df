"""Property-based attacks on the input readers: every row of any file ends as a reference or a
reject (counted line by line), the run goes on, and nothing raises.

Found by these tests: a JSON ``\\ud800`` escape and an undecodable CSV byte used to crash the
batch's Parquet write, and one bad CSV byte dropped every later row of the file.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import InputLimits, InputReject
from papers.tree import decode
from resolvers.model import Reference

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMITS = InputLimits(max_raw_chars=2_000)


def read_all(path: Path, citing_paper: str | None = None, limits: InputLimits = LIMITS) -> list:
    items = list(read_references(path, limits, citing_paper))
    assert all(isinstance(i, (Reference, InputReject)) for i in items)
    return items


def storable(items: list) -> None:
    """What the ledger will store must be valid UTF-8 (Parquet strings): encoding must not fail."""
    for i in items:
        if isinstance(i, Reference):
            (i.citing_paper + i.raw + i.source).encode("utf-8")
        else:
            (i.reason + i.excerpt + (i.field or "")).encode("utf-8")


def scratch(tmp_path_factory, name: str, data: bytes) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(data)
    return path


# --- JSON Lines ---------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)
row_objects = st.fixed_dictionaries(
    {}, optional={"citing_paper": json_values | st.text(max_size=20), "reference_index": json_values | st.integers(-2, 50),
                  "raw": json_values | st.text(max_size=60) | st.just("x" * 2_001), "source": json_values})


def row_line(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


def garbage_line() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=80).filter(lambda b: b"\n" not in b),
        st.integers(1, 3000).map(lambda n: b"[" * n),  # deeply nested
        row_objects.map(lambda o: row_line(o)[: max(1, len(row_line(o)) // 2)]),  # truncated JSON
        st.just(b'{"citing_paper": "p", "reference_index": 1, "raw": "\\ud800 lone"}'),
        st.just('{"citing_paper": "p", "reference_index": 1, "raw": "mojibake Ã© â€™"}'.encode("cp1252", "replace")),
    )


def expected_lines(data: bytes) -> list[int]:
    """Line numbers the reader must account for: every non-blank line, lines ended by \\n, \\r\\n
    or \\r, a leading UTF-8 byte order mark ignored."""
    lines = data.removeprefix(b"\xef\xbb\xbf").splitlines()
    return [n for n, line in enumerate(lines, 1) if line.strip()]


@SETTINGS
@given(st.lists(st.one_of(row_objects.map(row_line), garbage_line()), max_size=25), st.booleans())
@example(lines=[b"\x1f\x8b"], gz=False)  # a plain file opening with gzip's magic is read as gzip
def test_every_jsonl_line_is_a_reference_or_a_reject(tmp_path_factory, lines, gz):
    data = b"\n".join(lines) + b"\n"
    path = scratch(tmp_path_factory, "refs.jsonl.gz" if gz else "refs.jsonl", gzip.compress(data) if gz else data)
    items = read_all(path)
    storable(items)
    if not gz and data.startswith(b"\x1f\x8b"):  # gzip magic: read as gzip, a broken one is a whole-file reject
        assert isinstance(items[-1], InputReject) and items[-1].line is None
        return
    assert sorted(i.line for i in items) == expected_lines(data)
    for item in items:
        if isinstance(item, Reference):  # a reference is only made of rows the contract accepts
            assert item.reference_index >= 1 and item.citing_paper.strip() and len(item.raw) <= LIMITS.max_raw_chars


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_bytes_as_jsonl(tmp_path_factory, data):
    path = scratch(tmp_path_factory, "bytes.jsonl", data)
    items = read_all(path)
    storable(items)
    if data.startswith(b"\x1f\x8b"):  # gzip magic: read as gzip, a broken one is a whole-file reject
        assert isinstance(items[-1], InputReject) and items[-1].line is None
        return
    assert sorted(i.line for i in items) == expected_lines(data)


@SETTINGS
@given(st.binary(min_size=1, max_size=400), st.integers(0, 400))
def test_truncated_gzip_keeps_rows_and_reports_the_break(tmp_path_factory, tail, cut):
    """A gzip file cut short: the rows before the cut are read and one reject names the break."""
    good = b"".join(row_line({"citing_paper": "p", "reference_index": i, "raw": f"ref {i}"}) + b"\n"
                    for i in range(1, 6))
    packed = gzip.compress(good + tail)
    path = scratch(tmp_path_factory, "cut.jsonl.gz", packed[: max(10, len(packed) - 1 - cut)])
    items = read_all(path)
    storable(items)
    assert isinstance(items[-1], InputReject) and items[-1].line is None
    assert "could not be read to the end" in items[-1].reason


def test_oversized_line_is_one_reject_and_reading_goes_on(tmp_path):
    limits = InputLimits(max_raw_chars=10)
    huge = b'{"citing_paper": "p", "reference_index": 1, "raw": "' + b"a" * (limits.max_line_bytes + 10) + b'"}'
    path = tmp_path / "big.jsonl"
    path.write_bytes(huge + b"\n" + row_line({"citing_paper": "p", "reference_index": 2, "raw": "short"}) + b"\n")
    items = read_all(path, limits=limits)
    assert isinstance(items[0], InputReject) and "longer than" in items[0].reason
    assert isinstance(items[1], Reference) and items[1].line == 2


# --- CSV ----------------------------------------------------------------------------------------

cells = st.one_of(st.text(max_size=30), st.sampled_from(["p", "1", "2", " 3 ", "-1", "x", "", "a,b", 'q"q', "l1\nl2",
                                                         "\r\n", "\x00", "é", "\ufeff"]))


@SETTINGS
@given(st.lists(st.lists(cells, min_size=0, max_size=5), max_size=20), st.sampled_from(["\n", "\r\n"]))
@example(rows=[["\n0", "0", "\n"]], newline="\n")  # (a genuine record once read as an unclosed quote)
def test_every_csv_record_is_a_reference_or_a_reject(tmp_path_factory, rows, newline):
    """Ragged rows, embedded newlines and quotes, NUL: each record written is one reference or
    one reject (blank records are skipped, as for JSON Lines) and valid rows keep their text."""
    buf = io.StringIO(newline="")
    # minimal quoting only quotes the terminator's own characters: a bare "\r" with "\n" lines
    # would be a real line break, two records; quote everything in that case
    writer = csv.writer(buf, lineterminator=newline, quoting=csv.QUOTE_MINIMAL if newline == "\r\n" else csv.QUOTE_ALL)
    writer.writerow(["citing_paper", "reference_index", "raw"])
    writer.writerows(rows)
    path = scratch(tmp_path_factory, "refs.csv", buf.getvalue().encode("utf-8", "surrogatepass"))
    items = read_all(path)
    storable(items)
    expected = [r for r in rows if any(c.strip() for c in r)]
    assert len(items) == len(expected)
    for row, item in zip(expected, items):
        if isinstance(item, Reference):
            assert len(row) == 3 and item.raw == row[2] and item.citing_paper == row[0].strip()


@SETTINGS
@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b and b'"' not in b and b"\r" not in b),
                min_size=1, max_size=15))
def test_invalid_utf8_in_csv_rejects_that_row_only(tmp_path_factory, raws):
    lines = [b"citing_paper,reference_index,raw"]
    lines += [b'p,%d,"%s"' % (i, raw) for i, raw in enumerate(raws, 1)]
    path = scratch(tmp_path_factory, "bytes.csv", b"\n".join(lines) + b"\n")
    items = read_all(path)
    storable(items)
    assert [i.line for i in items] == list(range(2, len(raws) + 2))
    for raw, item in zip(raws, items):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            assert isinstance(item, InputReject) and "invalid UTF-8" in item.reason
        else:
            assert isinstance(item, Reference)


# --- Parquet --------------------------------------------------------------------------------------

@SETTINGS
@given(st.lists(st.fixed_dictionaries({"citing_paper": st.none() | st.text(max_size=8),
                                       "reference_index": st.none() | st.integers(-3, 2**40),
                                       "raw": st.none() | st.text(max_size=40)}), max_size=20))
def test_every_parquet_row_is_a_reference_or_a_reject(tmp_path_factory, rows):
    table = pa.Table.from_pylist(rows, schema=pa.schema([("citing_paper", pa.string()),
                                                         ("reference_index", pa.int64()), ("raw", pa.string())]))
    path = tmp_path_factory.mktemp("fuzz") / "refs.parquet"
    pq.write_table(table, path)
    items = read_all(path)
    assert [i.line for i in items] == list(range(1, len(rows) + 1))


@SETTINGS
@given(st.binary(max_size=600))
def test_broken_parquet_is_one_reject(tmp_path_factory, data):
    path = scratch(tmp_path_factory, "broken.parquet", b"PAR1" + data)
    items = read_all(path)
    assert items and all(isinstance(i, InputReject) for i in items)


# --- LaTeX .bbl and BibTeX .bib -------------------------------------------------------------------

bib_pieces = st.lists(st.sampled_from(["@article{", "@book(", "key,", "title = {", "author = {A and B}", "}", "{", ")",
                                       "\n", "year = 2001,", "@comment{", "@string{", "%", "\\bibitem{x}", "\\newblock",
                                       "@", "é", "\x00", "\\%"]) | st.text(max_size=10), max_size=60).map("".join)


@SETTINGS
@given(bib_pieces)
def test_bib_with_unbalanced_braces_accounts_for_every_entry(tmp_path_factory, text):
    """Each ``@type{`` entry is a reference or a reject; a file without one is one reject."""
    path = scratch(tmp_path_factory, "refs.bib", text.encode("utf-8", "surrogatepass"))
    items = read_all(path, citing_paper="paper")
    storable(items)
    assert items
    refs = [i for i in items if isinstance(i, Reference)]
    assert [r.reference_index for r in refs] == sorted(r.reference_index for r in refs)


@SETTINGS
@given(st.lists(bib_pieces, max_size=8))
@example(["\x1f\x1f\x08\x08\x1f\x1f\x1f\x08", "\x1f\x1f\x1f\x08\x08\x1f\x1f\x1f\x08"])  # control bytes: binary
def test_bbl_items_each_become_a_reference_or_a_reject(tmp_path_factory, bodies):
    text = "\\begin{thebibliography}{9}\n" + "".join(f"\\bibitem{{k{i}}} {b}\n" for i, b in enumerate(bodies))
    data = text.encode("utf-8", "surrogatepass")
    path = scratch(tmp_path_factory, "refs.bbl", data)
    items = read_all(path, citing_paper="paper")
    storable(items)
    if decode(data) is None:  # mostly control bytes: the file is binary, one reject says so
        assert [(type(i), i.reason.split(":")[0]) for i in items] == [(InputReject, "not_text")]
        return
    found = sum(uncommented(line).count("\\bibitem{") for line in text.split("\n"))  # bodies may carry their own
    assert len(items) == max(found, 1)  # \bibitem{x}; one after a % is a comment (papers/ reads LaTeX)


def uncommented(line: str) -> str:
    """The line before its first ``%`` that follows an even number of backslashes."""
    for i, ch in enumerate(line):
        if ch == "%" and (i - len(line[:i].rstrip("\\"))) % 2 == 0:
            return line[:i]
    return line
