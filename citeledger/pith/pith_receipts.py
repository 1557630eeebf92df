"""Pith receipts: ed25519 over the 32 raw bytes of a record's digest (``signed_message:
canonical_sha256_bytes``), as Pith signs its records, made and checked.

A receipt names the digest (``canonical_sha256``, hex), the key (``key_id``, Pith's name for it, and
``public_key_fingerprint``: the first 16 bytes of SHA-256 over the raw 32-byte public key, in hex,
which is how Pith's published key document derives its fingerprint), and the signature (base64).
What is signed: a ``pith_number_record``'s ``canonical_sha256`` (over its ``canonical_record``); a
``pith.paper-citation-record.v1`` record's ``context_digest`` (over the record without
``context_digest`` and ``as_of``). Verifying recomputes the digest from the content and returns every
failure as a ``ReceiptFailure`` (an enum), empty when the receipt holds.
"""
from __future__ import annotations

import base64
import binascii
import enum
import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .digests import canonical_sha256, context_body, digest_bytes, sha256_hex
from .ed25519_points import key_problem

ALGORITHM = "ed25519"
SIGNED_MESSAGE = "canonical_sha256_bytes"
SIGNED = "signed_v1"
RECEIPT_KIND = "pith_receipt"
RECEIPT_VERSION = "0.3"
REQUIRED = ("kind", "key_id", "algorithm", "signature_b64", "signed_message", "canonical_sha256", "signature_status",
            "public_key_fingerprint")


class ReceiptFailure(str, enum.Enum):
    """Why a receipt does not hold."""

    MALFORMED = "malformed"  # a required member is missing or not text
    NOT_SIGNED = "not_signed"  # signature_status is not signed_v1
    UNSUPPORTED = "unsupported"  # another algorithm or signed message than ed25519 over the digest bytes
    CONTENT_CHANGED = "content_changed"  # the content's digest is not the digest the record and receipt state
    DIGEST_CHANGED = "digest_changed"  # the stated digests disagree (record vs receipt), or one is not a digest
    KEY_ID_MISMATCH = "key_id_mismatch"  # signed under another key id than the trusted key's
    FINGERPRINT_MISMATCH = "fingerprint_mismatch"  # the fingerprint is not the trusted key's
    SIGNATURE_INVALID = "signature_invalid"  # the signature does not verify over the stated digest


def raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(public: Ed25519PublicKey) -> str:
    """Pith's ``public_key_fingerprint``: hex of the first 16 bytes of SHA-256 over the raw key."""
    return hashlib.sha256(raw_public(public)).hexdigest()[:32]


@dataclass(frozen=True)
class TrustedKey:
    """A public key and the id its owner gives it (Pith: ``pith-v1-2026-05``)."""

    key_id: str
    public: Ed25519PublicKey


@dataclass(frozen=True)
class PithSigningKey:
    key_id: str
    private: Ed25519PrivateKey


def trusted_key(doc: Mapping[str, Any]) -> TrustedKey:
    """A trusted key from a key document as Pith publishes one (``key_id``, ``algorithm``,
    ``public_key_b64`` or ``public_key_hex``, optionally ``fingerprint_sha256_hex``); ValueError when
    it is not an ed25519 key, is one that verifies what it never signed (small order, outside the
    prime-order subgroup, a non-canonical encoding: ``ed25519_points``) or its stated fingerprint is
    not its own."""
    if doc.get("algorithm", ALGORITHM) != ALGORITHM or not isinstance(doc.get("key_id"), str):
        raise ValueError("key document: needs a key_id and algorithm ed25519")
    try:
        raw = base64.b64decode(doc["public_key_b64"], validate=True) if "public_key_b64" in doc \
            else bytes.fromhex(str(doc.get("public_key_hex")))
        refused = key_problem(raw)
        if refused:
            raise ValueError(f"refused: {refused}")
        public = Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"key document {doc.get('key_id')}: not a raw ed25519 public key ({exc})") from exc
    stated = doc.get("fingerprint_sha256_hex")
    if stated is not None and stated != fingerprint(public):
        raise ValueError(f"key document {doc['key_id']}: fingerprint {stated} is not the key's {fingerprint(public)}")
    return TrustedKey(doc["key_id"], public)


def make_receipt(digest: str, key: PithSigningKey, signed_at: str, builder_version: str,
                 first_computed_at: str | None = None) -> dict[str, Any]:
    """A ``pith_receipt`` over ``digest`` (hex, or ``sha256:`` hex): the signature is over its 32 raw
    bytes. ``signed_at`` is given by the caller (nothing here reads the clock)."""
    raw = digest_bytes(digest)
    return {
        "algorithm": ALGORITHM, "builder_version": builder_version, "canonical_sha256": raw.hex(),
        "first_computed_at": first_computed_at or signed_at, "key_id": key.key_id, "kind": RECEIPT_KIND,
        "last_reissued_at": signed_at, "public_key_fingerprint": fingerprint(key.private.public_key()),
        "receipt_version": RECEIPT_VERSION, "signature_b64": base64.b64encode(key.private.sign(raw)).decode(),
        "signature_status": SIGNED, "signed_at": signed_at, "signed_message": SIGNED_MESSAGE,
    }


