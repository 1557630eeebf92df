"""Generation pins: a run resolves every batch on the catalog generation it was planned on, so
a build meanwhile keeps that generation (``pinned_generations``) until the run ends."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from citeledger.app_errors import LedgerPathError
from citeledger.storage.atomic import atomic_write_bytes
from citeledger.storage.places import CatalogDir, CatalogPlaces, LedgerDir, LedgerPlaces
from resolvers.errors import ConfigError


def _pin_path(catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str) -> Path:
    return CatalogPlaces.of(catalog_dir).pin(LedgerPlaces.of(ledger_dir), run_id)


def pin_generation(catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str, generation: str) -> bool:
    """Keep ``generation`` through later builds until the run ends (``unpin_generation``): an
    interrupted run is completed on the catalog it started on. False when the catalog folder is
    read-only (nobody who could rebuild it runs as us then)."""
    pin = {"generation": generation, "ledger": str(Path(ledger_dir).resolve()), "run_id": run_id,
           "pid": os.getpid()}
    try:
        atomic_write_bytes(_pin_path(catalog_dir, ledger_dir, run_id), json.dumps(pin, sort_keys=True).encode())
    except (LedgerPathError, PermissionError):
        return False
    return True


def pinned_generation(catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str) -> str | None:
    """The generation an unfinished run of this ledger is pinned to, if any."""
    try:
        return json.loads(_pin_path(catalog_dir, ledger_dir, run_id).read_text())["generation"]
    except (OSError, ValueError, KeyError):
        return None


def unpin_generation(catalog_dir: CatalogDir, ledger_dir: LedgerDir, run_id: str) -> None:
    try:
        _pin_path(catalog_dir, ledger_dir, run_id).unlink(missing_ok=True)
    except OSError:
        pass  # a read-only catalog never held a pin


def _pin_is_stale(pin: dict[str, Any]) -> bool:
    """A pin outlives its purpose when its run finished or its ledger no longer knows the run,
    and no live process (the planner, between pinning and starting the run) holds it."""
    try:
        os.kill(int(pin["pid"]), 0)
        return False  # its planner (or a process reusing the pid: keeping it is the safe side)
    except (ProcessLookupError, ValueError, KeyError, TypeError):
        pass
    except PermissionError:
        return False
    ledger, run_id = LedgerPlaces(Path(pin.get("ledger", ""))), str(pin.get("run_id", ""))
    try:
        return ledger.run_row(run_id).exists() or not ledger.manifest(run_id).exists()
    except ConfigError:  # not a run id: a pin no run of ours wrote
        return True


def pinned_generations(catalog_dir: CatalogDir) -> set[str]:
    """Generations pinned by unfinished runs; stale pins are removed on the way (called under
    the catalog's build lock)."""
    kept = set()
    for path in CatalogPlaces.of(catalog_dir).pins.glob("*.json"):
        try:
            pin = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if _pin_is_stale(pin):
            path.unlink(missing_ok=True)
        else:
            kept.add(str(pin.get("generation")))
    return kept
