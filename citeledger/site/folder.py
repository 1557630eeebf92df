"""The site's folder ``OUT`` and how a build reaches it: whole, or not at all, touching nothing the
site did not write.

What the site wrote is listed in ``OUT/.citeledger-site/manifest.json`` (each file's size,
modification time and SHA-256). Only a file listed there, and unchanged since (same size and
time, or the same bytes), is the site's own: a build removes or replaces only those. Anything else
in ``OUT`` (a user's file or folder, a link, a listed file someone edited) is carried into the new
build as it is (a hard link of the same file, so its bytes, times and permissions stay); a page the
build would write where such an entry is refuses the build, naming it. A non-empty ``OUT`` with no
manifest is not a citeledger site: refused unless the caller allows other files. Links inside
``OUT`` are never followed (a link where the site keeps a folder, ``OUT/papers``, refuses the
build); ``OUT`` itself may be a link, to the folder the user means.

A build is staged beside ``OUT`` (``staging``), complete with the carried entries and the
manifest, then published in one step: ``renameat2(RENAME_EXCHANGE)`` swaps the staged folder and
``OUT`` (``storage.atomic.exchange_folders``), so a reader or a web server that opens ``OUT/...``
gets a file of the previous build or of the new one, never a mix of the two and never nothing.
Where the file system cannot swap, ``OUT`` is renamed aside and the staged folder renamed to
``OUT`` (for an instant there is no ``OUT``; a build killed between the two renames is put back by
the next one).

The build swapped out stays beside ``OUT`` as the spare (``.OUT.citeledger-spare``): its unchanged
files are the same files as ``OUT``'s (hard links), so it costs the disk only the pages that
changed, and the next build is staged in it. A spare is marked unfinished (its manifest removed)
before a build changes it; a build killed then leaves it so, and the next build removes it and
stages in a new folder (``.OUT.citeledger-staging-*``), as it removes what any killed build left.
A build killed at any point leaves ``OUT`` as the previous build left it. Builds of one ``OUT``
take turns on a lock beside it (``.OUT.citeledger-lock``)."""
from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson

from citeledger.app_errors import UsageError
from citeledger.storage.atomic import move_folder, swap_in_folder

SITE_DIR = ".citeledger-site"  # in OUT: what the site wrote and what its build read
MANIFEST = f"{SITE_DIR}/manifest.json"
STATE = f"{SITE_DIR}/state.json"
CITES = f"{SITE_DIR}/cites.arrow"
FORMAT = "citeledger-site 1"
# the only names the site writes: its two top pages, pages in its two folders, the papers' JSON records
OWN_NAME = re.compile(r"(?:index|notices)\.html|(?:papers|works)/[^/\x00\\]+\.html|papers/[^/\x00\\]+\.json")
FOLDERS = ("papers", "works", SITE_DIR)  # the folders the site keeps in OUT (never links)
SHOWN = 5  # entries a refusal names


@dataclass(frozen=True)
class Entry:
    """A file the site wrote: its size, modification time (ns) and the SHA-256 of its bytes."""

    size: int
    mtime_ns: int
    sha256: str

    def as_list(self) -> list[Any]:
        return [self.size, self.mtime_ns, self.sha256]


@dataclass
class Contents:
    """``OUT`` as a build finds it: the site's own files (unchanged since it wrote them), the
    entries it did not write (kept; folders apart from files), and what the previous build read
    (its state: None for no usable one)."""

    own: dict[str, Entry] = field(default_factory=dict)
    others: list[str] = field(default_factory=list)
    other_folders: list[str] = field(default_factory=list)
    state: dict[str, Any] | None = None
    inodes: dict[str, int] = field(default_factory=dict)  # each file's (own or other) inode in OUT


def file_entry(data: bytes, status: os.stat_result) -> Entry:
    return Entry(status.st_size, status.st_mtime_ns, hashlib.sha256(data).hexdigest())


