"""Inputs as the user gives them: files, pipes, FIFOs and stdin (``-``).

A pipe or stdin is spooled once to a file and hashed on the way, so it can be read (and a resumed
run compared) like any file; a FIFO nobody writes to is refused after a timeout instead of hanging
the run. The reader of a file is chosen by its name, else by a look at its first bytes.
"""
from __future__ import annotations

import fcntl
import gzip
import hashlib
import io
import os
import re
import select
import signal
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from citeledger.app_errors import InputError
from citeledger.inputs.papers import (
    FOLDER_KIND,
    PAPER_KIND,
    REFUSED_KIND,
    directory_entries,
    entry_sha256,
    folder_sha256,
    is_one_paper_folder,
    refusal,
)
from citeledger.processes import Terminated
from citeledger.storage.atomic import file_sha256
from papers.archive import is_tar
from papers.names import citing_paper_from_name
from papers.suffixes import PAPER_SUFFIXES, TEXT_SUFFIXES
from resolvers.errors import InputTooLarge

STDIN_NAME = "<stdin>"
PIPE_OPEN_TIMEOUT = 60.0  # seconds to wait for a named pipe's writer
CHUNK = 1 << 20
SPOOL_PREFIX, SPOOL_SUFFIX = "input-", ".spool"
# a spool file younger than this is left alone even when unlocked: it may be between its creation
# and its owner's lock (the only moment a live spool is not locked)
SPOOL_GRACE_SECONDS = 60.0
_SPOOL_LOCKS: dict[str, int] = {}  # spool path -> a descriptor holding its flock while the spool is in use


class _CountedRaw(io.RawIOBase):
    """A decompressing stream that counts the bytes it hands out and stops past ``limit``."""

    def __init__(self, inner: Any, limit: int | None):
        self.inner, self.limit, self.count = inner, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read1(len(buffer))  # read1: what came before a truncated end is kept
        n = len(data)
        buffer[:n] = data
        self.count += n
        if self.limit is not None and self.count > self.limit:
            raise InputTooLarge(f"decompressed data exceeds the limit of {self.limit:,} bytes "
                                "(max_file_bytes, limits.max_input_bytes); the rest is not read")
        return n

    def close(self) -> None:
        self.inner.close()
        super().close()


def open_binary(path: Path, max_bytes: int | None = None) -> io.BufferedIOBase:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.BufferedReader(_CountedRaw(gzip.open(path, "rb"), max_bytes), CHUNK)
    return open(path, "rb")


_EXTENSIONS = ((".jsonl.gz", "jsonl"), (".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json.gz", "jsonl"),
               (".csv.gz", "csv"), (".csv", "csv"), (".parquet", "parquet"),
               *((suffix, PAPER_KIND) for suffix in PAPER_SUFFIXES if suffix != ".gz"))
ARXIV_ID_KIND = "arxiv_id"  # an ``arXiv:ID`` input: the paper is fetched (with --remote), not read from a file
ARXIV_IDS_KIND = "arxiv_ids"  # a file of ``arXiv:ID`` lines: each paper fetched (with --remote)
FETCHED_KINDS = (ARXIV_ID_KIND, ARXIV_IDS_KIND)
# a file whose first lines are all arXiv:ID (the last one possibly cut by the 512-byte look)
_ARXIV_LINES = re.compile(r"(?:\s*arxiv:\s*\S+[ \t]*(?:\r?\n|$))+\s*(?:arxiv:\S*)?\s*", re.I)


def kind_by_name(name: str) -> str | None:
    lowered = name.lower()
    return next((kind for ext, kind in _EXTENSIONS if lowered.endswith(ext)), None)


def detect_kind(path: Path, name: str | None = None) -> str:
    """The reader for a file: by the extension of ``name`` (the path as given), then by a look at
    its first bytes (a pipe has no useful name): ``{`` is JSON Lines, ``PAR1`` Parquet; a tar
    header, a PDF, LaTeX (``%`` or ``\\`` first) or BibTeX (``@`` first) is a paper; else CSV."""
    if path.is_dir():
        return FOLDER_KIND
    kind = kind_by_name(name or path.name)
    if kind:
        return kind
    with open_binary(path) as fh:
        head = fh.read(512)
    if is_tar(head) or head.startswith(b"%PDF-"):
        return PAPER_KIND
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if head.startswith(b"PAR1"):
        return "parquet"
    if _ARXIV_LINES.fullmatch(head.decode("latin-1")) and (len(head) < 512 or b"\n" in head):
        return ARXIV_IDS_KIND
    if head.startswith(b"{"):
        return "jsonl"
    if head.startswith((b"\\", b"%", b"@")) or b"\\bibitem" in head or b"thebibliography" in head:
        return PAPER_KIND
    return "csv" if _reference_table_header(head) else NOT_READABLE_KIND