def sign_canonical_record(canonical_record: Mapping[str, Any], key: PithSigningKey, signed_at: str,
                          builder_version: str) -> dict[str, Any]:
    """The signed core of a number record: ``canonical_record``, its ``canonical_sha256``, ``receipt``."""
    digest = canonical_sha256(canonical_record)
    return {"canonical_record": dict(canonical_record), "canonical_sha256": digest,
            "receipt": make_receipt(digest, key, signed_at, builder_version)}


def sign_citation_record(record: Mapping[str, Any], key: PithSigningKey, signed_at: str,
                         builder_version: str) -> dict[str, Any]:
    """A receipt over a Pith citation record's context digest, recomputed from its content (a record
    whose stated ``context_digest`` is not its content's is refused: ValueError)."""
    digest = sha256_hex(context_body(record))
    if record.get("context_digest") != "sha256:" + digest:
        raise ValueError(f"context_digest {record.get('context_digest')} is not the content's sha256:{digest}")
    return make_receipt(digest, key, signed_at, builder_version)


def _form_failures(receipt: Any) -> list[ReceiptFailure]:
    if not isinstance(receipt, Mapping) or any(not isinstance(receipt.get(k), str) for k in REQUIRED) \
            or receipt.get("kind") != RECEIPT_KIND:
        return [ReceiptFailure.MALFORMED]
    if receipt["signature_status"] != SIGNED:
        return [ReceiptFailure.NOT_SIGNED]
    if receipt["algorithm"] != ALGORITHM or receipt["signed_message"] != SIGNED_MESSAGE:
        return [ReceiptFailure.UNSUPPORTED]
    return []


def _digest_failures(computed: str, stated: list[Any]) -> list[ReceiptFailure]:
    """The content's digest against the stated ones: all stated agree but not with the content: the
    content changed; they disagree among themselves (or one is not a digest): a digest changed."""
    try:
        texts = {digest_bytes(s).hex() for s in stated}
    except (ValueError, TypeError, AttributeError):
        return [ReceiptFailure.DIGEST_CHANGED]
    if len(texts) > 1:
        return [ReceiptFailure.DIGEST_CHANGED]
    return [] if texts == {computed} else [ReceiptFailure.CONTENT_CHANGED]


def _key_failures(receipt: Mapping[str, Any], key: TrustedKey) -> list[ReceiptFailure]:
    failures = []
    if receipt["key_id"] != key.key_id:
        failures.append(ReceiptFailure.KEY_ID_MISMATCH)
    if receipt["public_key_fingerprint"] != fingerprint(key.public):
        failures.append(ReceiptFailure.FINGERPRINT_MISMATCH)
    try:
        signature = base64.b64decode(receipt["signature_b64"], validate=True)
        key.public.verify(signature, digest_bytes(receipt["canonical_sha256"]))
    except (InvalidSignature, binascii.Error, ValueError):
        failures.append(ReceiptFailure.SIGNATURE_INVALID)
    return failures


def verify_receipt(receipt: Any, computed: str, stated: list[Any], key: TrustedKey) -> list[ReceiptFailure]:
    """Every failure of ``receipt`` given the content's digest ``computed`` (hex) and the digests the
    document states beside the receipt's own (``stated``); empty: it holds."""
    failures = _form_failures(receipt)
    if failures:
        return failures
    return _digest_failures(computed, [receipt["canonical_sha256"], *stated]) + _key_failures(receipt, key)


def verify_number_record(document: Mapping[str, Any], key: TrustedKey) -> list[ReceiptFailure]:
    """A ``pith_number_record`` (or ``sign_canonical_record``'s core): its ``receipt`` against the
    digest of its ``canonical_record`` and its stated ``canonical_sha256``."""
    if not isinstance(document.get("canonical_record"), Mapping):
        return [ReceiptFailure.MALFORMED]
    computed = canonical_sha256(document["canonical_record"])
    return verify_receipt(document.get("receipt"), computed, [document.get("canonical_sha256")], key)


def verify_citation_record(record: Mapping[str, Any], receipt: Any, key: TrustedKey) -> list[ReceiptFailure]:
    """A receipt of a Pith citation record against the record's context digest, recomputed."""
    return verify_receipt(receipt, sha256_hex(context_body(record)), [record.get("context_digest")], key)
