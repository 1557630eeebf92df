"""A citation record's JSON: its schema (v2, ``citeledger.paper-citation-record.v2``; v1 records,
``pith.paper-citation-record.v1``, stay readable and checkable), its values (``plain_value``: what
DuckDB, Arrow and numpy give, as JSON values), its canonical bytes and content digest, and the
record file made of them. The one canonical JSON of a record: RFC 8785 JCS (``resolvers/jcs.py``)
for v2; v1 keeps the strict form it was written with (``resolvers/canonical.py``).

The record file (v2) is the JCS of the whole record, its ``content_digest`` and ``receipt``
included, and a newline: one line of sorted, compact JSON (the text and HTML pages are the ones to
read). ``content_digest`` is the SHA-256 over the same members without those two, so the builder
(``record.build_record``) encodes each top-level member once, takes the digest over them
(``BuiltRecord``), and the file is those bytes with the digest's and the receipt's members put in
their sorted places: the record is not serialised a second time. A consumer's tools may
re-serialise the file (``jq -S``, another indent): the canonical form, not the file's bytes, is what
is digested and signed.
"""
from __future__ import annotations

import functools
import hashlib
import json
from datetime import date, datetime, timezone
from importlib import resources
from typing import Any, Mapping

from citeledger.pith import schema as pith_schema
from citeledger.records.evidence import plain_float
from resolvers.canonical import canonical_json
from resolvers.jcs import jcs, jcs_sha256

RECORD_SCHEMA = "citeledger.paper-citation-record.v2"
RECORD_SCHEMA_V1 = "pith.paper-citation-record.v1"
SCHEMA_FILES = {RECORD_SCHEMA: "paper-citation-record.v2.json",
                RECORD_SCHEMA_V1: "citeledger.paper-citation-record.v1.json"}
DIGEST_FIELD = "content_digest"


_SIMPLE = frozenset({str, bool, int, type(None)})


def plain_value(value: Any) -> Any:
    """DuckDB/pyarrow/numpy values -> JSON values (times as UTC ISO strings, NaN as null; an
    integral float as the integer JCS writes anyway, so ``1.0`` reads back as what was digested)."""
    kind = type(value)
    if kind in _SIMPLE:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): v if type(v) in _SIMPLE else plain_value(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SIMPLE else plain_value(v) for v in value]
    if kind is float:
        return plain_float(value)
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return plain_value(float(value))
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds") + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain_value(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return plain_value(value.tolist())
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return value.value
    return str(value)


def content_digest(record: Mapping[str, Any]) -> str:
    """``sha256:`` over the record without its digest (and, v2, its receipt): v2 over RFC 8785 JCS
    (``resolvers/jcs.py``), v1 over ``resolvers/canonical.py``'s strict form, as v1 was written."""
    if record.get("schema") == RECORD_SCHEMA_V1:
        body = {k: v for k, v in record.items() if k != DIGEST_FIELD}
        return "sha256:" + hashlib.sha256(canonical_json(body, strict=True).encode("utf-8")).hexdigest()
    return jcs_sha256({k: v for k, v in record.items() if k not in (DIGEST_FIELD, "receipt")})


ADDED = ("content_digest", "receipt")  # members the file has and the digest does not


class BuiltRecord(dict):
    """A record as ``record.build_record`` returns it (a plain dict to every reader), with the JCS
    bytes of its members (``members``: name, value, bytes; sorted by name) and the digest taken
    over them. Nothing changes a built record's content after it is built (the writer only adds
    its ``receipt``); ``file_bytes`` checks that each member is still the value it encoded.
    ``unlisted``: the outbound references past the page cap, which the file does not hold and the
    record's pages list on their later page files (``record_pages.reference_pages``)."""

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
    if record.get("schema") == RECORD_SCHEMA_V1:
        return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()
    return jcs(dict(record)) + b"\n"


def load_schema(schema: str = RECORD_SCHEMA) -> dict[str, Any]:
    """A record schema (Draft 2020-12) shipped with the package: v2 by default, v1 by name."""
    name = SCHEMA_FILES.get(schema)
    if name is None:
        raise ValueError(f"unknown record schema {schema!r} (known: {', '.join(SCHEMA_FILES)})")
    return json.loads(resources.files("citeledger").joinpath("schemas", name).read_text("utf-8"))


@functools.lru_cache(maxsize=4)
def _validator(schema: str = RECORD_SCHEMA) -> Any:
    """The schema's validator, built once per process (building it was most of a record's cost).
    The shipped schemas are checked against the metaschema by the tests."""
    import jsonschema  # lazy on purpose: ~0.1 s to import, needed only when records are written or shown

    return jsonschema.Draft202012Validator(load_schema(schema))


def validate_record(record: Mapping[str, Any], *, check_digest: bool = True) -> None:
    """Raise ``jsonschema.ValidationError`` if the record does not fit the schema it names (v2 or
    v1), and ``ValueError`` if its content digest does not match its content. A record of Pith's
    (``pith.paper-citation-record.v1`` with Pith's members: ``pith.schema.record_kind``) is checked
    against Pith's schema; its digests are Pith's (``pith.digests``), checked by the reader."""
    if pith_schema.record_kind(record) is pith_schema.RecordKind.PITH_CITATION_RECORD:
        pith_schema.validate(record)  # Pith's own record, which names the schema citeledger's v1 carried
        return
    schema = record.get("schema")
    _validator(schema if schema in SCHEMA_FILES else RECORD_SCHEMA).validate(record)
    if check_digest and record.get(DIGEST_FIELD) != content_digest(record):
        raise ValueError(f"content digest mismatch: record says {record.get(DIGEST_FIELD)}, "
                         f"content gives {content_digest(record)}")
