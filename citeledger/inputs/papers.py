"""Papers as run inputs: an e-print archive, a ``.tex``/``.bbl``/``.bib`` file, a paper's folder,
or a directory of papers (one file or one sub-folder per paper), each read by ``papers/`` into
references and rejects. A reject of a member inside a paper names it as ``file!member``."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterator

from citeledger.storage.atomic import file_sha256
from papers import PaperLimits, PaperReferences, PaperReject, citing_paper_from_name, read_paper, read_tree
from papers.suffixes import TEXT_SUFFIXES

PAPER_KIND, FOLDER_KIND = "paper", "paper_folder"


def is_one_paper_folder(path: Path, citing_paper: str | None) -> bool:
    """A folder given on its own is one paper's source tree when ``--citing-paper`` names it or
    its own name is an arXiv id (``2501.00254/``); otherwise it is a directory of papers."""
    return bool(citing_paper) or citing_paper_from_name(path.name)[0] is not None


def directory_entries(path: Path) -> list[Path]:
    """The papers in a directory: every visible file and sub-folder, by name (a hidden one, such
    as a file still being copied in under a dot-name, is left alone)."""
    return sorted(p for p in path.iterdir() if not p.name.startswith(".") and (p.is_file() or p.is_dir()))


def folder_files(path: Path, limits: PaperLimits) -> tuple[dict[str, bytes], list[tuple[str | None, str, str]]]:
    """The text files of one paper's folder (relative names), within the limits; symbolic links
    are not followed. Problems are (member, code, reason)."""
    files: dict[str, bytes] = {}
    problems: list[tuple[str | None, str, str]] = []
    count = total = 0
    for root, dirs, names in os.walk(path, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            full = Path(root) / name
            member = full.relative_to(path).as_posix()
            count += 1
            size = full.lstat().st_size
            total += size
            if count > limits.max_members or total > limits.max_total_bytes:
                return {}, [(None, "too_large", f"the folder holds more than {limits.max_members:,} files or "
                             f"{limits.max_total_bytes:,} bytes (papers.max_members, papers.max_total_bytes)")]
            if not name.lower().endswith(TEXT_SUFFIXES) or full.is_symlink():
                continue
            if size > limits.max_member_bytes:
                problems.append((member, "member_too_large", f"file of {size:,} bytes exceeds "
                                 f"{limits.max_member_bytes:,} (papers.max_member_bytes): not read"))
                continue
            files[member] = full.read_bytes()
    return files, problems


def folder_sha256(path: Path) -> str:
    """One digest of a folder's files (names, sizes and contents), so a resumed run can tell
    that a paper's folder is the one it started with."""
    digest = hashlib.sha256()
    for root, dirs, names in os.walk(path, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            full = Path(root) / name
            if full.is_symlink():
                continue
            entry = f"{full.relative_to(path).as_posix()}\0{full.stat().st_size}\0"
            digest.update(entry.encode("utf-8", "surrogateescape"))
            with open(full, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
    return digest.hexdigest()


def read_paper_input(path: Path, name: str, kind: str, limits: PaperLimits,
                     citing_paper: str | None) -> PaperReferences:
    """One paper read from disk: a file's bytes, or a folder's text files."""
    if kind == FOLDER_KIND:
        files, problems = folder_files(path, limits)
        paper = read_tree(name, files, limits, citing_paper)
        paper.rejects[:0] = [PaperReject(name, member, code, reason) for member, code, reason in problems]
        return paper
    data = path.read_bytes()
    if data[:5] == b"%PDF-":  # a PDF's references come from the GROBID service, when one is configured
        from citeledger.inputs.pdf_papers import read_pdf

        return read_pdf(name, data, citing_paper)
    return read_paper(name, data, limits, citing_paper)


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
    """What a run records for one input: a file's digest or a folder's (``folder_sha256``)."""
    return folder_sha256(path) if path.is_dir() else file_sha256(path)


def input_digests(path: Path) -> list[str]:
    """The digests a run records for an input as given: one for a file or a paper's folder, one
    per paper for a directory of papers (so the nightly can tell a folder it already read)."""
    if path.is_dir() and not is_one_paper_folder(path, None):
        return [input_sha256(entry) for entry in directory_entries(path)]
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
