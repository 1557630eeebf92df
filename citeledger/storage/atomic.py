"""Every staged write of citeledger goes through here: write beside the target, fsync the file,
rename it into place, fsync the folder. A reader never sees half a file, a crash leaves at most a
staged ``.tmp`` that the next writer under the folder's lock removes, and a full disk is one
``DiskFull`` naming the path, not a traceback.

The catalog (``catalog.store``) and the ledger (``ledger.store``) are the two modules that decide what to
write; this one is how every byte of theirs (and of the records, the fuzzy index and the nightly
inbox) reaches the disk.
"""
from __future__ import annotations

import errno
import hashlib
import itertools
import os
import shutil
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Sequence

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from citeledger.app_errors import DiskFull, LedgerPathError
from citeledger.storage.sql import process_connection, sql_literal

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
_NO_SPACE_WORDS = (os.strerror(errno.ENOSPC).lower(), os.strerror(errno.EDQUOT).lower(), "no space left")


def no_space(exc: BaseException) -> bool:
    """Whether an error is a full disk (or quota): an ``OSError`` with its errno, or a message
    saying so where the errno is lost (Arrow's ``OSError``s, every DuckDB error: a checkpoint
    that fills the disk is a ``FatalException``, a spill an ``IOException``)."""
    if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
        return True
    if isinstance(exc, (OSError, duckdb.Error)):
        text = str(exc).lower()
        return any(words in text for words in _NO_SPACE_WORDS)
    return False


@contextmanager
def disk_errors(path: Path, access: bool = True) -> Iterator[None]:
    """A full disk (or quota) while writing ``path`` becomes one ``DiskFull`` naming it, and a
    folder we may not write one ``LedgerPathError``, instead of a traceback; the writers below
    remove their staged file on the way out, so nothing partial is left either way."""
    try:
        yield
    except (OSError, duckdb.Error) as exc:
        if no_space(exc):
            raise DiskFull(path) from exc
        if access and isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS,
                                                                 errno.ENOTDIR, errno.EEXIST):
            raise LedgerPathError(f"cannot write {path}: {exc.strerror} ({exc.filename or path})") from exc
        raise


