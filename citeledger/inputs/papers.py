"""Papers as run inputs: an e-print archive, a ``.tex``/``.bbl``/``.bib`` file, a paper's folder,
or a directory of papers (one file or one sub-folder per paper), each read by ``papers/`` into
references and rejects. A reject of a member inside a paper names it as ``file!member``."""
from __future__ import annotations

import hashlib
import os
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO, Iterator

from citeledger.storage.atomic import file_sha256
from papers.names import citing_paper_from_name
from papers.paper_model import PaperLimits, PaperReferences, PaperReject
from papers.suffixes import TEXT_SUFFIXES

PAPER_KIND, FOLDER_KIND = "paper", "paper_folder"
# the papers' own titles read while a run's inputs are read (``collecting_titles``), by citing paper
_TITLES: ContextVar[dict[str, tuple[str, str, str]] | None] = ContextVar("paper_titles", default=None)
# an entry of an input folder that is not read (a symbolic link, a FIFO, a socket, a device): a reject row
REFUSED_KIND = "not_read"
NOT_FOLLOWED = "not followed or opened (inside an input folder only regular files and folders are read)"


def refusal(path: Path) -> str | None:
    """Why an entry of an input folder is not read, or None for a regular file or a folder (by the
    entry itself, ``lstat``: a symbolic link is never followed, so the folder is never left, and a
    FIFO, socket or device is never opened, so reading never blocks)."""
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        return f"cannot be examined: {exc.strerror or exc}"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"a symbolic link (to {target[:200]}): {NOT_FOLLOWED}"
    what = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else \
        "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
    return f"{what}: {NOT_FOLLOWED}"


def open_regular(path: Path) -> BinaryIO:
    """A regular file opened without following a link and without blocking (a file swapped for a
    link or a FIFO after it was looked at is refused, ``OSError``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    with open_regular(path) as fh:
        return fh.read()


def is_one_paper_folder(path: Path, citing_paper: str | None) -> bool:
    """A folder given on its own is one paper's source tree when ``--citing-paper`` names it or
    its own name is an arXiv id (``2501.00254/``); otherwise it is a directory of papers."""
    return bool(citing_paper) or citing_paper_from_name(path.name)[0] is not None


def directory_entries(path: Path) -> list[Path]:
    """The papers in a directory: every visible entry, by name (a hidden one, such as a file still
    being copied in under a dot-name, is left alone); one that is neither a regular file nor a
    folder (``refusal``) is listed too, to be a reject row."""
    return sorted(p for p in path.iterdir() if not p.name.startswith("."))


def _walk(path: Path) -> Iterator[tuple[Path, str | None]]:
    """Each entry under a paper's folder, by name, with why it is not read (``refusal``) or None
    for a regular file; hidden folders are skipped, links to folders are entries, never entered."""
    for root, dirs, names in os.walk(path, followlinks=False):
        links = sorted(d for d in dirs if os.path.islink(os.path.join(root, d)))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in links)
        for name in sorted([*names, *links]):
            full = Path(root) / name
            yield full, refusal(full)


def folder_files(path: Path, limits: PaperLimits) -> tuple[dict[str, bytes], list[tuple[str | None, str, str]]]:
    """The text files of one paper's folder (relative names), within the limits; an entry that
    is not a regular file (a symbolic link, a FIFO, ...) is a problem, never followed or opened.
    Problems are (member, code, reason)."""
    files: dict[str, bytes] = {}
    problems: list[tuple[str | None, str, str]] = []
    count = total = 0
    for full, refused in _walk(path):
        member = full.relative_to(path).as_posix()
        count += 1
        size = 0 if refused else full.lstat().st_size
        total += size
        if count > limits.max_members or total > limits.max_total_bytes:
            return {}, [(None, "too_large", f"the folder holds more than {limits.max_members:,} files or "
                         f"{limits.max_total_bytes:,} bytes (papers.max_members, papers.max_total_bytes)")]
        if refused:
            problems.append((member, REFUSED_KIND, refused))
            continue
        if not full.name.lower().endswith(TEXT_SUFFIXES):
            continue
        if size > limits.max_member_bytes:
            problems.append((member, "member_too_large", f"file of {size:,} bytes exceeds "
                             f"{limits.max_member_bytes:,} (papers.max_member_bytes): not read"))
            continue
        try:
            files[member] = read_regular(full)
        except OSError as exc:
            problems.append((member, REFUSED_KIND, f"cannot be read: {exc.strerror or exc}"))
    return files, problems


def folder_sha256(path: Path) -> str:
    """One digest of a folder's files (names, sizes and contents, and the entries not read with
    why), so a resumed run can tell that a paper's folder is the one it started with."""
    digest = hashlib.sha256()
    for full, refused in _walk(path):
        member = full.relative_to(path).as_posix()
        if refused:
            digest.update(f"{member}\0{refused}\0".encode("utf-8", "surrogateescape"))
            continue
        try:
            with open_regular(full) as fh:
                digest.update(f"{member}\0{os.fstat(fh.fileno()).st_size}\0".encode("utf-8", "surrogateescape"))
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError as exc:
            digest.update(f"{member}\0unreadable {exc.strerror or exc}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def read_paper_input(path: Path, name: str, kind: str, limits: PaperLimits,
                     citing_paper: str | None) -> PaperReferences:
    """One paper read from disk: a file's bytes, or a folder's text files."""
    if kind == FOLDER_KIND:
        files, problems = folder_files(path, limits)
        from papers.reader import read_tree  # the LaTeX and archive readers: loaded with the first paper

        paper = read_tree(name, files, limits, citing_paper)
        paper.rejects[:0] = [PaperReject(name, member, code, reason) for member, code, reason in problems]
        return paper
    data = path.read_bytes()
    if data[:5] == b"%PDF-":  # a PDF's references come from the GROBID service, when one is configured
        from citeledger.inputs.pdf_papers import read_pdf

        return read_pdf(name, data, citing_paper)
    from papers.reader import read_paper

    return read_paper(name, data, limits, citing_paper)


