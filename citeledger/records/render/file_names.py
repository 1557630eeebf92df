"""The names of a record's files: a paper id's file stem (``record_file_stem``) and the page files
of a long record (``page_file``: ``<stem>.html``, ``<stem>.page-2.html``, ...)."""
from __future__ import annotations

import hashlib
from urllib.parse import quote

from citeledger.options import is_device_name

RECORD_STEM_MAX = 120


def record_file_stem(paper_id: str) -> str:
    """The record file name of a paper id: distinct ids always get distinct names.

    An id whose percent-escape (``quote``, keeping ``-_.``) is a plain name (not empty, no
    leading dot, no upper-case letter, at most 120 bytes, no device name of Windows before its first
    dot: ``con``, ``nul.1``, ``com1``) is its own name: ``2301.00001``,
    ``hep-th%2F9901001``, ``10.1000%2Fxyz``; escaping is reversible, so these never meet. Any
    other id gets the escape's first 100 bytes, ``+`` and 16 hex digits of the id's SHA-256
    (``hidden+1f0c...`` for ``.hidden``, ``PhysRev...+...`` for a DOI with capitals, so two ids
    differing only in case stay apart on a case-blind file system). ``+`` never occurs in a
    plain name (``quote`` escapes it), so the two kinds cannot meet either."""
    escaped = quote(paper_id, safe="-_.")
    plain = escaped.lstrip(".")
    if plain == escaped and plain and len(plain) <= RECORD_STEM_MAX and not any("A" <= c <= "Z" for c in paper_id) \
            and not is_device_name(plain):
        return plain
    digest = hashlib.sha256(paper_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    head = plain[:100]
    if is_device_name(head):
        head = head.replace(".", "_", 1)  # a device name is one only up to its dot: ``con.1`` -> ``con_1+...``
    return head + "+" + digest


def page_suffix(number: int) -> str:
    """The file suffix of a record's HTML page ``number`` (1: ``html``; then ``page-2.html``, ...)."""
    return "html" if number == 1 else f"page-{number}.html"


def page_file(stem: str, number: int) -> str:
    """The file name of page ``number`` of the record whose file stem is ``stem``."""
    return f"{stem}.{page_suffix(number)}"


def href_name(name: str) -> str:
    """A file name as a relative link: percent signs and ``+`` escaped (``hep-th%2F9901001.html``
    is the file ``hep-th%252F9901001.html`` to a browser unless its ``%`` is escaped)."""
    return quote(name, safe="-_.~")
