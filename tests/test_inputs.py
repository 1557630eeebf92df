"""Input readers: every row ends as a reference or as a reject naming file, line and field."""
import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeledger.inputs.dedupe import read_inputs
from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import InputLimits, InputReject
from resolvers.model import Reference


def split(items):
    refs = [i for i in items if isinstance(i, Reference)]
    rejects = [i for i in items if isinstance(i, InputReject)]
    return refs, rejects


def test_broken_jsonl_lines_become_rejects(tmp_path):
    path = tmp_path / "broken.jsonl"
    lines = [
        json.dumps({"citing_paper": "x", "reference_index": 1, "raw": "Vaswani A. Attention. arXiv:1706.03762"}),
        "{not json",
        json.dumps({"citing_paper": "x", "reference_index": 3}),
        json.dumps({"citing_paper": "x", "reference_index": "three", "raw": "abc"}),
        json.dumps({"citing_paper": "x", "reference_index": 5, "raw": "A" * 1_000_000}),
        json.dumps({"citing_paper": "x", "reference_index": 6, "raw": "Smith J. A title\x00 with NUL. 2001."}),
        json.dumps({"citing_paper": "x", "reference_index": 0, "raw": "zero"}),
        json.dumps({"citing_paper": 7, "reference_index": 8, "raw": "numeric paper id"}),
        json.dumps(["not", "an", "object"]),
    ]
    path.write_text("\n".join(lines) + "\n")
    refs, rejects = split(list(read_references(path)))
    assert [r.reference_index for r in refs] == [1, 6]
    assert refs[1].raw == "Smith J. A title\x00 with NUL. 2001."  # kept verbatim
    by_line = {r.line: r for r in rejects}
    assert sorted(by_line) == [2, 3, 4, 5, 7, 8, 9]
    assert by_line[2].reason.startswith("bad JSON")
    assert by_line[3].field == "raw" and "missing" in by_line[3].reason
    assert by_line[4].field == "reference_index"
    assert by_line[5].field == "raw" and "exceeds the limit" in by_line[5].reason
    assert by_line[7].field == "reference_index"
    assert by_line[8].field == "citing_paper"
    assert str(path) in by_line[2].message and ":2:" in by_line[2].message


def test_invalid_utf8_and_oversized_line(tmp_path):
    path = tmp_path / "bytes.jsonl"
    good = json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "ok"}).encode()
    path.write_bytes(good + b"\n" + b'{"raw": "\xff\xfe"}\n' + b"x" * (17 << 20) + b"\n" + good.replace(b"1", b"2") + b"\n")
    refs, rejects = split(list(read_references(path, InputLimits(max_raw_chars=100))))
    assert [r.reference_index for r in refs] == [1, 2]
    assert [(r.line, r.reason.split()[0]) for r in rejects] == [(2, "invalid"), (3, "line")]


def test_gzip_jsonl_and_truncated_gzip(tmp_path):
    rows = [{"citing_paper": "p", "reference_index": i, "raw": f"ref {i}"} for i in range(1, 2001)]
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
    whole = tmp_path / "refs.jsonl.gz"
    whole.write_bytes(data)
    assert len(split(list(read_references(whole)))[0]) == 2000
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    refs, rejects = split(list(read_references(cut)))
    assert 0 < len(refs) < 2000
    assert rejects and "could not be read to the end" in rejects[-1].reason


def test_csv_with_embedded_newlines_and_ragged_rows(tmp_path):
    path = tmp_path / "refs.csv"
    path.write_text('citing_paper,reference_index,raw,source\n'
                    'p,1,"Smith J.\nA title with a line break. 2001.",pdf_text\n'
                    'p,2,only three,fields,extra\n'
                    'p,x,bad index,\n'
                    'p,4,"Jones K. Another, with comma. 1999.",\n')
    refs, rejects = split(list(read_references(path)))
    assert [(r.reference_index, r.source) for r in refs] == [(1, "pdf_text"), (4, "unknown")]
    assert "\n" in refs[0].raw
    assert [(r.line, r.field) for r in rejects] == [(4, None), (5, "reference_index")]
    assert "ragged" in rejects[0].reason


