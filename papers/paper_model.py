"""What reading one paper gives: its references in order, and the rejects that say what could not
be read (file, member, reason). Plain data, no I/O."""
from __future__ import annotations

from dataclasses import dataclass, field

MiB = 1 << 20
# a whole thesis or a long review with every chapter input is 1-5 MiB of LaTeX; 16 MiB is three
# times that, and small enough that the text and its entries stay a few hundred MB at most
MAX_EXPANDED_BYTES = 16 * MiB
# a book input chapter by chapter and figure by figure follows a few hundred files; a fan-out
# of empty files costs no bytes but time per input, so inputs are counted on their own
MAX_INPUTS = 2_000
# the longest reference lists of real papers (review articles, catalogue papers) hold a few
# thousand entries; ten thousand is past every real one
MAX_REFERENCES = 10_000


@dataclass(frozen=True, slots=True)
class PaperLimits:
    """Bounds on one paper, so an archive bomb or an ``\\input`` loop is a reject, not a hang.

    ``max_total_bytes``: uncompressed bytes of the whole paper (every member counted, read or
    not); ``max_members``: members of an archive or files of a folder; ``max_member_bytes``: one
    text member (``.tex``, ``.bbl``, ``.bib``) read into memory; ``max_input_depth``: nesting of
    ``\\input``/``\\include``.

    LaTeX multiplies: files that each ``\\input`` the next twice are read 2**depth times from a
    few hundred bytes, so what the inputs bring is bounded too, repeats counted. Passing any of
    these rejects the paper (no references: a part of a bomb is no bibliography either):
    ``max_expanded_bytes``: characters of the main file with its inputs in place (every repeat
    read again); ``max_inputs``: ``\\input``/``\\include`` followed, repeats counted;
    ``max_references``: entries of one bibliography."""

    max_total_bytes: int = 256 * MiB
    max_members: int = 10_000
    max_member_bytes: int = 32 * MiB
    max_input_depth: int = 16
    max_expanded_bytes: int = MAX_EXPANDED_BYTES
    max_inputs: int = MAX_INPUTS
    max_references: int = MAX_REFERENCES


@dataclass(frozen=True, slots=True)
class ExtractedReference:
    """One bibliography entry: ``raw`` as a reference string (LaTeX turned to text), ``order``
    its 1-based place in the list, ``source`` what the string came from (``arxiv_source`` for an
    e-print archive, else ``bbl``, ``bib`` or ``tex``), ``member`` the file inside the paper,
    ``kind`` that file's kind, ``key`` the citation key, ``line`` in the member, and ``fields``
    what the source said field by field (a BibTeX or biblatex entry's, revtex's ``\\bibinfo``s)
    for the parser. A DOI or arXiv id the entry holds where its printed string does not show it
    (a link target, a ``url`` or ``eprint`` field) is written at the end of ``raw`` (``doi:...``,
    ``arXiv:...``) and kept as ``fields["doi"]``/``fields["arxiv"]``; an author dash filled from
    the entry before keeps the printed string as ``fields["as_printed"]``."""

    order: int
    raw: str
    source: str
    member: str | None
    kind: str
    key: str | None = None
    line: int | None = None
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PaperReject:
    """Something of the paper that could not be read: ``code`` a stable word (``corrupt_archive``,
    ``too_large``, ...), ``reason`` the sentence for people."""

    file: str
    member: str | None
    code: str
    reason: str
    line: int | None = None

    @property
    def message(self) -> str:
        where = f"{self.file}!{self.member}" if self.member else self.file
        where += f":{self.line}" if self.line is not None else ""
        return f"{where}: {self.reason}"


@dataclass(slots=True)
class PaperReferences:
    """One paper read: ``form`` what it was (``tar``, ``gzip_tex``, ``tex``, ``bbl``, ``bib``,
    ``folder``, ``pdf``, ``unknown``), ``rule`` which source won and why, the references in order
    and the rejects. ``citing_paper`` is None when neither the caller nor the name gave one (then
    ``rejects`` says so). ``title``: the paper's own title when its source gives one
    (``papers.titles``), and ``title_source`` where it was read."""

    name: str
    citing_paper: str | None
    form: str
    references: list[ExtractedReference] = field(default_factory=list)
    rejects: list[PaperReject] = field(default_factory=list)
    rule: str = ""
    title: str | None = None
    title_source: str = ""

    @property
    def has_bibliography(self) -> bool:
        return bool(self.references)
