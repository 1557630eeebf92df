"""Pith's digests, as its published records show them (each reproduced byte for byte from the seeds
by tests/test_pith_digests.py). Every digest is SHA-256 over the RFC 8785 (JCS) bytes of a JSON value:

* ``observation_digest``: the observation object without its ``observation_digest`` member;
* ``context_digest``: the paper citation record without ``context_digest`` and ``as_of`` (so the
  same content re-dated keeps its digest; the ``thesis`` sentence, which names a date, is inside),
  nor a ``receipt`` (Pith publishes its citation records unsigned; a citeledger record signed by
  ``--sign`` carries its receipt beside the content it signs, as a number record does);
* a ``pith_number_record``'s ``canonical_sha256``: its ``canonical_record`` (lower-case hex, no
  prefix); its pith number is the base32 of that digest's bytes, 26 characters, after
  ``pith:<year>:``; ``title_canon_sha256`` is the digest of the lower-cased title's UTF-8 bytes (the one
  published title does not tell lower-casing from lower-casing with whitespace folded or NFKC
  case folding: they give the same bytes there).
"""
from __future__ import annotations

import base64
import hashlib
from typing import Any, Mapping

from resolvers.jcs import jcs

PREFIX = "sha256:"
OBSERVATION_DIGEST = "observation_digest"
CONTEXT_DIGEST = "context_digest"
CONTEXT_EXCLUDED = (CONTEXT_DIGEST, "as_of", "receipt")


def sha256_hex(value: Any) -> str:
    """Lower-case hex SHA-256 of ``value``'s RFC 8785 bytes."""
    return hashlib.sha256(jcs(value)).hexdigest()


def observation_digest(observation: Mapping[str, Any]) -> str:
    """``sha256:`` over the observation without its own digest."""
    return PREFIX + sha256_hex({k: v for k, v in observation.items() if k != OBSERVATION_DIGEST})


def context_body(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the context digest covers: the record without ``context_digest``, ``as_of`` and ``receipt``."""
    return {k: v for k, v in record.items() if k not in CONTEXT_EXCLUDED}


def context_digest(record: Mapping[str, Any]) -> str:
    """``sha256:`` over the record without ``context_digest``, ``as_of`` and ``receipt``."""
    return PREFIX + sha256_hex(context_body(record))


def with_digests(record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the record with every observation digest and the context digest (re)computed;
    observations first, as the context digest covers them."""
    out = dict(record)
    for lane in ("outbound", "inbound"):
        out[lane] = [{**o, OBSERVATION_DIGEST: observation_digest(o)} for o in record.get(lane) or []]
    out[CONTEXT_DIGEST] = context_digest(out)
    return dict(sorted(out.items()))  # members in Pith's (sorted) order; the digests do not depend on it


def canonical_sha256(canonical_record: Mapping[str, Any]) -> str:
    """A number record's ``canonical_sha256``: hex SHA-256 of its ``canonical_record``."""
    return sha256_hex(canonical_record)


def digest_bytes(digest: str) -> bytes:
    """The 32 raw bytes of a digest given as hex, with or without ``sha256:``; ValueError otherwise."""
    text = digest[len(PREFIX):] if digest.startswith(PREFIX) else digest
    raw = bytes.fromhex(text)
    if len(raw) != 32 or text != text.lower():
        raise ValueError(f"not a lower-case hex SHA-256 digest: {digest!r}")
    return raw


def pith_number(canonical_hex: str, year: int) -> str:
    """``pith:<year>:`` and the first 26 base32 characters of the digest (130 bits)."""
    return f"pith:{year}:" + base64.b32encode(digest_bytes(canonical_hex)).decode()[:26]


def title_canon_sha256(title: str) -> str:
    """A number record's ``title_canon_sha256``: hex SHA-256 of the lower-cased title."""
    return hashlib.sha256(title.lower().encode("utf-8")).hexdigest()
