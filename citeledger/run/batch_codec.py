"""A batch's references as the bytes a ``BatchJob`` carries (``payload``): compact, so a
3M-reference run plans in tens of MB, and quick to make and read, since every reference of a run
is packed once when planned and unpacked once when resolved.

The rows (each reference's fields as a JSON array) are written by orjson and compressed by
Zstandard (Arrow's codec), behind a 12-byte header (``MAGIC`` and the rows' size); a row orjson
cannot write (a lone surrogate, kept by ``surrogatepass``) makes the batch's rows json's text.
Payloads of the earlier form (zlib, which never starts with a zero byte) are still read.
"""
from __future__ import annotations

import json
import struct
import zlib
from typing import Sequence

import orjson
import pyarrow as pa

from resolvers.model import Reference

MAGIC = b"\x00zs1"
_SIZE = struct.Struct("<Q")
_CODEC = pa.Codec("zstd", compression_level=1)


def pack_references(references: Sequence[Reference]) -> bytes:
    rows = [[r.citing_paper, r.reference_index, r.raw, r.source, r.file, r.line, *([r.fields] if r.fields else [])]
            for r in references]
    try:
        data = orjson.dumps(rows)
    except TypeError:  # orjson's JSONEncodeError: a lone surrogate (json writes it, surrogatepass)
        data = json.dumps(rows, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return MAGIC + _SIZE.pack(len(data)) + _CODEC.compress(data, asbytes=True)


def unpack_references(payload: bytes) -> tuple[Reference, ...]:
    if payload[:4] == MAGIC:
        size = _SIZE.unpack_from(payload, 4)[0]
        data = _CODEC.decompress(payload[12:], decompressed_size=size, asbytes=True)
    else:
        data = zlib.decompress(payload)
    try:
        rows = orjson.loads(data)
    except orjson.JSONDecodeError:  # json's text: a lone surrogate in a paper's fields
        rows = json.loads(data.decode("utf-8", "surrogatepass"))
    return tuple(Reference(row[0], row[1], row[2], row[3], row[4], row[5],
                           tuple((k, v) for k, v in row[6]) if len(row) > 6 else ()) for row in rows)
