"""The folder a build is staged in, beside ``OUT`` (``folder``): the spare (the build before the
published one, kept whole) brought to what the new build publishes, or, without a whole spare, a
new folder. Either way the staged folder ends holding exactly: the site's folders, every entry of
``OUT`` the site did not write (the same file: a hard link, so its bytes, times and permissions
stay), and the new build's pages, each the published file when its bytes are the same (a hard link:
the page is not rewritten) or a new file. In the spare, an entry that is already that (the same
inode as ``OUT``'s) is left as it is, and only the others are removed, linked or written: the work
grows with what changed since the build before last, not with the site's size.

A page where an entry the site did not write is (a user's ``index.html``, a page edited after the
build) refuses the build: nothing of ``OUT`` changed. The second process of a build writes its
papers' pages into the same staged folder through its own ``StagedFiles``."""
from __future__ import annotations

import hashlib
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeledger.app_errors import UsageError
from citeledger.site.folder import (
    CITES,
    FOLDERS,
    MANIFEST,
    SITE_DIR,
    STATE,
    Contents,
    Entry,
    SiteFolder,
    remove_tree,
    walk,
)
from citeledger.storage.atomic import link_file, write_new_file


def clash(out: Path, rel: str) -> UsageError:
    return UsageError(f"{out / rel}: a file citeledger did not write (or one changed since) is where the site puts "
                      "this page; it is left alone and nothing was changed: move it away or give another OUT")


@dataclass
class StagedFiles:
    """The files of a build written into its staged folder (see the module). ``there``: the staged
    folder's entries before the build (a spare's: name -> inode; empty for a new folder); ``inodes``:
    ``OUT``'s; ``others``: the entries of ``OUT`` the site did not write. ``files``: what the build
    has put, with ``written`` and ``kept`` counting each way."""

    out: Path
    staging: Path
    own: dict[str, Entry]
    there: dict[str, int] = field(default_factory=dict)
    inodes: dict[str, int] = field(default_factory=dict)
    others: frozenset[str] = frozenset()
    files: dict[str, Entry] = field(default_factory=dict)
    written: int = 0
    kept: int = 0
    folders: set[str] = field(default_factory=set)  # the spare's folders

    def __post_init__(self) -> None:
        self._out, self._staging = f"{self.out}/", f"{self.staging}/"  # names joined as text: many a build

    def clear_folder(self, prefix: str, keep: set[str]) -> None:
        """Every entry of the spare's under ``prefix`` but those in ``keep`` removed now (the pages the
        papers made again will take their place, whatever their number)."""
        for rel in [r for r in self.there if r.startswith(prefix) and r not in keep]:
            os.unlink(self.staging / rel)
            del self.there[rel]

    def put(self, rel: str, data: bytes) -> None:
        """Page ``rel`` with ``data``: the published file when its bytes are the same, else written."""
        sha = hashlib.sha256(data).hexdigest()
        old = self.own.get(rel)
        if old is not None and old.sha256 == sha:
            self.keep(rel)
            return
        self._clear(rel)
        try:
            status = write_new_file(self._staging + rel, data)
        except FileExistsError:
            raise clash(self.out, rel) from None
        self.files[rel] = Entry(status.st_size, status.st_mtime_ns, sha)
        self.written += 1

    def keep(self, rel: str) -> None:
        """The published build's own file ``rel`` in the new build as it is: left as it is when the
        staged folder has it already, else a hard link (the same bytes written where the file
        system has none)."""
        old = self.own[rel]
        self.kept += 1
        self.files[rel] = old
        if _same(self.there.get(rel), self.inodes.get(rel)):
            del self.there[rel]
            return
        self._clear(rel)
        try:
            link_file(self._out + rel, self._staging + rel)
        except FileExistsError:
            raise clash(self.out, rel) from None
        except OSError:  # a file system without hard links
            self.files[rel] = Entry(*_written(self._staging + rel, (self.out / rel).read_bytes()), old.sha256)

    def _clear(self, rel: str) -> None:
        """Make room for ``rel`` in the staged folder: an entry of the spare's goes, an entry the site
        did not write refuses the build."""
        if rel in self.others:
            raise clash(self.out, rel)
        if self.there.pop(rel, None) is not None:
            os.unlink(self._staging + rel)

    def counts(self) -> dict[str, Any]:
        """What a second process sends back: its files and counts."""
        return {"files": {rel: entry.as_list() for rel, entry in self.files.items()}, "written": self.written,
                "kept": self.kept}

    def add(self, counts: dict[str, Any]) -> None:
        self.files.update({rel: Entry(*entry) for rel, entry in counts["files"].items()})
        self.written += counts["written"]
        self.kept += counts["kept"]


