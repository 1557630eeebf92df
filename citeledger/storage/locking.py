"""One writer at a time per ledger and per catalog: ``fcntl.flock`` on a lock file in the folder.

The kernel drops a flock when its holder dies (SIGKILL included), so a crashed run never leaves a
stale lock behind. Two resolve runs on one ledger serialise: the second waits (up to ``timeout``,
then fails with a clear error naming the holder) until the first finishes. Readers take no lock:
every file they can see was renamed into place complete.

Within one process the ledger lock is re-entrant by path: a process that planned a run and
abandoned it (an exception before ``finish_run``) may plan again without deadlocking itself.
"""
from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from citeledger.app_errors import LedgerPathError, LockTimeout
from citeledger.options import env_seconds
from citeledger.storage.places import CatalogDir, CatalogPlaces, LedgerDir, LedgerPlaces

# Seconds a writer waits for a lock another process holds: None reads CITELEDGER_LOCK_TIMEOUT
# (checked: a finite number >= 0) when a lock is taken, else an hour.
DEFAULT_TIMEOUT: float | None = None
TIMEOUT_FALLBACK = 3600.0


def lock_timeout(timeout: float | None = None) -> float:
    """``timeout``, else ``DEFAULT_TIMEOUT``, else ``CITELEDGER_LOCK_TIMEOUT`` (one line naming it
    when it is not a finite number of seconds >= 0), else an hour."""
    if timeout is not None:
        return timeout
    if DEFAULT_TIMEOUT is not None:
        return DEFAULT_TIMEOUT
    return env_seconds("CITELEDGER_LOCK_TIMEOUT", TIMEOUT_FALLBACK)

_held: dict[str, IO[bytes]] = {}
_held_lock = threading.Lock()


def _open_lock_file(path: Path) -> IO[bytes]:
    """The lock file, or one line saying why the folder cannot hold one (a file where the
    folder should be, a read-only folder)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "a+b")
    except (FileExistsError, NotADirectoryError):
        raise LedgerPathError(f"{path.parent} is not a folder (a file is in the way)") from None
    except OSError as exc:
        if isinstance(exc, PermissionError) or exc.errno == errno.EROFS:
            raise LedgerPathError(f"{path.parent} is not writable: {exc.strerror}") from None
        raise


def _acquire(path: Path, timeout: float) -> IO[bytes]:
    fh = _open_lock_file(path)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                fh.seek(0)
                holder = fh.read(200).decode("utf-8", "replace").strip() or "another process"
                fh.close()
                raise LockTimeout(f"{path.parent} is in use by {holder}; gave up after {timeout:.0f} s") from None
            time.sleep(0.05)
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()}".encode())
    fh.flush()
    return fh


def _ledger_lock(ledger_dir: LedgerDir) -> Path:
    return LedgerPlaces(Path(ledger_dir).resolve()).lock


def acquire_ledger(ledger_dir: LedgerDir, timeout: float | None = None) -> None:
    """Take the ledger's writer lock for this process (waits while another process holds it)."""
    path = _ledger_lock(ledger_dir)
    with _held_lock:
        if str(path) in _held:
            return
        _held[str(path)] = _acquire(path, lock_timeout(timeout))


def holds_ledger(ledger_dir: LedgerDir) -> bool:
    """Whether this process holds the ledger's writer lock now."""
    with _held_lock:
        return str(_ledger_lock(ledger_dir)) in _held


def release_ledger(ledger_dir: LedgerDir) -> None:
    """Give the ledger's writer lock back (a no-op when this process does not hold it)."""
    path = _ledger_lock(ledger_dir)
    with _held_lock:
        fh = _held.pop(str(path), None)
    if fh is not None:
        fh.close()  # closing the descriptor releases the flock


def release_all_ledgers() -> list[str]:
    """Give back every ledger lock this process holds (a process that moves on to other ledgers
    without its run's own release, such as a test session); the lock files' paths."""
    with _held_lock:
        held = list(_held.items())
        _held.clear()
    for _path, fh in held:
        fh.close()
    return [path for path, _fh in held]


@contextmanager
def exclusive(directory: CatalogDir, timeout: float | None = None) -> Iterator[None]:
    """The folder's writer lock for the duration of a block (a catalog build)."""
    with exclusive_file(CatalogPlaces.of(directory).lock, timeout):
        yield


@contextmanager
def exclusive_file(path: Path, timeout: float | None = None) -> Iterator[None]:
    """The lock of the lock file ``path`` for the duration of a block (a site's build, whose lock
    sits beside the site's folder, which a build swaps whole)."""
    fh = _acquire(path, lock_timeout(timeout))
    try:
        yield
    finally:
        fh.close()
