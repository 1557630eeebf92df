"""A citation record's canonical bytes (RFC 8785 JCS, ``resolvers/jcs.py``) kept beside the record,
and the record file made of them.

The record file (schema v2) is the JCS of the whole record, its ``content_digest`` and ``receipt``
included, and a newline: one line of sorted, compact JSON (the text and HTML pages are the ones to
read). ``content_digest`` is the SHA-256 over the same members without those two, so the builder
(``fast_build``) encodes each top-level member once, takes the digest over them, and the file is
those bytes with the digest's and the receipt's members put in their sorted places: the record is
not serialised a second time. A consumer's tools may re-serialise the file (``jq -S``, another
indent): the canonical form, not the file's bytes, is what is digested and signed.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from resolvers.jcs import jcs

V1_SCHEMA = "pith.paper-citation-record.v1"
ADDED = ("content_digest", "receipt")  # members the file has and the digest does not


class BuiltRecord(dict):
    """A record as ``fast_build.build_record`` returns it (a plain dict to every reader), with the JCS
    bytes of its members (``members``: name, value, bytes; sorted by name) and the digest taken
    over them. Nothing changes a built record's content after it is built (the writer only adds
    its ``receipt``); ``file_bytes`` checks that each member is still the value it encoded.
    ``unlisted``: the outbound references past the page cap, which the file does not hold and the
    record's pages list on their later page files (``pages.reference_pages``)."""

    __slots__ = ("members", "digest", "unlisted")
    members: tuple[tuple[str, Any, bytes], ...]
    digest: str
    unlisted: list[dict[str, Any]]


def body_digest(members: tuple[tuple[str, Any, bytes], ...]) -> str:
    """``sha256:`` over the JCS of the record without ``content_digest`` and ``receipt`` (its members'
    bytes fed in turn: the 70-100 kB are not copied into one text first)."""
    digest = hashlib.sha256()
    for n, (name, _, encoded) in enumerate(members):
        digest.update(b'{"' if n == 0 else b',"')
        digest.update(name.encode())
        digest.update(b'":')
        digest.update(encoded)
    digest.update(b"}")
    return "sha256:" + digest.hexdigest()


def _intact(record: BuiltRecord) -> bool:
    """Whether the record still holds what its kept bytes encode: the same member values (by
    identity), its own digest, nothing added but the receipt."""
    members = record.members
    extra = len(record) - len(members)
    return (record.get("content_digest") == record.digest and extra == 1 + ("receipt" in record)
            and all(record.get(name) is value for name, value, _ in members))


def file_bytes(record: Mapping[str, Any]) -> bytes:
    """The record file: JCS of the whole record and a newline. A built record's kept bytes are
    joined with its digest and receipt; any other v2 record is encoded whole (``jcs``); a v1
    record keeps v1's file (``json.dumps`` with a two-space indent), whose canonical form
    (``resolvers/canonical.py``) tells ``1.0`` from ``1``."""
    if isinstance(record, BuiltRecord) and _intact(record):
        added = {"content_digest": json.dumps(record.digest).encode()}
        if "receipt" in record:
            added["receipt"] = jcs(record["receipt"])
        pieces: list[bytes] = []
        for name, encoded in sorted([(name, encoded) for name, _, encoded in record.members] + list(added.items())):
            pieces += (b',"', name.encode(), b'":', encoded)
        pieces[0] = b'{"'
        pieces.append(b"}\n")
        return b"".join(pieces)
    if record.get("schema") == V1_SCHEMA:
        return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()
    return jcs(dict(record)) + b"\n"
