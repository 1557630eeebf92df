"""A JSON document read from a file that someone else may have made: a citation record (citeledger's
or Pith's) or a key document, for ``verify``, ``import-pith`` and the site.

The file is opened without blocking and must be a regular file (a FIFO nobody writes to would hang
the command; a device never ends), at most ``MAX_DOCUMENT_BYTES`` are read (a 30 MB file of small
JSON values takes a gigabyte once parsed), and the bytes are read as I-JSON
(``resolvers.strict_json``: UTF-8, no member name twice, no NaN, bounded nesting). Every refusal is
one ``RecordFileError`` or ``StrictJSONError`` whose message starts with the file's name.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from citeledger.app_errors import RecordFileError
from resolvers.errors import StrictJSONError
from resolvers.strict_json import loads_strict

# A citeledger record lists at most 1,000 references (1.7 KB a linked reference with its notice's
# receipts, so 2-3 MB with fuzzy evidence); a Pith record 100 outbound and 100 inbound observations
# (about 150 KB). At the bound, a file of nothing but empty lists takes about 420 MB once parsed
# (benchmarks/bench_record_reading.py); a 30 MB one is refused having read 16 MiB.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024


def _kind(mode: int) -> str:
    return "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else \
        "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a folder" if stat.S_ISDIR(mode) else \
        "not a regular file"


def read_document_bytes(path: Path, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; ``RecordFileError`` naming the file otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise RecordFileError(f"{path}: {_kind(mode)}, not a record file: not read")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise RecordFileError(f"{path}: larger than {max_bytes // (1024 * 1024)} MiB, more than a record "
                                  "holds: not read")
        return b"".join(chunks)
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_document(path: Path, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """The JSON value of a record or key file, read as I-JSON; an error naming the file otherwise."""
    data = read_document_bytes(path, max_bytes)
    try:
        return loads_strict(data)
    except StrictJSONError as exc:
        raise StrictJSONError(f"{path}: {exc}") from None
