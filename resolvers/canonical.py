"""The one canonical JSON of citeledger: the bytes every digest (observation, record) is taken over.

Rules, all of them (changing any changes ``observation_digest``, which is part of the ledger):

* object keys sorted by Python's ``str`` order (code points), at every depth;
* no whitespace: ``,`` and ``:`` separators;
* non-ASCII kept as itself (``ensure_ascii=False``); the caller encodes the string as UTF-8;
* numbers as Python's ``json`` writes them (``repr`` of floats, so ``1.0`` stays ``1.0``);
* lenient (the default, the observation's rules): a value JSON has no type for is written as
  ``str(value)``, and NaN/Infinity as the bare words ``NaN``/``Infinity``;
* ``strict=True`` (the citation record's rules): such values raise instead (``TypeError``,
  ``ValueError``), because a record is read by other tools and must be plain JSON.

This is not RFC 8785 (JCS): JCS sorts keys by UTF-16 code units and writes numbers the
ECMAScript way (``1.0`` -> ``1``). Records of schema v2 are digested and signed over JCS
(``resolvers/jcs.py``); v1 records and observations keep these bytes.
"""
from __future__ import annotations

import json
from typing import Any

_LENIENT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
_STRICT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(value: Any, *, strict: bool = False) -> str:
    """``value`` as canonical JSON text (see the module's rules): same content, same bytes. The
    two encoders are made once (``json.dumps`` with these options builds one per call, a cost
    paid twice per observation); an encoder keeps no state between calls, so threads share it."""
    return (_STRICT if strict else _LENIENT).encode(value)
