"""The nightly's folders, confined: checked before anything is read or moved.

An unattended night moves files: out of its ``inbox`` into ``processed`` (or ``rejected``, beside
it), and writes its ``ledger`` and ``catalog`` (and, when set, the static ``site``). A parameter
pointing at an unrelated folder would move that folder's files, and folders inside one another
break every later night (``processed`` inside ``inbox`` is read back as an input, then moved into
itself). So, before the night starts:

* every folder (symbolic links followed) must lie under one of the configured roots
  (``nightly.roots``, by default the project's ``data`` folder);
* no folder may be another, or lie inside another: ``processed`` inside ``inbox`` (or the
  reverse), the ledger inside either, the catalog inside the inbox, the site inside the inbox (its
  pages would be read as the next night's input) or holding the ledger...

A refusal is one line naming the parameter, the folder and the rule (``UsageError``): the night
does not start, and nothing has moved.
"""
from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Sequence

from citeledger.app_errors import UsageError

DEFAULT_ROOTS = ("data",)  # relative to the working directory (or the settings file that sets them)


@dataclass(frozen=True)
class NightlyFolders:
    """The night's folders, resolved; ``catalog_inbox`` None when the night takes no catalog files."""

    inbox: Path
    processed: Path
    catalog: Path
    ledger: Path
    catalog_inbox: Path | None = None
    site: Path | None = None

    @property
    def rejected(self) -> Path:
        return rejected_folder(self.processed)

    def named(self) -> dict[str, Path]:
        found = {"inbox": self.inbox, "processed": self.processed, "rejected": self.rejected,
                 "catalog": self.catalog, "ledger": self.ledger}
        if self.catalog_inbox is not None:
            found["catalog_inbox"] = self.catalog_inbox
        if self.site is not None:
            found["site"] = self.site
        return found


def rejected_folder(processed: str | PathLike[str]) -> Path:
    """Where the inbox files a night rejected go: ``rejected/`` beside ``processed`` (``data/rejected``),
    under the run's id, so ``processed`` holds only files whose references are in the ledger."""
    return Path(processed).parent / "rejected"


def entries_read(entries: Sequence[Path], inputs: Sequence[str]) -> list[Path]:
    """The inbox entries a run read something from: an input of the run, or a folder holding one
    (a folder whose every file was left out, notes or code, was not read)."""
    given = [Path(i) for i in inputs]
    return [e for e in entries if any(p == e or e in p.parents for p in given)]


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def within_roots(folder: str | PathLike[str], roots: Sequence[str | PathLike[str]]) -> bool:
    """Whether ``folder`` (symbolic links followed) is one of ``roots`` or lies under one."""
    path = Path(folder).resolve()
    return any(_within(path, Path(root).resolve()) for root in roots)


def confined_folders(inbox: str | PathLike[str], processed: str | PathLike[str], catalog: str | PathLike[str],
                     ledger: str | PathLike[str], catalog_inbox: str | PathLike[str] | None,
                     roots: Sequence[str | PathLike[str]], site: str | PathLike[str] | None = None) -> NightlyFolders:
    """The night's folders resolved, or a ``UsageError`` when one lies outside every root or
    inside another (see the module's docstring). ``site``: the folder of the static site, None for none."""
    folders = NightlyFolders(Path(inbox).resolve(), Path(processed).resolve(), Path(catalog).resolve(),
                             Path(ledger).resolve(), Path(catalog_inbox).resolve() if catalog_inbox else None,
                             Path(site).resolve() if site else None)
    for name, path in folders.named().items():
        if not within_roots(path, roots):
            shown = ", ".join(str(Path(r).resolve()) for r in roots) or "none"
            raise UsageError(f"nightly: {name} {path} is outside the nightly's roots ({shown}; set nightly.roots "
                             "to allow another folder)")
    named = list(folders.named().items())
    for name, path in named:
        for other, place in named:
            if other != name and _within(path, place):
                what = "is" if path == place else "lies inside"
                raise UsageError(f"nightly: {name} {path} {what} {other} {place}: the night would read or move "
                                 "its own folders; give folders side by side")
    return folders
