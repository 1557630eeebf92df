"""How text from inputs is shown to a person: its control characters made visible (``\\x1b`` for ESC)
and its invisible format characters too (``\\u202e`` for a right-to-left override), so a reference
string never drives a terminal nor reorders or hides what a page or a JSON reader's screen shows.
Pure functions."""
from __future__ import annotations

import re

# What text must not carry to a reader raw: C0 controls but tab and newline, DEL and C1 (they drive
# a terminal), and the invisible format characters that reorder or hide text (bidi embeddings,
# overrides, isolates and marks, the zero-width space, word joiner and invisible operators, the soft
# hyphen, the byte order mark, interlinear annotations, tag characters, Mongolian vowel separator,
# musical formatting). A zero-width joiner and non-joiner stay: scripts and emoji need them.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e"
                       "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U0001d173-\U0001d17a\U000e0001"
                       "\U000e0020-\U000e007f]")

# Every byte but those that may begin one of the characters above in UTF-8 (C0 but tab and newline,
# DEL, and the lead bytes 0xC2, 0xD8, 0xE1, 0xE2, 0xEF, 0xF0, 0xF3): a page whose bytes hold none of
# them has nothing to show escaped.
NOT_CONTROL_BYTES = bytes(b for b in range(256) if not (b < 9 or 10 < b < 32 or b == 0x7F
                                                         or b in (0xC2, 0xD8, 0xE1, 0xE2, 0xEF, 0xF0, 0xF3)))


def shown(char: str) -> str:
    """One such character as a reader sees it: backslash-x and two hex digits up to U+009F (ESC as
    ``\\x1b``), backslash-u and four (``\\u202e``), past U+FFFF backslash-U and eight."""
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0x9F else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible_controls(text: str) -> str:
    r"""``\x1b`` for ESC, ``\u202e`` for a right-to-left override, and the like: input strings must not
    drive the reader's terminal nor reorder or hide what it shows. The regex runs only when the
    text's UTF-8 may hold such a character (``bytes.translate`` scans a page in a tenth of the
    regex's time)."""
    if not text.encode("utf-8", "surrogatepass").translate(None, NOT_CONTROL_BYTES):
        return text
    return _CONTROLS.sub(lambda m: shown(m.group()), text)


def visible_line(text: str) -> str:
    r"""One line for a terminal: ``visible_controls`` and the newline too (``\x0a``), so text from a
    file can neither drive the terminal nor start a line of its own; a byte of a file name that is
    not UTF-8 (a lone surrogate in Python's text) as ``\udcff``."""
    return visible_controls(text).replace("\n", "\\x0a").encode("utf-8", "backslashreplace").decode("utf-8")

def json_visible(text: str) -> str:
    """JSON text with DEL, C1 and the invisible format characters escaped too (``json.dumps``
    leaves them raw); the values are unchanged."""
    return _CONTROLS.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON escapes a character past U+FFFF as its surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"

def visible_utf8(text: str) -> bytes:
    """``visible_controls(text).encode()`` (strict UTF-8, as the file is written: a lone surrogate
    raises here as it did there; the controls' regex leaves surrogates as they are)."""
    data = text.encode()
    if not data.translate(None, NOT_CONTROL_BYTES):
        return data
    return visible_controls(text).encode()
