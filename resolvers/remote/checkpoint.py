"""A harvest's memory of where it stopped, kept by the caller: resolvers write no file.

The harvest writes its state after each page's records have been handed over, so a harvest that
fails resumes at the page that failed (records of that page may be seen twice; catalog loading is
idempotent). Where the state lives is the caller's choice: ``citeledger.storage.remote_state.FileCheckpoint``
(a JSON file, replaced atomically) or ``MemoryCheckpoint`` (tests).
"""
from __future__ import annotations

import json
from typing import Any, Protocol


class Checkpoint(Protocol):
    def read(self) -> dict[str, Any]:
        """The last state written, or ``{}`` (none yet, or a damaged one: start over)."""
        ...

    def write(self, state: dict[str, Any]) -> None:
        """Replace the state, whole or not at all."""
        ...


class MemoryCheckpoint:
    """A checkpoint held in memory; it keeps a copy, as a file would."""

    def __init__(self, state: dict[str, Any] | None = None):
        self.state: dict[str, Any] = decode_state(encode_state(state or {}))

    def read(self) -> dict[str, Any]:
        return decode_state(encode_state(self.state))

    def write(self, state: dict[str, Any]) -> None:
        self.state = decode_state(encode_state(state))


def encode_state(state: dict[str, Any]) -> bytes:
    """The bytes of a checkpoint file (sorted keys, so the same state is the same file)."""
    return json.dumps(state, sort_keys=True, indent=1).encode("utf-8")


def decode_state(data: bytes) -> dict[str, Any]:
    try:
        state = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past the parser's depth
        return {}  # a damaged checkpoint means starting over, never a wrong resume
    return state if isinstance(state, dict) else {}


def read_state(checkpoint: Checkpoint | None) -> dict[str, Any]:
    return checkpoint.read() if checkpoint is not None else {}


def write_state(checkpoint: Checkpoint | None, state: dict[str, Any]) -> None:
    if checkpoint is not None:
        checkpoint.write(state)
