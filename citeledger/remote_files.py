"""The files the remote harvests keep under ``state_dir``: checkpoints and the Retraction Watch
copy. ``resolvers/remote`` writes no file; it is handed these, and every byte goes through
``atomic.py`` (staged beside the target, fsynced, renamed), so a crash never leaves half a file."""
from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO, ContextManager

from resolvers.remote.checkpoint import decode_state, encode_state

from .atomic import atomic_stream, atomic_write_bytes


class FileCheckpoint:
    """A harvest checkpoint as a small JSON file, replaced atomically."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def read(self) -> dict[str, Any]:
        return decode_state(self.path.read_bytes()) if self.path.is_file() else {}

    def write(self, state: dict[str, Any]) -> None:
        atomic_write_bytes(self.path, encode_state(state))


class FileCopy:
    """A downloaded file: a new copy replaces the old one only once it is complete."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def exists(self) -> bool:
        return self.path.is_file()

    def replace(self) -> ContextManager[BinaryIO]:
        return atomic_stream(self.path)


def validators_path(dest: Path) -> Path:
    """Where the ``ETag``/``Last-Modified`` of a downloaded copy are kept: beside it."""
    return dest.with_name(dest.name + ".http.json")


def retraction_watch_files(dest: str | Path) -> tuple[FileCopy, FileCheckpoint]:
    """The copy of the Retraction Watch CSV at ``dest`` and its validators beside it."""
    return FileCopy(dest), FileCheckpoint(validators_path(Path(dest)))
