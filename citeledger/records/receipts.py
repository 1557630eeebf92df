"""Signed receipts for citation records: the ledger's ed25519 keys, signing a record's content
digest, and checking a record file against the ledger's public keys.

What is signed: the receipt itself without its ``signature`` member, as RFC 8785 canonical JSON
(``resolvers.jcs``). The receipt names the record's content digest (``signed_digest``: sha256 over
the JCS of the record without ``content_digest`` and ``receipt``), the key id, the algorithm, the
time and the builder version, so a changed byte anywhere (content, digest, receipt) shows.

Keys live in ``<ledger>/keys/``: ``<key id>.pub.json`` (public, kept for ever, so a record signed
before a rotation still verifies) and ``<key id>.private.pem`` (mode 0600, PKCS#8; only the active
key's), and ``ACTIVE`` names the key records are signed with. The key id is ``ed25519:`` plus the
first 16 hex digits of the SHA-256 of the raw 32-byte public key. Without a key (no ``keys init``
yet) records are written unsigned and say so in their receipt (``state: unsigned``); a private key
is never made behind the user's back, because it would then sit in a folder that may be shared.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from citeledger.pith.ed25519_points import key_problem
from citeledger.records.record_json import content_digest
from citeledger.storage.json_documents import read_document, read_document_bytes
from citeledger.storage.places import LedgerDir, LedgerPlaces
from resolvers.errors import ConfigError
from resolvers.jcs import jcs
from resolvers.strict_json import loads_strict

if TYPE_CHECKING:  # cryptography loads when a key is made, read or checked: an unsigned record needs none
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "ed25519"
CANONICALIZATION = "RFC 8785 JCS"
UNSIGNED_WHY = "the ledger has no signing key (run `citeledger keys init`)"
# the only key ids ``key_id`` makes: ``keys/ACTIVE`` naming anything else (``../x``) is refused,
# because the id becomes a file name under ``keys/``
KEY_ID_PATTERN = re.compile(r"ed25519:[0-9a-f]{16}")


def _builder() -> str:
    """``citeledger X.Y.Z``: the version of the code that built and signed a record."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"citeledger {version('citeledger')}"
    except PackageNotFoundError:
        return "citeledger (version unknown: not installed)"


BUILDER = _builder()


def key_id(public: Ed25519PublicKey) -> str:
    """``ed25519:`` + 16 hex digits of SHA-256 over the raw public key: the same key, the same id."""
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]


def public_key_doc(public: Ed25519PublicKey, created_at: str) -> dict[str, Any]:
    """The public key file's content: id, algorithm, raw key (base64), when it was made."""
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"key_id": key_id(public), "algorithm": ALGORITHM, "public_key": base64.b64encode(raw).decode(),
            "created_at": created_at}


def private_pem(private: Ed25519PrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())


