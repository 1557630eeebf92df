"""Where each thing of a ledger folder and of a catalog folder lives: the one module that says their
names. A run carries one ``LedgerPlaces`` and one ``CatalogPlaces``; every module asks them for the
place it needs (the lock, the input spool, a run's manifest, the keys, the records, the views, the
pins...) instead of joining names onto a bare path.

Both are ``os.PathLike`` and print as their folder, so a function that still takes a folder path
takes them too (``Path(places)``, ``open(places / "x")``): the folder is the same either way.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from citeledger.options import check_run_id


@dataclass(frozen=True)
class Folder:
    """A folder of citeledger's (a ledger, a catalog): its root, and what both kinds answer."""

    root: Path

    @classmethod
    def of(cls, folder: str | os.PathLike[str]) -> Self:
        """The places of a folder given as a path, as places, or as an object that carries its
        places (``places``: a ``LedgerStore``), which are then the ones returned."""
        if isinstance(folder, cls):
            return folder
        places = getattr(folder, "places", None)
        return places if isinstance(places, cls) else cls(Path(folder))

    def __fspath__(self) -> str:
        return str(self.root)

    def __str__(self) -> str:
        return str(self.root)

    def __truediv__(self, name: str) -> Path:
        return self.root / name

    @property
    def lock(self) -> Path:
        """The writer's lock (``storage.locking``)."""
        return self.root / LOCK_NAME


@dataclass(frozen=True)
class LedgerPlaces(Folder):
    """A ledger folder and the place of each of its parts."""

    # half-written files of a killed writer, the spooled copies of piped inputs
    @property
    def staging(self) -> Path:
        return self.root / ".staging"

    @property
    def spool(self) -> Path:
        return self.root / ".input-spool"

    # what was fetched for papers (e-prints, PDFs, GROBID's answers), the signing keys, the records
    @property
    def cache(self) -> Path:
        return self.root / "_cache"

    @property
    def keys(self) -> Path:
        return self.root / "keys"

    @property
    def active_key(self) -> Path:
        """The file naming the key records are signed with."""
        return self.keys / "ACTIVE"

    @property
    def records(self) -> Path:
        return self.root / "records"

    @property
    def titles(self) -> Path:
        """The citing papers' titles as read from their own sources: one part per run that read papers."""
        return self.root / "titles"

    @property
    def views(self) -> Path:
        """``ledger.duckdb``: the views over the parts, for the plain ``duckdb`` command."""
        return self.root / LEDGER_DB

    # the parts of each run (observations, rejects, notices, runs) and the runs' manifests
    def parts(self, kind: str, run_id: str) -> Path:
        return self.root / kind / check_run_id(run_id)

    @property
    def manifests(self) -> Path:
        return self.root / "_runs"

    def run_state(self, run_id: str) -> Path:
        """A run's own folder of state: its manifest and its ``complete`` mark."""
        return self.manifests / check_run_id(run_id)

    def manifest(self, run_id: str) -> Path:
        return self.run_state(run_id) / "manifest.json"

    def run_row(self, run_id: str) -> Path:
        """The ``runs`` part of a finished run: there once the run is finished."""
        return self.parts("runs", run_id) / "run.parquet"

    def key(self) -> str:
        """A short name of this ledger that other folders may file things under (a catalog's pins)."""
        return hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class CatalogPlaces(Folder):
    """A catalog folder and the place of each of its parts."""

    @property
    def current(self) -> Path:
        """The pointer naming the live generation."""
        return self.root / "CURRENT"

    def generation(self, name: str) -> Path:
        return self.root / Path(name).name

    @property
    def pins(self) -> Path:
        """The generations unfinished runs hold, one file a run (``generation_pins``)."""
        return self.root / ".pins"

    def pin(self, ledger: LedgerPlaces, run_id: str) -> Path:
        return self.pins / f"{ledger.key()}-{check_run_id(run_id)}.json"

    @property
    def extract_cache(self) -> Path:
        return self.root / "extract-cache"

    @property
    def sharding(self) -> Path:
        """How the catalog was last sharded: ``{"n_shards": N, ...}``."""
        return self.root / "sharding.json"


LOCK_NAME = ".lock"
LEDGER_DB = "ledger.duckdb"

# a ledger or catalog folder as functions take it: its places, or a path to it
LedgerDir = str | os.PathLike[str]
CatalogDir = str | os.PathLike[str]
