"""An arXiv e-print's bytes as a tree of text members, read in memory: a gzipped or plain tar, or
one gzipped ``.tex``. Nothing is extracted, no member name is ever used as a path; every
decompressed byte is counted against the limits, so a bomb is stopped, not read."""
from __future__ import annotations

import posixpath
import tarfile
import zlib
from dataclasses import dataclass, field
from typing import IO

from papers.paper_model import PaperLimits, PaperReject
from papers.suffixes import TEXT_SUFFIXES

CHUNK = 1 << 16


class ArchiveProblem(Exception):
    """The whole archive is unusable: ``code`` and a reason; the paper becomes one reject."""

    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code, self.reason = code, reason


@dataclass(slots=True)
class Tree:
    """Text members by their (normalised, relative) name, in archive order; rejects of members."""

    members: dict[str, bytes] = field(default_factory=dict)
    rejects: list[PaperReject] = field(default_factory=list)
    form: str = ""


def is_gzip(data: bytes) -> bool:
    return data[:2] == b"\x1f\x8b"


def is_tar(head: bytes) -> bool:
    """A tar header block: ustar magic, or a v7 header whose checksum holds."""
    if len(head) < 512:
        return False
    if head[257:262] == b"ustar":
        return True
    try:
        tarfile.TarInfo.frombuf(head[:512], "utf-8", "surrogateescape")
    except (tarfile.HeaderError, ValueError):
        return False
    return True


class Gunzip:
    """A gzip stream (concatenated members too) decompressed as it is read, in bounded inflates;
    counts the bytes and stops past ``limit``."""

    def __init__(self, data: bytes, limit: int, what: str, key: str = "max_total_bytes"):
        self.data: memoryview = memoryview(data)
        self.pos, self.limit, self.what, self.key, self.count = 0, limit, what, key, 0
        self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def read(self, size: int = -1) -> bytes:
        size = self.limit + 1 if size is None or size < 0 else size
        parts: list[bytes] = []
        need = size
        while need > 0 and not self._ended():
            out = self._inflate(need)
            parts.append(out)
            need -= len(out)
        return b"".join(parts)

    def _ended(self) -> bool:
        if self.inflater.eof:
            rest = self.inflater.unused_data.lstrip(b"\0") + bytes(self.data[self.pos:])
            if not rest.lstrip(b"\0"):
                return True
            self.data = memoryview(rest)  # another gzip member follows
            self.pos = 0
            self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            return False
        if self.pos >= len(self.data) and not self.inflater.unconsumed_tail:
            raise ArchiveProblem("corrupt_archive", f"truncated gzip data after {self.count:,} bytes")
        return False

    def _inflate(self, need: int) -> bytes:
        source: bytes | memoryview = self.inflater.unconsumed_tail
        if not source:
            source, self.pos = self.data[self.pos:self.pos + CHUNK], self.pos + CHUNK
        try:
            out = self.inflater.decompress(source, need)
        except zlib.error as exc:
            raise ArchiveProblem("corrupt_archive", f"corrupt gzip data: {exc}") from None
        self.count += len(out)
        if self.count > self.limit:
            raise ArchiveProblem("too_large", f"{self.what} decompresses to more than {self.limit:,} bytes "
                                 f"(papers.{self.key}); the rest is not read")
        return out


def gunzip(data: bytes, limits: PaperLimits) -> bytes:
    """All of a gzip stream, at most ``max_total_bytes`` of it: a bomb stops there."""
    return Gunzip(data, limits.max_total_bytes, "the archive").read()


def safe_member_name(name: str) -> str | None:
    """The member's name relative to the tree's root, or None for an absolute or ``..`` name."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or "\\" in name:
        return None
    norm = posixpath.normpath(name)
    if norm == ".." or norm.startswith("../") or "/../" in f"/{name}/":
        return None
    return norm.removeprefix("./")


class _CheckedInfo(tarfile.TarInfo):
    """A header reader that remembers why the member walk stopped: tarfile ends its iteration
    quietly at a corrupt or truncated header after the first, as at the proper end-of-archive
    blocks; only the latter is a whole archive."""

    @classmethod
    def fromtarfile(cls, tarfile_: tarfile.TarFile) -> "_CheckedInfo":
        try:
            return super().fromtarfile(tarfile_)
        except tarfile.HeaderError as exc:
            if type(exc).__name__ != "EOFHeaderError":
                tarfile_.bad_header = f"{type(exc).__name__}: {exc}"  # type: ignore[attr-defined]
            raise


def read_tar(file: str, stream: IO[bytes], limits: PaperLimits) -> Tree:
    """The text members of a tar (in memory, decompressed within the limits), header by header;
    nothing is extracted. Raises ``ArchiveProblem`` for a corrupt, truncated or oversized one."""
    tree, count, total = Tree(), 0, 0
    try:
        with tarfile.open(fileobj=stream, mode="r:", tarinfo=_CheckedInfo) as tar:
            for info in tar:
                count += 1
                total += info.size
                _check_totals(count, total, limits)
                _take_member(file, tar, info, tree, limits)
            bad = getattr(tar, "bad_header", None)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveProblem("corrupt_archive", f"corrupt or truncated tar archive: {exc}") from None
    if bad:
        raise ArchiveProblem("corrupt_archive", f"corrupt or truncated tar archive after {count} member(s): {bad}")
    return tree


def _check_totals(count: int, total: int, limits: PaperLimits) -> None:
    if count > limits.max_members:
        raise ArchiveProblem("too_many_members", f"more than {limits.max_members:,} members "
                             "(papers.max_members); the archive is not read")
    if total > limits.max_total_bytes:
        raise ArchiveProblem("too_large", f"members add up to more than {limits.max_total_bytes:,} bytes "
                             "(papers.max_total_bytes); the archive is not read")


def _take_member(file: str, tar: tarfile.TarFile, info: tarfile.TarInfo, tree: Tree, limits: PaperLimits) -> None:
    """Keep one member's bytes when it is a text file the reader needs; reject what is unsafe."""
    name = safe_member_name(info.name)
    if name is None:
        tree.rejects.append(PaperReject(file, info.name, "unsafe_member_name",
                                        "absolute or '..' member name: the member is not read"))
        return
    if info.isdir():
        return
    wanted = name.lower().endswith(TEXT_SUFFIXES)
    if not info.isfile():
        if wanted or info.issym() or info.islnk():
            tree.rejects.append(PaperReject(file, name, "not_a_file", "a link or special member: not followed"))
        return
    if not wanted:
        return
    if info.size > limits.max_member_bytes:
        tree.rejects.append(PaperReject(file, name, "member_too_large", f"member of {info.size:,} bytes exceeds "
                                        f"{limits.max_member_bytes:,} (papers.max_member_bytes): not read"))
        return
    handle = tar.extractfile(info)
    if handle is not None:
        tree.members[name] = handle.read()