NOT_READABLE_KIND = "not_readable"  # neither a paper nor a reference table: a reject saying so
TABLE_KINDS = ("jsonl", "csv", "parquet")  # reference tables: rows, no paper to read


def reads_papers(sources: Sequence[InputSource]) -> bool:
    """Whether any of a run's inputs is a paper to read or fetch (a file, a folder, an arXiv id),
    not a reference table (nor an input that is neither)."""
    return any(s.kind not in (*TABLE_KINDS, NOT_READABLE_KIND) for s in sources)
_REQUIRED_COLUMNS = (b"citing_paper", b"reference_index", b"raw")


def _reference_table_header(head: bytes) -> bool:
    """A file of no known name is read as CSV only when its first line names the required columns."""
    first = head.split(b"\n", 1)[0].lower()
    return all(column in first for column in _REQUIRED_COLUMNS)


def not_readable_reason(name: str) -> str:
    """What a reject or a skipped-file line says of a file that is no input: its name's ending."""
    return f"not a paper or a reference table ({name_ending(name)})"


def name_ending(name: str) -> str:
    suffix = Path(name).suffix.lower()
    return suffix if suffix and len(suffix) <= 12 else "no extension"




@dataclass(frozen=True, slots=True)
class InputSource:
    """One input of a run: ``name`` as the user gave it (the manifest and rejects say it),
    ``path`` what is read (the file, or a pipe's spooled copy), ``sha256`` of those bytes."""

    name: str
    path: Path
    sha256: str
    kind: str
    spooled: bool = False
    in_directory: bool = False  # one paper of a directory of papers: no id is a reject, not an error


def _is_stream(path: Path) -> bool:
    mode = path.stat().st_mode
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_input(given: str | Path) -> None:
    """Refuse an input that cannot be read at all, with one line saying what to pass instead."""
    if str(given) == "-" or is_arxiv_input(given):
        return
    path = Path(given)
    if not path.exists():
        raise InputError(f"{given}: no such input file")
    if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
        raise InputError(f"{given}: not readable (permission denied)")


def _open_stream(given: str, timeout: float) -> Any:
    """stdin, or a pipe opened in a thread: a named pipe nobody writes to is refused after
    ``timeout`` seconds instead of blocking the run forever."""
    if given == "-":
        return sys.stdin.buffer
    opened: dict[str, Any] = {}
    opener = threading.Thread(target=lambda: opened.setdefault("fh", open(given, "rb")), daemon=True)
    opener.start()
    opener.join(timeout)
    if opener.is_alive():
        try:  # be the writer it waits for, so the thread ends
            os.close(os.open(given, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        opener.join(1.0)
        if "fh" in opened:
            opened["fh"].close()
        raise InputError(f"{given}: no writer opened this pipe within {timeout:g} s")
    if "fh" not in opened:
        raise InputError(f"{given}: cannot be opened")
    return opened["fh"]


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated(signum)  # the spool file is removed on the way out; the run ends as on Ctrl-C


def remove_stale_spools(spool_dir: Path | None) -> int:
    """Remove the spool files no live process owns (a run killed while spooling left them): the
    process spooling a stream holds a ``flock`` on its spool until it discards it, and the kernel
    drops that lock when the process dies, so a spool whose lock can be taken has no owner. A
    concurrent run's spool is locked and left alone. Returns how many were removed."""
    if spool_dir is None or not spool_dir.is_dir():
        return 0
    removed = 0
    for path in spool_dir.glob(f"{SPOOL_PREFIX}*{SPOOL_SUFFIX}"):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if time.time() - os.fstat(fd).st_mtime >= SPOOL_GRACE_SECONDS:
                path.unlink(missing_ok=True)
                removed += 1
        except OSError:
            continue  # locked: a live run's spool
        finally:
            os.close(fd)
    return removed


def _spool(given: str, spool_dir: Path | None, max_bytes: int | None, timeout: float) -> tuple[Path, str]:
    """Copy a stream once to a file, hashing the same bytes: it can then be read (and re-read)
    like any file, and a resumed run compares its hash. The spool is locked while in use
    (``remove_stale_spools``); SIGTERM meanwhile removes it (main thread, default handler only)."""
    source = _open_stream(given, timeout)
    if spool_dir is not None:
        spool_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=spool_dir, prefix=SPOOL_PREFIX, suffix=SPOOL_SUFFIX)
    fcntl.flock(fd, fcntl.LOCK_EX)
    _SPOOL_LOCKS[tmp] = os.dup(fd)  # the same open file: its lock lasts until discard_spools
    digest, size = hashlib.sha256(), 0
    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGTERM) if main else None
    if handler == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in _chunks(source):
                size += len(chunk)
                if max_bytes is not None and size > max_bytes:
                    raise InputError(f"{given}: more than {max_bytes:,} bytes (limits.max_input_bytes)")
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        _discard_spool(Path(tmp))
        raise
    finally:
        if handler == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if source is not sys.stdin.buffer:
            source.close()
    return Path(tmp), digest.hexdigest()