def utc_now() -> str:
    """Now, ISO 8601 UTC with ``Z`` (seconds): the one time format of a receipt."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class SigningKey:
    """The active private key of a ledger, with its id."""

    key_id: str
    private: Ed25519PrivateKey


def make_receipt(digest: str, key: SigningKey | None, signed_at: str | None = None) -> dict[str, Any]:
    """The receipt of a record whose content digest is ``digest``: signed with ``key``, or an
    unsigned receipt saying why when there is no key."""
    receipt: dict[str, Any] = {
        "state": "signed" if key else "unsigned", "algorithm": ALGORITHM if key else None,
        "key_id": key.key_id if key else None, "canonicalization": CANONICALIZATION,
        "signed_digest": digest, "signed_at": signed_at or utc_now(), "builder": BUILDER,
        "why_unsigned": None if key else UNSIGNED_WHY,
    }
    receipt["signature"] = base64.b64encode(key.private.sign(jcs(receipt))).decode() if key else None
    return receipt


def sign_record(record: dict[str, Any], key: SigningKey | None, signed_at: str | None = None) -> dict[str, Any]:
    """``record`` with its receipt (the record's own ``content_digest`` is what is signed)."""
    record["receipt"] = make_receipt(record["content_digest"], key, signed_at)
    return record


# ---------------------------------------------------------------------------------------------
# Verifying


def load_public_keys(paths: list[Path]) -> dict[str, Ed25519PublicKey]:
    """Public keys by key id from ``*.pub.json`` files, PEM public or private key files, or folders
    of them (a ledger's ``keys/``). A key file that cannot be read is a one-line error."""
    keys: dict[str, Ed25519PublicKey] = {}
    for path in paths:
        files = sorted(path.glob("*.pub.json")) if path.is_dir() else [path]
        for file in files:
            public = _read_public(file)
            keys[key_id(public)] = public
    return keys


def _read_public(file: Path) -> Ed25519PublicKey:
    """The ed25519 public key of a key file; a key that would verify what it never signed (small
    order, outside the prime-order subgroup, non-canonical: ``pith.ed25519_points``) is refused."""
    from cryptography.hazmat.primitives import serialization

    public = _public_of(file)
    refused = key_problem(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    if refused:
        raise ConfigError(f"key file {file}: refused, {refused}")
    return public


def _public_of(file: Path) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    try:
        data = read_document_bytes(file)
        if data.lstrip().startswith(b"{"):
            return Ed25519PublicKey.from_public_bytes(base64.b64decode(loads_strict(data)["public_key"]))
        if b"PRIVATE KEY" in data:
            private = serialization.load_pem_private_key(data, password=None)
            if isinstance(private, Ed25519PrivateKey):
                return private.public_key()
        else:
            public = serialization.load_pem_public_key(data)
            if isinstance(public, Ed25519PublicKey):
                return public
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"key file {file}: not an ed25519 key ({type(exc).__name__}: {exc})") from exc
    raise ConfigError(f"key file {file}: not an ed25519 key")


def verify_record(record: Any, keys: Mapping[str, Ed25519PublicKey]) -> list[str]:
    """What fails in ``record`` (empty: digest and signature hold). Each problem says which
    value does not hold and why."""
    if not isinstance(record, dict) or not isinstance(record.get("receipt"), dict):
        return ["no receipt: not a signed citation record (schema v2)"]
    receipt = record["receipt"]
    problems = []
    try:
        actual = content_digest(record)
    except ValueError as exc:
        return [f"content cannot be canonicalised: {exc}"]
    if record.get("content_digest") != actual:
        problems.append(f"content_digest {record.get('content_digest')} does not match the content "
                        f"({actual}): the record was changed after it was built")
    if receipt.get("signed_digest") != record.get("content_digest"):
        problems.append(f"receipt.signed_digest {receipt.get('signed_digest')} is not the record's "
                        f"content_digest {record.get('content_digest')}")
    problems += _signature_problems(receipt, keys)
    return problems


def _signature_problems(receipt: Mapping[str, Any], keys: Mapping[str, Ed25519PublicKey]) -> list[str]:
    from cryptography.exceptions import InvalidSignature

    if receipt.get("state") != "signed" or not receipt.get("signature"):
        return [f"unsigned record ({receipt.get('why_unsigned') or 'no signature'})"]
    if receipt.get("algorithm") != ALGORITHM:
        return [f"receipt.algorithm {receipt.get('algorithm')!r} is not {ALGORITHM}"]
    public = keys.get(str(receipt.get("key_id")))
    if public is None:
        known = ", ".join(sorted(keys)) or "none"
        return [f"signed by key {receipt.get('key_id')}, which is not among the trusted keys ({known})"]
    try:
        signature = base64.b64decode(str(receipt["signature"]), validate=True)
        public.verify(signature, jcs({k: v for k, v in receipt.items() if k != "signature"}))
    except (InvalidSignature, ValueError):
        return [f"signature does not verify with key {receipt.get('key_id')}: the receipt or its "
                "signature was changed, or another key signed it"]
    return []


def verify_file(path: Path, keys: Mapping[str, Ed25519PublicKey]) -> list[str]:
    """``verify_record`` of a JSON record file; a file that is not one (not a regular file, too
    large, not I-JSON: a member name twice, NaN, nested too deep; ``storage.json_documents``) is one
    problem, not an error."""
    return checked_record_file(path, keys)[1]


def checked_record_file(path: Path, keys: Mapping[str, Ed25519PublicKey],
                        unsigned: bool = False) -> tuple[dict[str, Any] | None, list[str]]:
    """A record file read and checked as ``verify`` checks it: (the record, []) when its content
    digest holds and its receipt is signed by one of ``keys`` (or, with ``unsigned``, says it is
    unsigned), else (None, what failed). Never raises for the file's content: a file that is not a
    record file (``storage.json_documents``) is a problem like any other."""
    try:
        record = read_document(path)
    except ValueError as exc:
        return None, [f"cannot read a JSON record: {str(exc).removeprefix(f'{path}: ')}"]
    try:
        problems = verify_record(record, keys)
    except ValueError as exc:
        return None, [f"content cannot be canonicalised: {exc}"]
    receipt = record.get("receipt") if isinstance(record, dict) else None
    if unsigned and isinstance(receipt, dict) and receipt.get("state") == "unsigned":
        problems = [p for p in problems if not p.startswith("unsigned record")]
    return (None, problems) if problems else (record, [])


# ---------------------------------------------------------------------------------------------
# The ledger's keys


def keys_dir(ledger_dir: LedgerDir) -> Path:
    return LedgerPlaces.of(ledger_dir).keys


def init_keys(ledger_dir: LedgerDir, rotate: bool = False) -> str:
    """Make the ledger's ed25519 key pair and make it the active one; returns its key id. With a
    key already active this is an error unless ``rotate``: then the new key becomes active, the
    old private key is deleted and the old public key stays, so old records still verify."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from citeledger.ledger.ledger_store import LedgerStore

    try:
        old = active_key_id(ledger_dir)
    except ConfigError:
        if not rotate:
            raise
        old = None  # ACTIVE names no key: the new one replaces it, no file is retired
    if old and not rotate:
        raise ConfigError(f"ledger {ledger_dir} already has signing key {old}; "
                          "`citeledger keys init --rotate` replaces it (old records stay verifiable)")
    private = Ed25519PrivateKey.generate()
    new_id = key_id(private.public_key())
    doc = json.dumps(public_key_doc(private.public_key(), utc_now()), indent=2, sort_keys=True) + "\n"
    LedgerStore(ledger_dir).write_signing_key(new_id, doc.encode(), private_pem(private), retire=old)
    return new_id


def active_key_id(ledger_dir: LedgerDir) -> str | None:
    """The key id ``keys/ACTIVE`` names, or None without one; anything but an id of the form
    ``key_id`` makes is a one-line error (the id is used in a file name under ``keys/``)."""
    pointer = LedgerPlaces.of(ledger_dir).active_key
    if not pointer.exists():
        return None
    try:
        text = pointer.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pointer}: cannot be read ({type(exc).__name__})") from None
    if not text:
        return None
    if not KEY_ID_PATTERN.fullmatch(text):
        raise ConfigError(f"{pointer}: {text[:40]!r} is not a key id (ed25519: and 16 hex digits); "
                          "run `citeledger keys init --rotate` for a new key")
    return text


def key_file_stem(kid: str) -> str:
    """``ed25519:0123abcd...`` -> ``ed25519-0123abcd...`` (no colon in file names)."""
    return kid.replace(":", "-")


def active_key(ledger_dir: LedgerDir) -> SigningKey | None:
    """The ledger's active signing key, or None when it has none (records are then unsigned)."""
    kid = active_key_id(ledger_dir)
    if kid is None:
        return None
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = keys_dir(ledger_dir) / f"{key_file_stem(kid)}.private.pem"
    try:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"signing key {path}: cannot be read ({type(exc).__name__}); "
                          "run `citeledger keys init --rotate` for a new one") from exc
    if not isinstance(private, Ed25519PrivateKey) or key_id(private.public_key()) != kid:
        raise ConfigError(f"signing key {path} is not the ed25519 key {kid} that keys/ACTIVE names")
    return SigningKey(kid, private)
