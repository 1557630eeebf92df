"""An ed25519 public key's 32 bytes checked before they are trusted (RFC 8032 5.1.3, section 5.1.7's
group order): a key document is data anyone can hand over, and some keys verify forgeries.

OpenSSL verifies a signature against any point the 32 bytes decode to. With the identity point as
the "public key" (``01 00 .. 00``) the equation ``[S]B = R + [k]A`` becomes ``[S]B = R``, which any
``R = [S]B`` satisfies: every message verifies. The other points of small order (eight in all)
and points with a small-order part do the same for a share of messages. So a key is refused when:

* its encoding is not canonical (``y`` not below ``p = 2**255 - 19``, or ``x = 0`` with the sign bit
  set): one point, several encodings, and signatures bound to one of them;
* it is not a point of the curve;
* ``[8]A`` is the identity (a point of small order) or ``[L]A`` is not (``L`` the prime order of
  the base point: a point outside its subgroup carries a small-order part).

Pure integer arithmetic on extended coordinates (Python's big integers; about 2 ms a key); nothing
secret is handled, so constant time does not matter here.
"""
from __future__ import annotations

P = 2 ** 255 - 19
D = -121665 * pow(121666, P - 2, P) % P
L = 2 ** 252 + 27742317777372353535851937790883648493
SQRT_M1 = pow(2, (P - 1) // 4, P)

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z
IDENTITY: Point = (0, 1, 1, 0)


def _add(a: Point, b: Point) -> Point:
    """RFC 8032 5.1.4's addition (complete: doubling and the identity included)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % P
    bb = (y1 + x1) * (y2 + x2) % P
    cc = 2 * t1 * t2 * D % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return e * f % P, g * h % P, f * g % P, e * h % P


def _times(n: int, point: Point) -> Point:
    out = IDENTITY
    while n:
        if n & 1:
            out = _add(out, point)
        point = _add(point, point)
        n >>= 1
    return out


def _is_identity(point: Point) -> bool:
    x, y, z, _ = point
    return x % P == 0 and (y - z) % P == 0


def decode(raw: bytes) -> Point | str:
    """The point ``raw`` encodes, or why it does not encode one canonically."""
    if len(raw) != 32:
        return f"{len(raw)} bytes, not the 32 of an ed25519 public key"
    number = int.from_bytes(raw, "little")
    sign, y = number >> 255, number & ((1 << 255) - 1)
    if y >= P:
        return "a non-canonical encoding (y is not below 2**255 - 19)"
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if (v * x * x - u) % P:
        if (v * x * x + u) % P:
            return "not a point of the curve"
        x = x * SQRT_M1 % P
    if x == 0 and sign:
        return "a non-canonical encoding (x = 0 with the sign bit set)"
    if x & 1 != sign:
        x = P - x
    return x, y, 1, x * y % P


def key_problem(raw: bytes) -> str | None:
    """Why the 32 bytes ``raw`` must not be trusted as an ed25519 public key, or None when they may."""
    point = decode(raw)
    if isinstance(point, str):
        return point
    if _is_identity(_times(8, point)):
        return "a point of small order (it would verify signatures it never made)"
    if not _is_identity(_times(L, point)):
        return "a point outside the prime-order subgroup (it has a small-order part)"
    return None