def _chunks(source: Any) -> Iterator[bytes]:
    """A stream's bytes, chunk by chunk. Its descriptor is waited on a second at a time: a signal
    another thread received is then handled by the main thread within a second (a read blocked
    on a silent pipe would never return to Python to run its handler)."""
    try:
        fileno = source.fileno()
    except (AttributeError, OSError, ValueError):  # not a descriptor (a test's BytesIO)
        fileno = None
    while True:
        if fileno is not None:
            while not select.select([fileno], [], [], 1.0)[0]:
                pass
            chunk = os.read(fileno, CHUNK)
        else:
            chunk = source.read(CHUNK)
        if not chunk:
            return
        yield chunk


def _discard_spool(path: Path) -> None:
    path.unlink(missing_ok=True)
    lock = _SPOOL_LOCKS.pop(str(path), None)
    if lock is not None:
        os.close(lock)


def prepare_inputs(inputs: Sequence[str | Path], spool_dir: Path | None = None, max_bytes: int | None = None,
                   citing_paper: str | Mapping[str, str] | None = None,
                   timeout: float = PIPE_OPEN_TIMEOUT, skipped: list[tuple[str, str]] | None = None
                   ) -> list[InputSource]:
    """Check, hash and (for pipes and ``-``) spool every input, before any lock is taken or run
    begun: a missing file, a directory, a .bib/.bbl without a citing paper or a silent pipe is an
    ``InputError`` and no run starts. What a folder holds that is no input (``skipped_entry``)
    is left out and listed in ``skipped`` as (path, why)."""
    for given in inputs:
        check_input(given)
    remove_stale_spools(spool_dir)
    sources: list[InputSource] = []
    try:
        for given in inputs:
            if str(given) != "-" and Path(given).is_dir():
                sources += _directory(Path(given), citing_paper, skipped, spool_dir)
                continue
            sources.append(_prepare_one(given, spool_dir, max_bytes, timeout))
            _check_citing_paper(sources[-1], citing_paper)
    except BaseException:
        discard_spools(sources)
        raise
    return sources


def is_arxiv_input(given: str | Path) -> bool:
    """``arXiv:ID`` given as an input (and no file of that name): a paper to fetch from arXiv."""
    return str(given).lower().startswith("arxiv:") and not Path(given).exists()


def _arxiv_source(given: str) -> InputSource:
    """An ``arXiv:ID`` input: nothing to read yet; its hash is the id's, so a resumed run checks it."""
    from citeledger.inputs.arxiv_fetch import arxiv_input

    try:
        arxiv_id = arxiv_input(given)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    name = f"arXiv:{arxiv_id}"
    return InputSource(name, Path(name), hashlib.sha256(name.encode()).hexdigest(), ARXIV_ID_KIND)


