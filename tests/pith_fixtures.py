"""The published Pith records and Pith's public key (tests/fixtures/pith), read fresh for each test."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PITH = Path(__file__).parent / "fixtures" / "pith"


def citation_record() -> dict[str, Any]:
    return json.loads((PITH / "pith-paper-citation-record-2501.00254.json").read_text("utf-8"))


def number_record() -> dict[str, Any]:
    return json.loads((PITH / "pith-number-record-2509.00217.json").read_text("utf-8"))


def key_document() -> dict[str, Any]:
    return json.loads((PITH / "pith-signing-key.json").read_text("utf-8"))
