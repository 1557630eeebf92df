"""The input side's fast paths give what the full path gives: a JSON line read by
orjson as a plain row (``inputs.plain_row``) is the reference ``validate_row`` makes of
``json.loads`` of it, and a batch's payload (``batch_payload``) unpacks to the references packed,
whatever they hold (lone surrogates, a paper's fields), also from the earlier zlib payloads."""
from __future__ import annotations

import json
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from citeledger.inputs.rows import InputLimits, plain_row, read_jsonl, validate_row
from citeledger.run.batch_codec import MAGIC, pack_references, unpack_references
from resolvers.model import Reference

FIELDS = ["citing_paper", "reference_index", "raw", "source", "extra"]
VALUES = st.one_of(
    st.text(max_size=12), st.sampled_from(["", " ", " p1 ", "\ud800", "x\udcff"]),
    st.integers(min_value=-2**70, max_value=2**70), st.sampled_from([0, 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -1]),
    st.booleans(), st.none(), st.floats(allow_nan=True), st.lists(st.integers(), max_size=2))


def _line(obj: object, ascii_only: bool) -> bytes:
    return json.dumps(obj, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=5), st.booleans(), st.integers(1, 12))
def test_a_plain_row_is_what_validate_row_makes_of_it(obj, ascii_only, max_raw):
    line = _line(obj, ascii_only)
    got = plain_row(line, "in.jsonl", 7, max_raw)
    if got is None:
        return  # (the line takes the full path)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise AssertionError(f"plain row from undecodable line {line!r}") from None
    assert got == validate_row(json.loads(text), "in.jsonl", 7, InputLimits(max_raw_chars=max_raw))


def test_common_rows_take_the_fast_path_and_the_rest_the_full_one(tmp_path):
    rows = [b'{"citing_paper": " p ", "reference_index": 3, "raw": "A. B. Title. doi:10.1/x"}',
            b'{"citing_paper": "p", "reference_index": 18446744073709551616, "raw": "x"}',  # orjson: a float
            b'{"citing_paper": "p", "reference_index": 1, "raw": "\\ud800"}',
            b'{"citing_paper": "p", "reference_index": 2, "raw": "x", "source": 0}',
            b'{"citing_paper": "p", "reference_index": 4, "raw": "x", "source": null, "note": [[1]]}',
            b'{"citing_paper": "p", "reference_index": 5, "raw": NaN}']
    assert plain_row(rows[0], "f", 1, 100) == Reference("p", 3, "A. B. Title. doi:10.1/x", "unknown", "f", 1)
    assert [plain_row(r, "f", 1, 100) for r in rows[1:]] == [None] * 5
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join(rows) + b"\n")
    got = list(read_jsonl(path, InputLimits(), "in.jsonl"))
    assert [type(g).__name__ for g in got] == ["Reference", "InputReject", "InputReject", "InputReject", "Reference",
                                               "InputReject"]
    assert "at most 2^53" in got[1].reason and "lone surrogate U+D800" in got[2].reason
    assert got[3].field == "source" and got[4].source == "unknown" and got[5].field == "raw"


REFS = [Reference("p", 1, "A. Title. doi:10.1/x", "unknown", "in.jsonl", 1),
        Reference("p\u00e9", 2**63 - 1, "\u201cquoted\u201d \U0001f600", "bib", None, None, (("title", "T"),)),
        Reference("p", 3, "x", "pdf", "a.pdf!refs", 9, (("author", "bad \udcff byte"), ("year", "2001")))]


def test_payloads_unpack_to_the_references_packed():
    for refs in (REFS[:2], REFS, []):
        assert unpack_references(pack_references(refs)) == tuple(refs)
    assert pack_references(REFS[:2]).startswith(MAGIC)


def test_earlier_zlib_payloads_still_unpack():
    rows = [[r.citing_paper, r.reference_index, r.raw, r.source, r.file, r.line, *([r.fields] if r.fields else [])]
            for r in REFS]
    old = zlib.compress(json.dumps(rows, ensure_ascii=False).encode("utf-8", "surrogatepass"), 1)
    assert unpack_references(old) == tuple(REFS)