def _prepare_one(given: str | Path, spool_dir: Path | None, max_bytes: int | None, timeout: float) -> InputSource:
    if is_arxiv_input(given):
        return _arxiv_source(str(given))
    name = STDIN_NAME if str(given) == "-" else str(Path(given))
    if str(given) != "-" and not _is_stream(Path(given)):
        path = Path(given)
        return InputSource(name, path, file_sha256(path), detect_kind(path, name))
    path, digest = _spool(str(given), spool_dir, max_bytes, timeout)
    try:
        return InputSource(name, path, digest, detect_kind(path, name), spooled=True)
    except BaseException:
        _discard_spool(path)
        raise


def _directory(path: Path, citing_paper: str | Mapping[str, str] | None,
               skipped: list[tuple[str, str]] | None = None, spool_dir: Path | None = None) -> list[InputSource]:
    """A folder: one paper's source tree (named by ``--citing-paper`` or by its own arXiv-style
    name), or a directory of inputs: papers (files or sub-folders) and reference tables. An entry
    that is neither a regular file nor a folder (a symbolic link, a FIFO, a socket, a device) is
    never followed or opened: its source reads as one reject row saying why (``REFUSED_KIND``).
    What is no input (notes, code, a ledger or catalog folder) is left out and listed in ``skipped``."""
    name = str(path)
    one = citing_paper if isinstance(citing_paper, str) else None
    if is_one_paper_folder(path, one):
        return [InputSource(name, path, folder_sha256(path), FOLDER_KIND)]
    entries = directory_entries(path)
    if not entries:
        raise InputError(f"{name}: an empty directory; give papers (files or folders) in it, or files")
    own = spool_dir.resolve().parent if spool_dir is not None else None  # the run's own ledger
    sources = []
    for entry in entries:
        if refusal(entry):  # never followed or opened: a reject row of its own
            sources.append(InputSource(str(entry), entry, entry_sha256(entry), REFUSED_KIND, in_directory=True))
            continue
        kind = FOLDER_KIND if entry.is_dir() else detect_kind(entry, str(entry))
        why = skipped_entry(entry, kind, own)
        if why is None:
            sources.append(InputSource(str(entry), entry, entry_sha256(entry), kind, in_directory=True))
        elif skipped is not None:
            skipped.append((str(entry), why))
    return sources


def skipped_entry(entry: Path, kind: str, own_ledger: Path | None = None) -> str | None:
    """Why an entry of a folder of inputs is no input, or None when it is one: a ledger or a
    catalog folder (this run's own ledger above all), a folder with no paper text in it, a file
    that is neither a paper nor a reference table."""
    if entry.is_dir():
        if (own_ledger is not None and entry.resolve() == own_ledger) or (entry / "_runs").is_dir() \
                or (entry / "observations").is_dir():
            return "a citeledger ledger folder"
        if (entry / "CURRENT").is_file():
            return "a citeledger catalog folder"
        if not _holds_paper_text(entry):
            return "a folder with no .tex, .bbl or .bib file"
        return None
    return not_readable_reason(entry.name) if kind == NOT_READABLE_KIND else None


def _holds_paper_text(folder: Path, most: int = 10_000) -> bool:
    """Whether a folder (not followed into hidden folders) holds a paper's text, looking at no
    more than ``most`` names."""
    seen = 0
    for _root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if any(n.lower().endswith(TEXT_SUFFIXES) for n in names):
            return True
        seen += len(names) + len(dirs)
        if seen > most:
            return False
    return False


def _check_citing_paper(source: InputSource, citing_paper: str | Mapping[str, str] | None) -> None:
    """A paper given on its own needs an id: ``--citing-paper`` or an arXiv-style name. With a
    mapping per input (the nightly inbox), one without is a reject row and the run goes on."""
    if source.kind in (PAPER_KIND, FOLDER_KIND) and not source.in_directory and not isinstance(citing_paper, Mapping):
        paper = citing_paper.get(source.name) if isinstance(citing_paper, Mapping) else citing_paper
        if not paper:
            ident, why = citing_paper_from_name(source.name if not source.spooled else "")
            if ident is None:
                raise InputError(f"{source.name}: {why}")


def discard_spools(sources: Sequence[InputSource]) -> None:
    for source in sources:
        if source.spooled:
            _discard_spool(source.path)
