"""The files the remote harvests keep under ``state_dir``: checkpoints and the Retraction Watch
copy. ``resolvers/remote`` writes no file; it is handed these, and every byte goes through
``atomic.py`` (staged beside the target, fsynced, renamed), so a crash never leaves half a file."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, BinaryIO, ContextManager

from citeledger.storage.atomic import atomic_stream, atomic_write_bytes
from citeledger.storage.places import LedgerDir, LedgerPlaces
from resolvers.remote.checkpoint import decode_state, encode_state


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


class SearchCacheDir:
    """The search services' answers, one small JSON file per service and query under
    ``<state_dir>/search-cache/<service>/``, named by a digest of the query; each entry holds the
    service, the query, when it answered and the works. A damaged file is a miss (asked again)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, service: str, query: str) -> Path:
        digest = hashlib.sha256(f"{service}\0{query}".encode("utf-8", "surrogatepass")).hexdigest()
        return self.root / service / digest[:2] / f"{digest}.json"

    def get(self, service: str, query: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(self.path(service, query).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # a damaged entry (nested past the parser's depth...)
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, service: str, query: str, entry: dict[str, Any]) -> None:
        data = json.dumps(entry, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")
        atomic_write_bytes(self.path(service, query), data)


class PaperCache:
    """What was fetched for papers, kept under ``<ledger>/_cache/``: arXiv e-prints and PDFs
    (``arxiv/<id>.eprint``, ``arxiv/<id>.pdf``) and GROBID's TEI for a PDF (``grobid/<sha256 of
    the PDF>.tei.xml``). A re-run, a resumed run and a run's second read of its inputs ask no
    service again; each file is whole or absent (staged, then renamed)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, kind: str, key: str, suffix: str) -> Path:
        # an arXiv id's "/" (hep-th/9901001) is escaped, so every key is one file name
        return self.root / kind / (key.replace("%", "%25").replace("/", "%2F") + suffix)

    def get(self, kind: str, key: str, suffix: str) -> bytes | None:
        path = self.path(kind, key, suffix)
        return path.read_bytes() if path.is_file() else None

    def put(self, kind: str, key: str, suffix: str, data: bytes) -> Path:
        path = self.path(kind, key, suffix)
        atomic_write_bytes(path, data)
        return path


def paper_cache(ledger_dir: LedgerDir) -> PaperCache:
    """The paper cache of a ledger folder."""
    return PaperCache(LedgerPlaces.of(ledger_dir).cache)