@contextmanager
def staged(path: Path, staging_dir: Path | None = None, mode: int = 0o644) -> Iterator[Path]:
    """The one staged write: yields a temp path (in ``staging_dir``, else beside ``path``) for
    the caller to fill; then fsyncs it, renames it to ``path`` and fsyncs the folder. On any
    failure the temp is removed and ``path`` keeps its old bytes (or stays absent). ``mode``: the
    published file's permissions (the temp file is private, 0600, while it is written)."""
    with disk_errors(path):
        folder = staging_dir or path.parent
        folder.mkdir(parents=True, exist_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        tmp = Path(name)
        try:
            yield tmp
            _fsync(tmp)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
            _fsync(path.parent)
        finally:
            tmp.unlink(missing_ok=True)


_STAGED = itertools.count()  # staged names of a batch: ``.NAME.<pid>-<n>.tmp``, unique per process


def atomic_write_files(files: Sequence[tuple[Path | str, bytes]], mode: int = 0o644, sync: bool = True) -> None:
    """Many whole files written in one batch (citation records): each staged beside its target,
    then one ``os.sync()`` for all of them instead of an fsync per file and per folder (the fsyncs
    were most of a record's cost; it flushes every file system of the machine), then each renamed
    into place and each folder fsynced once. Each file is seen old or new, never half written;
    files are renamed one by one, so a crash may leave some new and some old (a record's JSON new,
    its HTML old) and staged temps (``remove_leftovers``). Staged with ``os.open``/``os.write``
    under a name made of the process id and a counter (``tempfile.mkstemp``'s random names and
    file objects cost a third of a millisecond a record), with ``mode`` from the start when the umask
    keeps it (else private, 0600, until written). ``sync=False``: files that can be made again
    from what is on the disk (a static site of the ledger): each is still seen old or new, never
    half written, but nothing waits for the disk (a crash may lose the latest ones)."""
    staged_files = _stage_files(files, mode)
    try:
        if sync:
            os.sync()  # Linux: returns once every staged byte is on the disk
    except BaseException:
        _unlink(staged_files)
        raise
    _publish_staged(staged_files, sync)


def _stage_files(files: Sequence[tuple[Path | str, bytes]], mode: int = 0o644) -> list[tuple[str, str]]:
    """Each file written whole to its staged temp beside its target: (temp, target) pairs; on any
    failure the temps staged so far are removed. The temp is created with ``mode`` when the
    process's umask keeps all of it (no ``fchmod`` a file: a record's three files are four system
    calls each and a rename), else private (0600) and given ``mode`` once written; names are text
    (a ``Path`` a file cost more than its system calls)."""
    staged_files: list[tuple[str, str]] = []
    kept = _umask_keeps(mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    suffix = f".{os.getpid()}-"
    try:
        for folder in {os.path.dirname(path) for path, _ in files} - {""}:
            with disk_errors(Path(folder)):
                os.makedirs(folder, exist_ok=True)
        for path, data in files:
            target = os.fspath(path)
            folder, name = os.path.split(target)
            with disk_errors(Path(target)):
                hidden = f".{name}{suffix}{next(_STAGED)}.tmp"
                tmp = f"{folder}/{hidden}" if folder else hidden
                fd = os.open(tmp, flags, mode if kept else 0o600)
                staged_files.append((tmp, target))
                try:
                    done = os.write(fd, data)
                    if done < len(data):
                        _write_rest(fd, data, done, target)
                    if not kept:
                        os.fchmod(fd, mode)
                finally:
                    os.close(fd)
    except BaseException:
        _unlink(staged_files)
        raise
    return staged_files


def _write_rest(fd: int, data: bytes, done: int, path: str) -> None:
    """The bytes a first ``os.write`` left (a short write), or ``ENOSPC`` when none go."""
    view = memoryview(data)[done:]
    while view:
        done = os.write(fd, view)
        if not done:
            raise OSError(errno.ENOSPC, "nothing written", path)
        view = view[done:]


def _umask_keeps(mode: int) -> bool:
    """Whether files created with ``mode`` get all of it (the umask, read from ``/proc/self/status``
    where Linux shows it, clears none of its bits); False when it cannot be read."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8) & mode == 0
    except (OSError, ValueError, IndexError):
        pass
    return False


def _publish_staged(staged_files: list[tuple[str, str]], sync: bool = True) -> None:
    """Staged files whose bytes are on the disk renamed into place one by one, then each folder
    fsynced once (``sync``); on a failure the temps not yet renamed are removed."""
    published = 0
    try:
        for tmp, path in staged_files:
            try:
                os.replace(tmp, path)
            except OSError:
                with disk_errors(Path(path)):
                    raise
            published += 1
        for folder in sorted({os.path.dirname(path) or "." for _, path in staged_files}) if sync else ():
            _fsync(Path(folder))
    finally:
        _unlink(staged_files[published:])


def _unlink(staged_files: list[tuple[str, str]]) -> None:
    for tmp, _ in staged_files:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def publish_dir(src: Path, dest: Path) -> None:
    """Move a complete folder (a catalog generation) into place: its files and itself fsynced
    first, then renamed, then the parent fsynced, so a crash leaves it whole or absent."""
    with disk_errors(dest):
        for file in src.rglob("*"):
            if file.is_file():
                _fsync(file)
        _fsync(src)
        os.replace(src, dest)
        _fsync(dest.parent)


RENAME_EXCHANGE = 2  # <linux/fs.h>: renameat2 swaps the two names, both of which must exist
AT_FDCWD = -100


def exchange_folders(first: Path, second: Path) -> bool:
    """Swap two folders' names in one step (Linux ``renameat2(RENAME_EXCHANGE)``): a process
    opening a path inside either sees the folder before or the folder after, never neither and
    never a mix. False when this system or file system cannot (no ``renameat2``, ``EINVAL``,
    ``ENOSYS``, ``EOPNOTSUPP``): nothing was changed, and the caller takes another way."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def write_new_file(path: str | Path, data: bytes) -> os.stat_result:
    """``data`` as a new file ``path`` in a folder no reader sees yet (a site's staging folder, which
    is then swapped in whole: no rename per file, no sync): created anew, never over an entry and
    never through a link (``FileExistsError`` when something is there). Its status after the write."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with disk_errors(Path(path)), os.fdopen(fd, "wb", buffering=0) as fh:
        view = memoryview(data)
        while view:  # a raw file's write may be short
            view = view[fh.write(view) or 0:]
        return os.fstat(fh.fileno())


def link_file(source: str | Path, target: str | Path) -> None:
    """A second name ``target`` of the file (or link, never followed) ``source``: the same bytes,
    times and permissions; ``FileExistsError`` when ``target`` is there, ``OSError`` where the file
    system has no hard links."""
    os.link(source, target, follow_symlinks=False)


def swap_in_folder(staged: Path, live: Path, aside: Path) -> Path | None:
    """The complete folder ``staged`` becomes ``live`` in one step, ``exchange_folders`` where the file
    system can (``staged`` then holds the previous ``live``), else by renaming ``live`` to ``aside``
    and ``staged`` to ``live`` (for an instant there is no ``live``). The previous folder's path now,
    for the caller to remove; None when there was none."""
    if not os.path.lexists(live):
        os.rename(staged, live)
        return None
    if exchange_folders(staged, live):
        return staged
    os.rename(live, aside)
    os.rename(staged, live)
    return aside


def move_folder(source: Path, target: Path) -> None:
    """A folder renamed within its file system (one ``swap_in_folder`` renamed aside, put back or kept
    under another name); ``OSError`` when ``target`` is there."""
    os.rename(source, target)


def _fsync(path: Path) -> None:
    """Flush a file's (or a folder's entries') bytes to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """``data`` as the whole of ``path``, through ``staged`` (``mode``: 0600 for a private key, which
    is then private from its first byte: the staged temp is 0600 too)."""
    with staged(path, mode=mode) as tmp:
        tmp.write_bytes(data)


@contextmanager
def atomic_stream(path: Path) -> Iterator[BinaryIO]:
    """Stream bytes to ``path`` (a download) through ``staged``: the previous copy stays intact
    unless the block ends without an error."""
    with staged(path) as tmp, open(tmp, "wb") as fh:
        yield fh


def remove_leftovers(directory: Path) -> int:
    """Remove the staged files (``.NAME.XXXX.tmp``) that writers killed mid-write left in
    ``directory``; only under the folder's writer lock, where no live writer can own one."""
    removed = 0
    for leftover in [*directory.glob(".*.tmp"), *directory.glob(".*.tmp.wal")] if directory.is_dir() else ():
        leftover.unlink(missing_ok=True)
        removed += 1
    return removed


def write_parquet(table: pa.Table, path: Path, staging: Path) -> None:
    """Write an Arrow table as Parquet through DuckDB into ``staging``, then rename into place."""
    with staged(path, staging) as tmp:
        con = process_connection()
        try:
            con.register("to_write", table)
            con.execute(f"COPY (SELECT * FROM to_write) TO {sql_literal(tmp)} (FORMAT parquet, COMPRESSION zstd)")
        finally:
            con.close()


def write_arrow_parquet(table: pa.Table, path: Path, staging: Path) -> None:
    """``write_parquet`` by Arrow's own Parquet writer (the same columns, types and compression):
    a batch's observations in a fifth of the CPU time of a DuckDB connection and ``COPY``."""
    with staged(path, staging) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _move_folder_across(source: Path, target: Path) -> None:
    """A folder onto another file system: copied beside the target under a temporary name,
    renamed into place, and only then removed from where it was."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, symlinks=True)
    os.replace(tmp, target)
    _fsync(target.parent)
    shutil.rmtree(source)
    _fsync(source.parent)


def atomic_write_lines(path: Path, lines: Iterable[str]) -> int:
    """Text streamed line by line (a harvest too large to hold) through ``staged``. Returns the
    lines written."""
    written = 0
    with staged(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
            written += 1
    return written


def atomic_move(source: Path, target: Path) -> Path:
    """Move a file (or a folder: a paper dropped in the nightly inbox) to ``target``: one rename
    on the same file system, else a copy through ``staged`` before the source goes; both
    folders fsynced, so a crash keeps one whole copy."""
    with disk_errors(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(source, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            if Path(source).is_dir():
                _move_folder_across(Path(source), target)
                return target
            with staged(target) as tmp, open(source, "rb") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)  # another file system: no rename across it
            os.unlink(source)
        _fsync(target.parent)
        _fsync(Path(source).parent)
    return target


class SyncedBatches:
    """Batches of whole files (citation records) published as ``atomic_write_files`` publishes one,
    with each batch's disk sync run by a background thread while the caller makes the next batch:
    ``os.sync`` waits for the disk (and for every other writer's dirty data), and the builder no
    longer waits with it. Staging and renaming stay in the caller's thread (a background thread
    taking the GIL back at every file's syscall was slower, as measured): a batch is
    renamed into place at the next ``add`` or at ``close``, once its sync has returned, so every
    published file is on the disk. ``abort`` (on an error) removes what is staged, unpublished."""

    def __init__(self) -> None:
        self._pending: tuple[list[tuple[str, str]], threading.Thread, list[BaseException]] | None = None

    def add(self, files: Sequence[tuple[Path | str, bytes]], mode: int = 0o644) -> None:
        """Stage ``files``, publish the batch before (its sync done), start this batch's sync."""
        staged_files = _stage_files(files, mode)
        try:
            self._publish_pending()
        except BaseException:
            _unlink(staged_files)
            raise
        failed: list[BaseException] = []
        sync = threading.Thread(target=_sync_noting, args=(failed,), name="record-sync", daemon=True)
        sync.start()
        self._pending = (staged_files, sync, failed)

    def close(self) -> None:
        """Publish the last batch (after its sync)."""
        self._publish_pending()

    def abort(self) -> None:
        """Remove the staged, unpublished batch (its sync waited for first)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending[1].join()
            _unlink(pending[0])

    def _publish_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        staged_files, sync, failed = pending
        sync.join()
        if failed:
            _unlink(staged_files)
            raise failed[0]
        _publish_staged(staged_files)


def _sync_noting(failed: list[BaseException]) -> None:
    try:
        os.sync()
    except BaseException as exc:  # handed to the caller's thread by SyncedBatches
        failed.append(exc)