def test_parquet_input(tmp_path):
    path = tmp_path / "refs.parquet"
    pq.write_table(pa.table({"citing_paper": ["p", "p"], "reference_index": [1, 2],
                             "raw": ["A reference. 2001.", None]}), path)
    refs, rejects = split(list(read_references(path)))
    assert [r.reference_index for r in refs] == [1]
    assert rejects[0].line == 2 and rejects[0].field == "raw"


def test_bbl_and_bib_need_a_citing_paper(tmp_path):
    bbl = tmp_path / "paper.bbl"
    bbl.write_text(r"""\begin{thebibliography}{2}
\bibitem{vaswani} A.~Vaswani et~al.
\newblock {\em Attention is all you need}.
\newblock arXiv:1706.03762, 2017.
\bibitem[Smith(2001)]{smith} J.~Smith. \newblock A title. \newblock {\em J. Things}, 3:1--9, 2001.
\end{thebibliography}
""")
    _, rejects = split(list(read_references(bbl)))
    assert rejects[0].field == "citing_paper"
    refs, rejects = split(list(read_references(bbl, citing_paper="2101.00001")))
    assert not rejects
    assert [r.reference_index for r in refs] == [1, 2]
    assert refs[0].raw == "A. Vaswani et al. Attention is all you need. arXiv:1706.03762, 2017."
    assert refs[0].line == 2

    bib = tmp_path / "refs.bib"
    bib.write_text("@comment{ignored}\n@article{a, title = {A {B} title}, year = {2001}, eprint = {1706.03762}}\n"
                   "@article{broken, title = {unbalanced\n@book{c, title = {Fine}}\n")
    refs, rejects = split(list(read_references(bib, citing_paper="p")))
    assert [r.reference_index for r in refs] == [1, 3]
    # the entry rendered as a reference, not its BibTeX source
    assert refs[0].raw == "A B title. 2001. arXiv:1706.03762."
    assert rejects[0].line == 3 and "unbalanced" in rejects[0].reason


def test_duplicate_references_are_settled_whatever_the_order_of_the_inputs(tmp_path):
    """Identical duplicates keep one row; conflicting ones are all rejected naming every place;
    ``a b`` and ``b a`` give the same references (before: the first file won)."""
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    row = lambda i, raw: json.dumps({"citing_paper": "p", "reference_index": i, "raw": raw}) + "\n"  # noqa: E731
    a.write_text(row(1, "first") + row(2, "same") + row(3, "only in a"))
    b.write_text(row(1, "again") + row(2, "same") + row(2, "same"))
    refs, rejects = read_inputs([a, b], InputLimits())
    assert sorted((r.reference_index, r.raw) for r in refs) == [(2, "same"), (3, "only in a")]
    conflict = [r for r in rejects if "conflicting" in r.reason]
    assert len(conflict) == 2 and all(f"{a}:1" in r.reason and f"{b}:1" in r.reason for r in conflict)
    same = [r for r in rejects if "the same row is kept" in r.reason]
    assert len(same) == 2 and all(f"{a}:2" in r.reason for r in same)
    refs2, rejects2 = read_inputs([b, a], InputLimits())
    assert sorted((r.citing_paper, r.reference_index, r.raw, r.file, r.line) for r in refs) == \
        sorted((r.citing_paper, r.reference_index, r.raw, r.file, r.line) for r in refs2)
    assert sorted(r.message for r in rejects) == sorted(r.message for r in rejects2)


@pytest.mark.parametrize("content", [b"", b"\n\n", b"PAR1garbage"])
def test_empty_or_broken_files_do_not_crash(tmp_path, content):
    path = tmp_path / ("x.parquet" if content.startswith(b"PAR1") else "x.jsonl")
    path.write_bytes(content)
    refs, rejects = split(list(read_references(path)))
    assert not refs
    if content.startswith(b"PAR1"):
        assert "unreadable Parquet" in rejects[0].reason
