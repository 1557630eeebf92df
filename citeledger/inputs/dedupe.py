"""Every row of a run's inputs, once: a reference whose (citing_paper, reference_index) repeats is
settled the same whatever the order of the inputs (identical rows keep one, conflicting rows are
all rejected), streamed so only the repeated keys are ever held."""
from __future__ import annotations

import hashlib
import json
from array import array
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np

from citeledger.inputs.files import ARXIV_ID_KIND, InputSource, discard_spools, prepare_inputs
from citeledger.inputs.papers import FOLDER_KIND, PAPER_KIND, REFUSED_KIND
from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import InputLimits, InputReject
from citeledger.progress import track
from papers.names import citing_paper_from_name
from resolvers.model import Reference

ONE_PAPER_KINDS = (PAPER_KIND, FOLDER_KIND, ARXIV_ID_KIND, REFUSED_KIND)  # inputs of one paper each (or none)
PROGRESS_FROM = 20  # inputs (a directory of papers) from which reading them shows its progress


def read_inputs(paths: Sequence[str | Path], limits: InputLimits,
                citing_paper: str | Mapping[str, str] | None = None) -> tuple[list[Reference], list[InputReject]]:
    """Every row of every input as a reference or a reject (``iter_unique``), as two lists."""
    sources = prepare_inputs(paths, None, limits.max_file_bytes, citing_paper)
    references: list[Reference] = []
    rejects: list[InputReject] = []
    try:
        for item in iter_unique(sources, limits, citing_paper):
            if isinstance(item, InputReject):
                rejects.append(item)
            else:
                references.append(item)
    finally:
        discard_spools(sources)
    return references, rejects


def _read_all(sources: Sequence[InputSource], limits: InputLimits, citing_paper: str | Mapping[str, str] | None,
              progress: bool = False) -> Iterator[Reference | InputReject]:
    """Every row of every source; with ``progress`` (a directory of papers), a progress line of
    the inputs read (a bar on a terminal)."""
    unit = "papers" if all(s.kind in ONE_PAPER_KINDS for s in sources) else "inputs"
    with track(len(sources) if progress else 0, f"{unit} read") as advance:
        for source in sources:
            paper = citing_paper.get(source.name) if isinstance(citing_paper, Mapping) else citing_paper
            yield from read_references(source.path, limits, paper, source.name, source.kind)
            advance(1)


def _may_repeat(sources: Sequence[InputSource], citing_paper: str | Mapping[str, str] | None) -> list[InputSource]:
    """The sources whose rows could repeat another's: all of them when any is a row file (or a
    file of ``arXiv:ID`` lines); of papers alone (files, folders, ``arXiv:ID`` inputs), those sharing
    their id with another paper (a paper numbers its references once, so one with an id of its own
    repeats nothing, and a paper without an id has no rows).
    A directory of papers, or an ``arXiv:ID``, is then read once, not twice."""
    if any(s.kind not in ONE_PAPER_KINDS for s in sources):
        return list(sources)
    ids = [_paper_id(s, citing_paper) for s in sources]
    counts = Counter(ids)
    return [s for s, i in zip(sources, ids) if i is not None and counts[i] > 1]


def _paper_id(source: InputSource, citing_paper: str | Mapping[str, str] | None) -> str | None:
    """The id a paper's rows will carry: an ``arXiv:ID`` input's own (fetched papers take no
    ``--citing-paper``), else the one given for it, else its name's."""
    if source.kind == ARXIV_ID_KIND:  # the id without its version, as read_arxiv_paper gives it
        from citeledger.inputs.arxiv_fetch import arxiv_input
        from resolvers.remote.arxiv import split_arxiv_id

        split = split_arxiv_id(arxiv_input(source.name) or "")
        return split[0] if split else None
    given = citing_paper.get(source.name) if isinstance(citing_paper, Mapping) else citing_paper
    return given or citing_paper_from_name(source.name)[0]


@dataclass(frozen=True)
class _Settled:
    keep: tuple[str, int] | None  # the location whose row stays, None when the duplicates conflict
    reason: str


