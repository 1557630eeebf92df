"""The ``pith.paper-citation-record.v1`` schema and which format a record dict is in.

citeledger's first record format carried the schema name ``pith.paper-citation-record.v1`` too
(its schema is now ``citeledger.paper-citation-record.v1.json``), so the name alone does not say
whose record it is: ``record_kind`` tells them apart by the members only each one has.
"""
from __future__ import annotations

import enum
import functools
import json
from importlib import resources
from typing import Any, Mapping

PITH_SCHEMA = "pith.paper-citation-record.v1"
SCHEMA_FILE = "pith.paper-citation-record.v1.json"
NUMBER_RECORD_TYPE = "pith_number_record"
CITELEDGER_V2 = "citeledger.paper-citation-record.v2"


class RecordKind(str, enum.Enum):
    """Whose record a JSON object is."""

    PITH_CITATION_RECORD = "pith.paper-citation-record.v1"
    PITH_NUMBER_RECORD = "pith_number_record"
    CITELEDGER_V1 = "citeledger.paper-citation-record.v1"  # written under Pith's schema name
    CITELEDGER_V2 = "citeledger.paper-citation-record.v2"
    UNKNOWN = "unknown"


def record_kind(record: Any) -> RecordKind:
    """Pith's citation record has ``context_digest`` and ``reference_resolution``; citeledger's first
    format, under the same schema name, has ``content_digest`` and ``counts``."""
    if not isinstance(record, Mapping):
        return RecordKind.UNKNOWN
    if record.get("record_type") == NUMBER_RECORD_TYPE:
        return RecordKind.PITH_NUMBER_RECORD
    schema = record.get("schema")
    if schema == CITELEDGER_V2:
        return RecordKind.CITELEDGER_V2
    if schema == PITH_SCHEMA:
        if "context_digest" in record or "reference_resolution" in record:
            return RecordKind.PITH_CITATION_RECORD
        if "content_digest" in record or "counts" in record:
            return RecordKind.CITELEDGER_V1
    return RecordKind.UNKNOWN


def load_schema() -> dict[str, Any]:
    """The shipped ``pith.paper-citation-record.v1`` schema (Draft 2020-12)."""
    text = resources.files("citeledger").joinpath("schemas", SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema  # lazy: only callers that check records pay for it

    return jsonschema.Draft202012Validator(load_schema())


def schema_errors(record: Mapping[str, Any]) -> list[str]:
    """Every way ``record`` misses the schema, one line each (``path: message``); empty: it fits."""
    errors = sorted(_validator().iter_errors(record), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(record)'}: {e.message}" for e in errors]


def validate(record: Mapping[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` when ``record`` does not fit the schema."""
    _validator().validate(record)
