"""One paper in, its references out: bytes (an e-print archive, a gzipped ``.tex``, a ``.tex``,
``.bbl`` or ``.bib``) or a folder's files, read in memory within ``PaperLimits``."""
from __future__ import annotations

import io
import posixpath
from typing import Mapping

from papers import braces
from papers.archive import ArchiveProblem, Tree, gunzip, is_gzip, is_tar, read_tar
from papers.names import citing_paper_from_name, strip_suffix
from papers.paper_model import PaperLimits, PaperReferences, PaperReject
from papers.sources import choose
from papers.suffixes import KINDS
from papers.titles import TEX
from papers.tree import decode

ARCHIVE_FORMS = ("tar", "gzip_tex")
# rejects that already say why a paper gave no references
NOT_A_MISSING_BIBLIOGRAPHY = frozenset({"not_text", "expansion_budget", "too_many_references", "no_citations"})


def _citing(result: PaperReferences, citing_paper: str | None) -> None:
    if citing_paper:
        result.citing_paper = citing_paper
        return
    result.citing_paper, why = citing_paper_from_name(result.name)
    if result.citing_paper is None:
        result.rejects.append(PaperReject(result.name, None, "no_citing_paper", why))


def form_of(name: str, data: bytes) -> str:
    """What the bytes are: by their first bytes, then by the name's extension."""
    if data[:5] == b"%PDF-":
        return "pdf"
    if is_gzip(data):
        return "gzip"
    if is_tar(data[:512]):
        return "tar"
    lowered = name.lower()
    for ext, kind in KINDS.items():
        if lowered.endswith(ext):
            return kind
    head = data[:4096].lstrip()
    if b"\\documentclass" in head or b"\\begin{thebibliography}" in head or b"\\bibitem" in head:
        return "bbl" if head.startswith((b"\\begin{thebibliography}", b"\\bibitem")) else "tex"
    return "bib" if head.startswith(b"@") else "unknown"


def read_paper(name: str, data: bytes, limits: PaperLimits | None = None,
               citing_paper: str | None = None) -> PaperReferences:
    """The references of one paper given as bytes; ``name`` (a file name or path) gives the
    citing paper's arXiv id unless ``citing_paper`` does. Never raises for bad input: what
    cannot be read is a reject with file, member and reason."""
    limits = limits or PaperLimits()
    form = form_of(name, data)
    result = PaperReferences(name, None, form)
    _citing(result, citing_paper)
    if form == "pdf":
        result.rejects.append(PaperReject(name, None, "pdf", "a PDF: its references need a GROBID service"))
        return result
    if form == "unknown":
        result.rejects.append(PaperReject(name, None, "not_a_paper", "neither an e-print archive nor a .tex, "
                                          ".bbl or .bib file"))
        return result
    try:
        tree = _tree(name, data, form, limits)
    except ArchiveProblem as problem:
        result.rejects.append(PaperReject(name, None, problem.code, problem.reason))
        return result
    result.form = tree.form
    _fill(result, tree.members, tree.rejects, "arxiv_source" if tree.form in ARCHIVE_FORMS else None, limits)
    return result


def _tree(name: str, data: bytes, form: str, limits: PaperLimits) -> Tree:
    """The text members of the paper: an archive's, or the one file's under its own name."""
    if form == "gzip":
        data = gunzip(data, limits)
        if data[:5] == b"%PDF-":
            raise ArchiveProblem("pdf", "a gzipped PDF: its references need a GROBID service")
        form = "tar" if is_tar(data[:512]) else "gzip_tex"
    if form == "tar":
        tree = read_tar(name, io.BytesIO(data), limits)
        tree.form = "tar"
        return tree
    if len(data) > limits.max_member_bytes:
        raise ArchiveProblem("member_too_large", f"{'decompressed, ' if form == 'gzip_tex' else ''}{len(data):,} "
                             f"bytes exceed {limits.max_member_bytes:,} (papers.max_member_bytes)")
    member = posixpath.basename(strip_suffix(name)) + "." + ("tex" if form == "gzip_tex" else form)
    return Tree(members={member: data}, form=form)


def read_tree(name: str, files: Mapping[str, bytes], limits: PaperLimits | None = None,
              citing_paper: str | None = None) -> PaperReferences:
    """The references of one paper given as its files (relative names: a folder's), as
    ``read_paper`` reads an archive's members."""
    limits = limits or PaperLimits()
    result = PaperReferences(name, None, "folder")
    _citing(result, citing_paper)
    _fill(result, dict(files), [], None, limits)
    return result


def _fill(result: PaperReferences, raw: dict[str, bytes], rejects: list[PaperReject], source: str | None,
          limits: PaperLimits) -> None:
    """Decode the members (binary junk is a reject), choose the bibliography, fill ``result``."""
    result.rejects += rejects
    members: dict[str, str] = {}
    for member, data in raw.items():
        text = decode(data)
        if text is None:
            result.rejects.append(PaperReject(result.name, member, "not_text", "binary data, not LaTeX or BibTeX text"))
        else:
            members[member] = text
    try:
        found = choose(result.name, members, source, limits)
    finally:
        braces.forget()
    result.references, result.rule = found.references, found.rule
    result.rejects += found.rejects
    if found.title:
        result.title, result.title_source = found.title, TEX
    if not found.references and not any(r.code in NOT_A_MISSING_BIBLIOGRAPHY for r in result.rejects):
        result.rejects.append(PaperReject(result.name, None, "no_bibliography",
                                          f"no bibliography found ({found.rule or 'no .tex, .bbl or .bib member'})"))