def _same(spare: int | None, published: int | None) -> bool:
    """Whether the spare's entry is the published file itself (one inode, two names)."""
    return spare is not None and spare == published


def _written(path: str, data: bytes) -> tuple[int, int]:
    status = write_new_file(path, data)
    return status.st_size, status.st_mtime_ns


def stage(folder: SiteFolder, contents: Contents) -> StagedFiles:
    """The staged folder of a build (see the module), holding the site's folders and the entries of
    ``OUT`` the site did not write; a one-line refusal when it cannot be made or one cannot be carried."""
    spare = folder.spare if folder.spare_is_whole() and os.path.lexists(folder.out) else None
    folders: set[str] = set()
    if spare is not None:
        there, folders = _spare_entries(spare)
        staging = spare
    else:
        there = {}
        staging = folder.parent / f"{folder.prefix}staging-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            staging.mkdir()
        except OSError as exc:
            raise UsageError(f"{folder.parent}: cannot stage the site beside {folder.out.name} ({exc.strerror}); "
                             "the site is built next to OUT and swapped in whole") from None
    staged = StagedFiles(folder.out, staging, contents.own, there, contents.inodes, frozenset(contents.others),
                         folders=folders)
    try:
        _carry(staged, folder, contents)
    except BaseException:
        remove_tree(staging)
        raise
    return staged


def _spare_entries(spare: Path) -> tuple[dict[str, int], set[str]]:
    """The spare's files by name (inodes) and its folders, once it is marked unfinished (its manifest
    first, then its state and table of references removed: they are written last again)."""
    for name in (MANIFEST, STATE, CITES):
        try:
            os.unlink(spare / name)
        except FileNotFoundError:
            pass
    files, folders = {}, set()
    for rel, status in walk(spare):
        if stat.S_ISDIR(status.st_mode):
            folders.add(rel)
        else:
            files[rel] = status.st_ino
    return files, folders


def _carry(staged: StagedFiles, folder: SiteFolder, contents: Contents) -> None:
    """The site's folders and the entries of ``OUT`` the site did not write, in the staged folder."""
    staging = staged.staging
    if folder.out.is_dir():
        os.chmod(staging, stat.S_IMODE(folder.out.stat().st_mode))
    for rel in [*FOLDERS, *sorted(contents.other_folders)]:
        path = staging / rel
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            os.unlink(path)
            staged.there.pop(rel, None)
        path.mkdir(exist_ok=True)
        os.chmod(path, stat.S_IMODE(path.stat().st_mode) | stat.S_IRWXU)  # filled below; its mode set after
    for rel in contents.others:
        if _same(staged.there.get(rel), contents.inodes.get(rel)):
            del staged.there[rel]
            continue
        if staged.there.pop(rel, None) is not None:
            os.unlink(staging / rel)
        try:
            link_file(folder.out / rel, staging / rel)
        except OSError as exc:
            raise UsageError(f"{folder.out / rel}: a file citeledger did not write, which the new build cannot "
                             f"keep beside its pages ({exc.strerror}); nothing was changed") from None


def finish(staged: StagedFiles, folder: SiteFolder, contents: Contents) -> None:
    """What the staged folder still holds of the spare and the new build did not put (pages of papers
    and works gone, entries a user removed from ``OUT``) removed; folders the build does not keep
    removed, and each kept folder given ``OUT``'s mode."""
    for rel in staged.there:
        os.unlink(staged.staging / rel)
    staged.there.clear()
    keep = {SITE_DIR, *FOLDERS, *contents.other_folders}
    for rel in sorted(staged.folders - keep, reverse=True):  # a folder a user removed from OUT: deepest first
        if os.path.lexists(staged.staging / rel):
            remove_tree(staged.staging / rel)
    for rel in sorted(contents.other_folders, reverse=True):  # once filled: a read-only folder stays so
        os.chmod(staged.staging / rel, stat.S_IMODE((folder.out / rel).lstat().st_mode))
    for rel in FOLDERS:
        if (folder.out / rel).is_dir():
            os.chmod(staged.staging / rel, stat.S_IMODE((folder.out / rel).stat().st_mode))