class SiteFolder:
    """``OUT``, the lock and staging folders beside it, and the steps of a build's publishing."""

    def __init__(self, out: str | os.PathLike[str]):
        given = Path(out)
        self.out = given.resolve() if given.is_symlink() else given.absolute()
        self.parent, name = self.out.parent, self.out.name
        self.lock = self.parent / f".{name}.citeledger-lock"
        self.prefix = f".{name}.citeledger-"
        self.spare = self.parent / f"{self.prefix}spare"

    # ---- before a build: what was left behind, what OUT holds -------------------------------

    def leftovers(self) -> list[Path]:
        """What killed builds left beside ``OUT``: staged folders and previous builds moved aside."""
        if not self.parent.is_dir():
            return []
        return sorted(p for p in self.parent.iterdir()
                      if p.name.startswith(self.prefix + "staging-") or p.name.startswith(self.prefix + "old-"))

    def clean_leftovers(self) -> int:
        """Put back a previous build a killed publish moved aside (``OUT`` missing), then remove every
        other leftover, and a spare a killed build left unfinished; only under the lock, where no
        live build owns one."""
        left = self.leftovers()
        aside = [p for p in left if p.name.startswith(self.prefix + "old-")]
        if not os.path.lexists(self.out) and aside:
            newest = max(aside, key=lambda p: p.stat().st_mtime_ns)
            move_folder(newest, self.out)
            left.remove(newest)
        if os.path.lexists(self.spare) and not self.spare_is_whole():
            left.append(self.spare)
        for path in left:
            if path.is_symlink():
                path.unlink()
            else:
                remove_tree(path)
        return len(left)

    def spare_is_whole(self) -> bool:
        """Whether the spare is a build as it was published (a folder, not a link, with its manifest)."""
        manifest = self.spare / MANIFEST
        return not self.spare.is_symlink() and self.spare.is_dir() and manifest.is_file() and not manifest.is_symlink()

    def contents(self, allow_other_files: bool) -> Contents:
        """What ``OUT`` holds, or a one-line refusal (``UsageError``, exit 2): ``OUT`` is not a folder;
        it holds files but no site manifest (unless ``allow_other_files``); a folder the site keeps
        is a link or a file; the manifest cannot be read."""
        out = self.out
        if not os.path.lexists(out):
            return Contents()
        if not out.is_dir():
            raise UsageError(f"{out}: not a folder; the site is written to a folder (give another OUT)")
        for name in FOLDERS:
            path = out / name
            if os.path.lexists(path) and (path.is_symlink() or not path.is_dir()):
                what = "a symbolic link" if path.is_symlink() else "not a folder"
                raise UsageError(f"{path}: {what}; the site keeps its {name}/ folder there and never writes "
                                 "through a link: move it away or give another OUT")
        manifest = self._manifest()
        if manifest is None:
            entries = sorted(os.listdir(out))
            if entries and not allow_other_files:
                raise UsageError(f"{out}: holds {len(entries)} entries citeledger did not write (not a citeledger "
                                 f"site: no {MANIFEST}), e.g. {', '.join(entries[:SHOWN])}; give an empty or new "
                                 "folder, or --allow-other-files to write the site beside them (they are kept)")
            manifest = {}
        contents = Contents(state=self._state() if manifest else None)
        for rel, status in walk(out):
            if rel == SITE_DIR or rel.startswith(SITE_DIR + "/"):
                continue  # the manifest and state: written again by every build
            if stat.S_ISDIR(status.st_mode):
                if rel not in FOLDERS:
                    contents.other_folders.append(rel)
                continue
            contents.inodes[rel] = status.st_ino
            entry = manifest.get(rel)
            if entry is not None and self._unchanged(rel, status, entry):
                contents.own[rel] = entry
            else:
                contents.others.append(rel)
        return contents

    def _manifest(self) -> dict[str, Entry] | None:
        """The manifest's files, None when ``OUT`` has none; a manifest that is there but cannot be
        read, or names a file the site never writes, is a one-line refusal."""
        path = self.out / MANIFEST
        if not os.path.lexists(path):
            return None
        try:
            if not stat.S_ISREG(path.lstat().st_mode):
                raise ValueError("not a regular file")
            data = orjson.loads(path.read_bytes())
            if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
                raise ValueError(f"not a manifest of format {FORMAT!r}")
            files = {}
            for rel, value in data["files"].items():
                if not OWN_NAME.fullmatch(rel) or "/." in "/" + rel:
                    raise ValueError(f"names {rel[:80]!r}, which is no file the site writes")
                size, mtime_ns, sha = value
                files[rel] = Entry(int(size), int(mtime_ns), str(sha))
            return files
        except (OSError, ValueError, TypeError) as exc:
            raise UsageError(f"{path}: cannot be read as the site's manifest ({exc}); nothing was changed: remove "
                             f"{self.out} or give another OUT") from None

    def _state(self) -> dict[str, Any] | None:
        """What the previous build read (for an incremental build), None when it is missing or unreadable:
        the build then makes every page again, and links the unchanged ones."""
        try:
            state = orjson.loads((self.out / STATE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        return state if isinstance(state, dict) and state.get("format") == FORMAT else None

    def _unchanged(self, rel: str, status: os.stat_result, entry: Entry) -> bool:
        """A listed file is the site's own while it is as written: same size and time, or (copied
        elsewhere and back) the same bytes."""
        if not stat.S_ISREG(status.st_mode) or status.st_size != entry.size:
            return False
        if status.st_mtime_ns == entry.mtime_ns:
            return True
        try:
            return hashlib.sha256((self.out / rel).read_bytes()).hexdigest() == entry.sha256
        except OSError:
            return False

    # ---- publishing: the staged build swapped in, the previous one kept as the spare ----------

    def publish(self, staging: Path) -> None:
        """The staged build becomes ``OUT`` in one step; the previous build becomes the spare."""
        try:
            previous = swap_in_folder(staging, self.out,
                                      self.parent / f"{self.prefix}old-{os.getpid()}-{secrets.token_hex(4)}")
            if previous is not None and previous != self.spare:
                if os.path.lexists(self.spare):
                    remove_tree(self.spare)
                move_folder(previous, self.spare)
        except OSError as exc:
            raise UsageError(f"{self.out}: the built site could not be put in place ({exc.strerror}); the previous "
                             "site is as it was (OUT must be a folder its parent lets citeledger rename)") from None


def walk(top: Path, rel: str = "") -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under ``top`` (relative POSIX name, its ``lstat``), folders before what they hold;
    a link is an entry, never followed."""
    with os.scandir(top / rel if rel else top) as entries:
        found = sorted((e.name, e.stat(follow_symlinks=False)) for e in entries)
    for name, status in found:
        path = f"{rel}/{name}" if rel else name
        yield path, status
        if stat.S_ISDIR(status.st_mode):
            yield from walk(top, path)


def remove_tree(path: Path) -> None:
    """Remove a folder the site staged (links in it removed, never followed)."""
    shutil.rmtree(path, ignore_errors=False)
