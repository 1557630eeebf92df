"""JSON read as I-JSON (``resolvers.strict_json``): what every reader agrees on is read, each thing
readers differ on (or cannot hold) is refused saying which rule; a record file is read within bounds
(``storage.json_documents``)."""
from __future__ import annotations

import json
import os

import pytest

from citeledger.app_errors import RecordFileError
from citeledger.storage import json_documents
from resolvers.errors import StrictJSONError
from resolvers.strict_json import MAX_DEPTH, loads_strict


@pytest.mark.parametrize("text", ['{"a": [1, 2.5, -0, 1e3, "x", null, true, {}]}', '"\\ud83d\\ude00"',
                                  "[" * MAX_DEPTH + "]" * MAX_DEPTH, '{"a": {"a": 1}}', '{"b": 1, "a": 2}'])
def test_what_every_reader_agrees_on_is_read_as_json_reads_it(text):
    assert loads_strict(text.encode()) == json.loads(text)


@pytest.mark.parametrize("data, says", [
    (b'{"a": 1, "b": 2, "a": 3}', 'member name "a" appears twice'),
    (b'[{"x": {"y": 1, "y": 1}}]', 'member name "y" appears twice'),
    (b"[NaN]", "NaN is not a JSON number"), (b"[-Infinity]", "-Infinity is not a JSON number"),
    (b"[1e400]", "beyond a double"), (b"[" + b"9" * 5000 + b"]", "not JSON this reader can hold"),
    (b'["\\udc00"]', "lone surrogate"), (b'{"\\ud800": 1}', "lone surrogate"),
    (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH}"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'["\xe9"]', "not UTF-8 (byte 2"), (b"\xef\xbb\xbf{}", "byte order mark"),
    (b"{,}", "line 1 column 2: not JSON"),
])
def test_what_readers_differ_on_is_refused_naming_the_rule(data, says):
    with pytest.raises(StrictJSONError, match=says.replace("(", r"\(")):
        loads_strict(data)


def test_a_record_file_is_a_regular_file_within_the_bound(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"a": 1}')
    assert json_documents.read_document(good) == {"a": 1}
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101 + b"{}")
    with pytest.raises(RecordFileError, match=rf"^{big}: larger than"):
        json_documents.read_document(big, max_bytes=100)
    assert json_documents.read_document(big, max_bytes=103) == {}
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(RecordFileError, match=r"a FIFO \(named pipe\), not a record file"):
        json_documents.read_document(fifo)  # refused without waiting for a writer
    with pytest.raises(RecordFileError, match="a folder"):
        json_documents.read_document(tmp_path)
    with pytest.raises(RecordFileError, match="cannot be opened"):
        json_documents.read_document(tmp_path / "missing.json")
    twice = tmp_path / "twice.json"
    twice.write_text('{"a": 1, "a": 2}')
    with pytest.raises(StrictJSONError, match=rf"^{twice}: member name"):
        json_documents.read_document(twice)