@contextmanager
def collecting_titles() -> Iterator[dict[str, tuple[str, str, str]]]:
    """While a run's inputs are read within the block: each paper's own title as its source gives it
    (``papers.titles``), citing paper -> (title, where it was read, the input), the last read kept."""
    found: dict[str, tuple[str, str, str]] = {}
    token = _TITLES.set(found)
    try:
        yield found
    finally:
        _TITLES.reset(token)


def note_title(paper: PaperReferences) -> None:
    """Keep a paper's title for ``collecting_titles``, when one is being collected and the paper has one."""
    found = _TITLES.get()
    if found is not None and paper.citing_paper and paper.title:
        found[paper.citing_paper] = (paper.title, paper.title_source, paper.name)


def paper_rows(paper: PaperReferences) -> Iterator[tuple[str, dict | None, int | None, str]]:
    """Each reference as an input row (what ``validate_row`` checks) and each reject as
    (file, None, line, reason): ``file`` is ``name!member`` for a member inside the paper."""
    for reject in paper.rejects:
        where = f"{reject.file}!{reject.member}" if reject.member else reject.file
        yield where, None, reject.line, f"{reject.code}: {reject.reason}"
    if paper.citing_paper is None:
        return
    for ref in paper.references:
        where = f"{paper.name}!{ref.member}" if ref.member and paper.form not in ("bbl", "bib", "tex") else paper.name
        yield where, {"citing_paper": paper.citing_paper, "reference_index": ref.order, "raw": ref.raw,
                      "source": ref.source, "fields": ref.fields}, ref.line, ""


def input_sha256(path: Path) -> str:
    """What a run records for one input: a file's digest or a folder's (``folder_sha256``); for
    what is neither (a FIFO), the digest of why it is not read: it is never opened."""
    if path.is_dir():
        return folder_sha256(path)
    if path.exists() and not path.is_file():
        return refused_sha256(refusal(path.resolve()) or "not a regular file")
    return file_sha256(path)


def refused_sha256(reason: str) -> str:
    return hashlib.sha256(f"not read\0{reason}".encode("utf-8", "surrogateescape")).hexdigest()


def entry_sha256(entry: Path) -> str:
    """``input_sha256`` of a paper in a directory of papers, or the digest of why it is not read."""
    refused = refusal(entry)
    return refused_sha256(refused) if refused else input_sha256(entry)


def input_digests(path: Path) -> list[str]:
    """The digests a run records for an input as given: one for a file or a paper's folder, one
    per paper for a directory of papers (so the nightly can tell a folder it already read)."""
    if path.is_dir() and not is_one_paper_folder(path, None):
        return [entry_sha256(entry) for entry in directory_entries(path)]
    return [input_sha256(path)]


def given_inputs(paths: list[Path], inbox: Path) -> list[Path]:
    """The inputs as they were given, from the ones a run recorded: a paper of a directory in
    the inbox stands for that directory (each once, in order)."""
    inbox = inbox.resolve()
    out: list[Path] = []
    for path in paths:
        resolved = path.resolve()
        top = inbox / resolved.relative_to(inbox).parts[0] if resolved.is_relative_to(inbox) else path
        if top not in out:
            out.append(top)
    return out
