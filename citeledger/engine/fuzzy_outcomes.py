"""The fuzzy matcher's outcomes shared by the worker processes of one pool, through files.

Why: a fuzzy outcome depends on the parsed string and the catalog generation only, and each
process keeps the outcomes it made (``resolvers.candidates.fuzzy.OUTCOME_CACHE``). A string cited again
is then a lookup, but only in the process that resolved it first: with two workers taking
batches as they come, a repeated string met by the other worker was resolved again (on glutton
dev repeated four times, each worker resolved about 94 % of the distinct strings). Here each
worker publishes the outcomes it made, one file a batch, and takes its siblings' new files
into its own cache before it matches a batch.

Where: ``<tempdir>/citeledger-outcomes-<pool>/<generation>/``, ``<pool>`` naming the process
that owns the pool (its pid and start time, so a reused pid never sees older outcomes) and
``<generation>`` the catalog generation (folder, name, works); only pool workers share (a
process whose parent started it through ``multiprocessing``). Bounded: each worker keeps its
``KEEP_FILES`` newest files (a file gone before a sibling read it is a miss, nothing more), and
deletes its files when it exits; folders of pools whose owner is gone are removed by the next
pool's workers.
"""
from __future__ import annotations

import hashlib
import multiprocessing
import os
import pickle
import secrets
import shutil
import tempfile
import threading
from multiprocessing import util
from pathlib import Path
from typing import Any, Hashable

from citeledger.storage.atomic import atomic_write_bytes

PREFIX = "citeledger-outcomes-"
KEEP_FILES = 32  # a worker's newest files kept (about 1,000 outcomes each, 1-3 KB an outcome)


def start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot, /proc/PID/stat), None when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def pool_owner() -> str | None:
    """``<pid>-<start time>`` of the process that started this one when it is a pool worker
    (``multiprocessing``), else None."""
    if multiprocessing.parent_process() is None:
        return None
    ppid = os.getppid()
    started = start_time(ppid)
    return f"{ppid}-{started}" if started is not None else None


def remove_stale(root: Path) -> None:
    """Remove the share folders of pools whose owner is gone (pid dead or reused)."""
    for folder in root.glob(PREFIX + "*"):
        pid, _, started = folder.name[len(PREFIX):].partition("-")
        if pid.isdigit() and start_time(int(pid)) != started:
            shutil.rmtree(folder, ignore_errors=True)


def private_folder(folder: Path) -> None:
    """Make ``folder`` (mode 0700) or check that it is this user's and private; OSError if not."""
    folder.mkdir(mode=0o700, exist_ok=True)
    st = folder.lstat()
    if not os.path.isdir(folder) or folder.is_symlink() or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise PermissionError(f"{folder} is not a private folder of this user")


def generation_key(*parts: Any) -> str:
    return hashlib.blake2b(repr(parts).encode(), digest_size=10).hexdigest()


class OutcomeShare:
    """One worker's view of a share folder: ``publish`` writes this worker's new outcomes as a
    file, ``take_new`` reads the files of the others it has not read yet."""

    def __init__(self, folder: Path):
        """``folder``'s parent is made private to this user (0700), or refused: the files are
        pickles, which only this user's own processes may write."""
        self.folder = folder
        private_folder(folder.parent)
        self.me = f"{os.getpid()}-{secrets.token_hex(4)}"  # this writer's files' names
        self.seen: set[str] = set()
        self.mine: list[Path] = []
        self.count = 0
        self._lock = threading.Lock()
        folder.mkdir(parents=True, exist_ok=True)

    def publish(self, outcomes: dict[Hashable, Any]) -> None:
        """Write these outcomes (parsed key -> outcome) as one file; drop this worker's oldest
        files past ``KEEP_FILES``. A failed write only loses the sharing."""
        if not outcomes:
            return
        with self._lock:
            self.count += 1
            path = self.folder / f"{self.me}-{self.count:08d}.pkl"
            self.seen.add(path.name)
            try:
                atomic_write_bytes(path, pickle.dumps(outcomes, protocol=pickle.HIGHEST_PROTOCOL), mode=0o600)
            except OSError:
                return
            self.mine.append(path)
            while len(self.mine) > KEEP_FILES:
                self.mine.pop(0).unlink(missing_ok=True)

    def take_new(self) -> dict[Hashable, Any]:
        """The outcomes of the files the other workers wrote since the last call (in name order)."""
        found: dict[Hashable, Any] = {}
        with self._lock:
            try:
                names = sorted(p.name for p in self.folder.iterdir() if p.suffix == ".pkl")
            except OSError:
                return found
            for name in names:
                if name in self.seen:
                    continue
                self.seen.add(name)
                try:
                    found.update(pickle.loads((self.folder / name).read_bytes()))
                except (OSError, pickle.UnpicklingError, EOFError):
                    continue  # removed by its writer meanwhile: a miss
        return found

    def close(self) -> None:
        """Delete this worker's files (at its exit)."""
        with self._lock:
            for path in self.mine:
                path.unlink(missing_ok=True)
            self.mine = []


def pool_share(generation: str) -> OutcomeShare | None:
    """This pool worker's share for a catalog generation (``generation_key``), None outside a
    pool or where the folder cannot be made."""
    owner = pool_owner()
    if owner is None:
        return None
    root = Path(tempfile.gettempdir())
    try:
        remove_stale(root)
        share = OutcomeShare(root / f"{PREFIX}{owner}" / generation)
    except OSError:
        return None
    util.Finalize(share, share.close, exitpriority=10)  # run at the worker's exit
    return share
