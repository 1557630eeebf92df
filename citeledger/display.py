"""How text from inputs is shown to a person: its control characters made visible (``\\x1b`` for ESC),
so a reference string never drives a terminal, a page or a JSON reader's screen. Pure functions."""
from __future__ import annotations

import re

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and newline, DEL, C1

# Every byte but those of the controls above in UTF-8 (C0 but tab and newline, DEL, and 0xC2, the
# lead byte of C1 and of U+00A0-U+00BF): a page whose bytes hold none of them has no control.
NOT_CONTROL_BYTES = bytes(b for b in range(256) if not (b < 9 or 10 < b < 32 or b == 0x7F or b == 0xC2))

def visible_controls(text: str) -> str:
    r"""``\x1b`` for ESC and the like: input strings must not drive the reader's terminal. The
    regex runs only when the text's UTF-8 may hold a control (``bytes.translate`` scans a page in a
    tenth of the regex's time)."""
    if not text.encode("utf-8", "surrogatepass").translate(None, NOT_CONTROL_BYTES):
        return text
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)

def visible_line(text: str) -> str:
    r"""One line for a terminal: ``visible_controls`` and the newline too (``\x0a``), so text from a
    file can neither drive the terminal nor start a line of its own; a byte of a file name that is
    not UTF-8 (a lone surrogate in Python's text) as ``\udcff``."""
    return visible_controls(text).replace("\n", "\\x0a").encode("utf-8", "backslashreplace").decode("utf-8")

def json_visible(text: str) -> str:
    """JSON text with DEL and C1 escaped too (``json.dumps`` leaves them raw); the values are unchanged."""
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)

def visible_utf8(text: str) -> bytes:
    """``visible_controls(text).encode()`` (strict UTF-8, as the file is written: a lone surrogate
    raises here as it did there; the controls' regex leaves surrogates as they are)."""
    data = text.encode()
    if not data.translate(None, NOT_CONTROL_BYTES):
        return data
    return visible_controls(text).encode()
