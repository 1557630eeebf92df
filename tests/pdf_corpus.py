"""The real-PDF corpus and its answers, for the tests and benchmarks/bench_pdf_corpus.py.

Three sets, each a folder of PDFs with a manifest of answers made without the reader:
* ``tests/fixtures/pdfs/``: eight papers with hand counts (expected_pdfs.json);
* ``tests/fixtures/pdf_corpus/``: papers whose LaTeX source is committed beside the PDF, answered
  by ``expected_ids.py`` from that source (answers.json);
* ``tests/fixtures/peer_pdfs/``: the test PDFs of refextract and CERMINE, with the counts and
  identifiers their own tests expect where those are right and hand counts where they over-split
  (expected_peers.json).

A printed identifier is one of the answer's DOIs and arXiv ids that the PDF's text layer shows
(a style that does not print a ``doi`` field leaves it out of the PDF, so it cannot be found there);
it is found when an entry the reader gives carries it. An identifier the reader gives that no
entry of the answer carries is invented."""
from __future__ import annotations

import html
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
SETS = {"hand": (FIXTURES / "pdfs", "expected_pdfs.json"),
        "source": (FIXTURES / "pdf_corpus", "answers.json"),
        "peers": (FIXTURES / "peer_pdfs", "expected_peers.json")}


@dataclass
class Answer:
    """What one PDF prints: its entries, each entry's DOIs and arXiv ids (None where not
    transcribed), and the longest entry's length in characters where known."""
    pdf: Path
    kind: str
    entries: int
    ids: list | None
    longest: int | None
    note: str = ""
    extra: dict = field(default_factory=dict)


def answers(kinds: tuple[str, ...] = ("hand", "source", "peers")) -> list[Answer]:
    out = []
    for kind in kinds:
        folder, manifest = SETS[kind]
        if not (folder / manifest).is_file():
            continue
        for name, spec in json.loads((folder / manifest).read_text(encoding="utf-8")).items():
            if name.startswith("_"):
                continue
            out.append(Answer(folder / name, kind, spec["entries"], spec.get("ids"), spec.get("longest"),
                              spec.get("class") or spec.get("style", ""), spec))
    return out


def pdf_text(pdf: Path) -> str:
    """The PDF's whole text layer as its words (``pdftotext -bbox``: a hyphen at a line's end is
    kept, where the plain text mode drops it), lowercased, with the breaks between words (and a
    hyphen before one) closed, so an identifier cut at a line end is still seen as printed."""
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, check=False).stdout
    words = [html.unescape(w) for w in re.findall(r"<word [^>]*>([^<]*)</word>", out.decode("utf-8", "replace"))]
    text = " ".join(words).lower()
    return re.sub(r"\s+", "", text) + "\n" + re.sub(r"-?\s+", "", text)


def printed_ids(answer: Answer, text: str | None = None) -> set[str]:
    """The answer's identifiers that the PDF shows."""
    if not answer.ids:
        return set()
    wanted = {i for dois, arxiv_ids in answer.ids for i in dois + arxiv_ids}
    text = pdf_text(answer.pdf) if text is None else text
    return {i for i in wanted if i.lower() in text}


def allowed_ids(answer: Answer) -> set[str] | None:
    """Every identifier an entry of the answer carries; None where the answer's ids are not a full
    transcription (then an identifier read is held to the PDF's whole text layer instead)."""
    if answer.ids is None or not answer.extra.get("ids_complete", True):
        return None
    ids = {i for dois, arxiv_ids in answer.ids for i in dois + arxiv_ids}
    return ids | {f"10.48550/arxiv.{i}" for dois, arxiv_ids in answer.ids for i in arxiv_ids}


def score(answer: Answer, refs: list[str], text: str | None = None, read: set[str] | None = None) -> dict:
    """One reading of one PDF held to its answer: entries found (at most the printed number),
    exact count, printed ids found, ids invented, entries longer than the longest printed one.
    ``read``: the identifiers another extractor gave for the entries (default: the project's
    identifier reader over each entry's string)."""
    from resolvers.identifiers.extract import extract_identifiers

    text = pdf_text(answer.pdf) if text is None else text
    if read is None:
        read = set()
        for raw in refs:
            found = extract_identifiers(raw)
            read |= set(found.dois) | set(found.arxiv_ids)
    joined = " ".join(refs).lower()
    printed = printed_ids(answer, text)
    hits = {i for i in printed if i in read or i.lower() in joined}
    allowed = allowed_ids(answer)
    if allowed is None:
        invented = sorted(i for i in read if i.lower() not in text)
    else:
        invented = sorted(read - allowed)
    too_long = [len(r) for r in refs if answer.longest and len(r) > answer.longest]
    return {"count": len(refs), "printed": answer.entries, "found": min(len(refs), answer.entries),
            "exact": len(refs) == answer.entries, "ids": len(printed), "ids_found": len(hits),
            "missed": sorted(printed - hits), "invented": invented, "too_long": too_long,
            "longest": max((len(r) for r in refs), default=0)}
