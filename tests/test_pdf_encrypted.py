"""An encrypted PDF (one that opens only with its password) is a reject that says so, not "damaged
or not a PDF". The PDF is made here: one page of text, encrypted with the standard security
handler (RC4, 40-bit key, revision 2) under a user password, as PDF 1.4 writers do."""
from __future__ import annotations

import hashlib

import pytest

from papers.pdf.read import pdftotext_path, read_pdf_text

# the padding string of the standard security handler (ISO 32000-1, 7.6.3.3)
PAD = bytes.fromhex("28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a")
FILE_ID = bytes(range(16))


def rc4(key: bytes, data: bytes) -> bytes:
    box = list(range(256))
    j = 0
    for i in range(256):
        j = (j + box[i] + key[i % len(key)]) % 256
        box[i], box[j] = box[j], box[i]
    out, i, j = bytearray(), 0, 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + box[i]) % 256
        box[i], box[j] = box[j], box[i]
        out.append(byte ^ box[(box[i] + box[j]) % 256])
    return bytes(out)


def encrypted_pdf(user_password: bytes, owner_password: bytes, text: str) -> bytes:
    """A one-page PDF whose content stream is RC4-encrypted under ``user_password`` (revision 2)."""
    permissions = -4  # every permission
    owner_key = hashlib.md5((owner_password + PAD)[:32]).digest()[:5]
    owner_entry = rc4(owner_key, (user_password + PAD)[:32])
    key = hashlib.md5((user_password + PAD)[:32] + owner_entry + permissions.to_bytes(4, "little", signed=True)
                      + FILE_ID).digest()[:5]
    user_entry = rc4(key, PAD)
    content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    stream = rc4(hashlib.md5(key + (4).to_bytes(3, "little") + (0).to_bytes(2, "little")).digest()[:10], content)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Filter /Standard /V 1 /R 2 /O <" + owner_entry.hex().encode() + b"> /U <"
        + user_entry.hex().encode() + b"> /P %d >>" % permissions,
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += (b"trailer\n<< /Size %d /Root 1 0 R /Encrypt 6 0 R /ID [<" % (len(objects) + 1) + FILE_ID.hex().encode()
            + b"> <" + FILE_ID.hex().encode() + b">] >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return bytes(out)


needs_pdftotext = pytest.mark.skipif(pdftotext_path() is None, reason="poppler-utils is not installed")


@needs_pdftotext
def test_a_pdf_that_needs_its_password_is_rejected_as_encrypted():
    paper = read_pdf_text("2101.00002.pdf", encrypted_pdf(b"secret", b"owner", "References"))
    assert [r.code for r in paper.rejects] == ["pdf_unreadable"]
    assert "encrypted" in paper.rejects[0].reason and "damaged" not in paper.rejects[0].reason


@needs_pdftotext
def test_a_pdf_encrypted_without_a_user_password_is_read():
    paper = read_pdf_text("2101.00003.pdf", encrypted_pdf(b"", b"owner", "References"))
    assert not any("encrypted" in r.reason for r in paper.rejects)
