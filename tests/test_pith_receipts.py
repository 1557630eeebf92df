"""Pith receipts: the published receipt verifies under Pith's published key; receipts made with a
key the test makes verify; every tamper fails with its typed reason."""
import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pith_fixtures import citation_record, key_document, number_record

from citeledger.pith import pith_receipts
from citeledger.pith.pith_receipts import PithSigningKey, ReceiptFailure, TrustedKey

PITH_KEY = pith_receipts.trusted_key(key_document())
SIGNED_AT = "2026-09-01T00:00:00Z"


def test_the_published_receipt_holds_under_pith_key_and_its_fingerprint_is_derived_from_it():
    assert pith_receipts.fingerprint(PITH_KEY.public) == key_document()["fingerprint_sha256_hex"] == \
        number_record()["receipt"]["public_key_fingerprint"]
    assert pith_receipts.verify_number_record(number_record(), PITH_KEY) == []


def _flip(text: str) -> str:
    return ("1" if text[0] != "1" else "2") + text[1:]


def _signature_of_other_bytes(r):
    r["receipt"]["signature_b64"] = base64.b64encode(Ed25519PrivateKey.generate().sign(b"x")).decode()


TAMPERS = [
    ("field changed", lambda r: r["canonical_record"]["metadata"].update(primary_cat="cs.AI"),
     [ReceiptFailure.CONTENT_CHANGED]),
    ("record digest changed", lambda r: r.update(canonical_sha256=_flip(r["canonical_sha256"])),
     [ReceiptFailure.DIGEST_CHANGED]),
    ("receipt digest changed", lambda r: r["receipt"].update(canonical_sha256=_flip(r["canonical_sha256"])),
     [ReceiptFailure.DIGEST_CHANGED, ReceiptFailure.SIGNATURE_INVALID]),
    ("signature", _signature_of_other_bytes, [ReceiptFailure.SIGNATURE_INVALID]),
    ("signature not base64", lambda r: r["receipt"].update(signature_b64="not base64!"),
     [ReceiptFailure.SIGNATURE_INVALID]),
    ("key id", lambda r: r["receipt"].update(key_id="pith-v1-2099-01"), [ReceiptFailure.KEY_ID_MISMATCH]),
    ("fingerprint", lambda r: r["receipt"].update(public_key_fingerprint="0" * 32),
     [ReceiptFailure.FINGERPRINT_MISMATCH]),
    ("unsigned", lambda r: r["receipt"].update(signature_status="unsigned"), [ReceiptFailure.NOT_SIGNED]),
    ("algorithm", lambda r: r["receipt"].update(algorithm="rsa"), [ReceiptFailure.UNSUPPORTED]),
    ("signed message", lambda r: r["receipt"].update(signed_message="canonical_record_bytes"),
     [ReceiptFailure.UNSUPPORTED]),
    ("no signature", lambda r: r["receipt"].pop("signature_b64"), [ReceiptFailure.MALFORMED]),
]


@pytest.mark.parametrize("what, tamper, expected", TAMPERS, ids=[t[0] for t in TAMPERS])
def test_each_tamper_of_the_published_record_fails_naming_why(what, tamper, expected):
    record = number_record()
    tamper(record)
    assert pith_receipts.verify_number_record(record, PITH_KEY) == expected


def test_content_and_both_digests_changed_together_leave_only_the_signature():
    record = number_record()
    record["canonical_record"]["metadata"]["primary_cat"] = "cs.AI"
    new = pith_receipts.canonical_sha256(record["canonical_record"])
    record["canonical_sha256"] = record["receipt"]["canonical_sha256"] = new
    assert pith_receipts.verify_number_record(record, PITH_KEY) == [ReceiptFailure.SIGNATURE_INVALID]


def _test_key() -> tuple[PithSigningKey, TrustedKey]:
    private = Ed25519PrivateKey.generate()
    return PithSigningKey("test-key-1", private), TrustedKey("test-key-1", private.public_key())


def test_a_number_record_signed_here_verifies_and_another_key_does_not():
    signing, trusted = _test_key()
    signed = pith_receipts.sign_canonical_record(number_record()["canonical_record"], signing, SIGNED_AT, "test-builder")
    receipt = signed["receipt"]
    assert signed["canonical_sha256"] == number_record()["canonical_sha256"]
    assert (receipt["signed_message"], receipt["signature_status"], receipt["kind"]) == \
        ("canonical_sha256_bytes", "signed_v1", "pith_receipt")
    assert set(receipt) == set(number_record()["receipt"])  # every member of Pith's receipt
    assert pith_receipts.verify_number_record(signed, trusted) == []
    other = TrustedKey("test-key-1", Ed25519PrivateKey.generate().public_key())
    assert pith_receipts.verify_number_record(signed, other) == [ReceiptFailure.FINGERPRINT_MISMATCH,
                                                            ReceiptFailure.SIGNATURE_INVALID]
    assert pith_receipts.verify_number_record(signed, PITH_KEY) == [ReceiptFailure.KEY_ID_MISMATCH,
                                                               ReceiptFailure.FINGERPRINT_MISMATCH,
                                                               ReceiptFailure.SIGNATURE_INVALID]


def test_a_citation_record_receipt_signs_its_context_digest():
    signing, trusted = _test_key()
    record = citation_record()
    receipt = pith_receipts.sign_citation_record(record, signing, SIGNED_AT, "test-builder")
    assert "sha256:" + receipt["canonical_sha256"] == record["context_digest"]
    assert pith_receipts.verify_citation_record(record, receipt, trusted) == []
    assert pith_receipts.verify_citation_record(dict(record, as_of="2030-01-01T00:00:00Z"), receipt, trusted) == []
    record["outbound"][0]["resolution"]["status"] = "verified_exact"
    assert pith_receipts.verify_citation_record(record, receipt, trusted) == [ReceiptFailure.CONTENT_CHANGED]
    with pytest.raises(ValueError, match="context_digest"):
        pith_receipts.sign_citation_record(record, signing, SIGNED_AT, "test-builder")


def test_a_key_document_whose_fingerprint_is_not_its_key_is_refused():
    doc = dict(key_document(), fingerprint_sha256_hex="0" * 32)
    with pytest.raises(ValueError, match="fingerprint"):
        pith_receipts.trusted_key(doc)
    with pytest.raises(ValueError, match="ed25519"):
        pith_receipts.trusted_key(dict(key_document(), algorithm="rsa"))
    with pytest.raises(ValueError, match="not a raw ed25519 public key"):
        pith_receipts.trusted_key({"key_id": "k", "public_key_b64": "AAAA"})