def _duplicates(sources: Sequence[InputSource], limits: InputLimits,
                citing_paper: str | Mapping[str, str] | None) -> dict[tuple[str, int], _Settled]:
    """How each (citing_paper, reference_index) seen more than once is settled. One pass keeps
    8 bytes a row (a hash of the key), a second one looks only at keys whose hash repeats."""
    checked = _may_repeat(sources, citing_paper)
    hashes = array("q")
    for item in _read_all(checked, limits, citing_paper):
        if isinstance(item, Reference):
            hashes.append(hash((item.citing_paper, item.reference_index)))
    if len(hashes) < 2:
        return {}
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    suspects = set(np.unique(ordered[1:][ordered[1:] == ordered[:-1]]).tolist())
    del hashes, ordered
    if not suspects:
        return {}
    seen: dict[tuple[str, int], list[tuple[str, int, str]]] = {}
    for item in _read_all(checked, limits, citing_paper):
        if isinstance(item, Reference) and hash(key := (item.citing_paper, item.reference_index)) in suspects:
            content = hashlib.sha256(json.dumps([item.raw, item.source]).encode("utf-8", "surrogatepass"))
            seen.setdefault(key, []).append((str(item.file), int(item.line or 0), content.hexdigest()))
    return {key: _settle(key, rows) for key, rows in seen.items() if len(rows) > 1}


def _settle(key: tuple[str, int], rows: list[tuple[str, int, str]]) -> _Settled:
    """Identical rows keep one (the first by file name and line, whatever the order of the
    inputs); rows that disagree are all rejected, naming every place: nothing silently wins."""
    rows = sorted(rows)
    places = [f"{file}:{line}" for file, line, _ in rows]
    where = ", ".join(places[:10]) + (f" and {len(places) - 10} more" if len(places) > 10 else "")
    if len({content for _, _, content in rows}) == 1:
        return _Settled((rows[0][0], rows[0][1]), f"duplicate reference {key}: the same row is kept from {places[0]}")
    return _Settled(None, f"conflicting duplicates of reference {key} at {where}: none is kept")


class OnePass:
    """Every row of every input in one read, for inputs that repeat no (citing_paper,
    reference_index): ``items()`` streams the rows as they are read and hashes their keys, and
    ``repeats`` says afterwards whether any key hash came twice. Only then can the rows differ
    from ``iter_unique``'s (a duplicate to settle), and the caller reads the inputs again through
    it; otherwise the duplicates pass of ``iter_unique`` would have read everything once more to
    find nothing. Inputs that are only papers keep ``iter_unique`` (``usable`` is False)."""

    def __init__(self, sources: Sequence[InputSource], limits: InputLimits,
                 citing_paper: str | Mapping[str, str] | None = None) -> None:
        self.sources, self.limits, self.citing_paper = sources, limits, citing_paper
        self.usable = len(_may_repeat(sources, citing_paper)) == len(sources)
        self.repeats = False

    def items(self) -> Iterator[Reference | InputReject]:
        hashes = array("q")
        shown = len(self.sources) >= PROGRESS_FROM
        for item in _read_all(self.sources, self.limits, self.citing_paper, progress=shown):
            if isinstance(item, Reference):
                hashes.append(hash((item.citing_paper, item.reference_index)))
            yield item
        ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
        self.repeats = bool(len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any())


def iter_unique(sources: Sequence[InputSource], limits: InputLimits,
                citing_paper: str | Mapping[str, str] | None = None) -> Iterator[Reference | InputReject]:
    """Every row of every input, streamed, as a reference or a reject; a reference whose
    (citing_paper, reference_index) repeats is settled the same whatever the order of the inputs."""
    settled = _duplicates(sources, limits, citing_paper)
    for item in _read_all(sources, limits, citing_paper, progress=len(sources) >= PROGRESS_FROM):
        if settled and isinstance(item, Reference):
            rule = settled.get((item.citing_paper, item.reference_index))
            if rule is not None and rule.keep != (str(item.file), int(item.line or 0)):
                yield InputReject(str(item.file), item.line, "reference_index", rule.reason, item.raw[:200])
                continue
        yield item

