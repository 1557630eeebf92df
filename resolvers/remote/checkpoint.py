"""A harvest's memory of where it stopped: a small JSON file, replaced atomically.

Written after each page's records have been handed over, so a harvest that fails resumes at the
page that failed (records of that page may be seen twice; catalog loading is idempotent).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def read_state(path: str | os.PathLike | None) -> dict[str, Any]:
    if path is None:
        return {}
    p = Path(path)
    if not p.is_file():
        return {}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}  # a damaged checkpoint means starting over, never a wrong resume
    return data if isinstance(data, dict) else {}


def write_state(path: str | os.PathLike | None, state: dict[str, Any]) -> None:
    """Write to a temporary file in the same directory, then rename over the old one."""
    if path is None:
        return
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, sort_keys=True, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
