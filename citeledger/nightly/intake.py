"""The nightly's intake: the files waiting in an inbox, and which of them a finished run already
read (by their bytes), so a file dropped again is only moved, never read twice."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence
from urllib.parse import unquote

import pyarrow.parquet as pq

from citeledger.inputs.papers import input_digests
from citeledger.inputs.pdf_papers import read_later
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.storage.places import LedgerDir, LedgerPlaces
from papers.suffixes import PAPER_SUFFIXES

INPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".json.gz", ".csv", ".csv.gz", ".parquet", *PAPER_SUFFIXES)
CATALOG_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".json", ".json.gz", ".csv", ".csv.gz")


def _has_suffix(path: Path, suffixes: Sequence[str]) -> bool:
    name = path.name.lower()
    return any(name.endswith(s) for s in suffixes)


def inbox_files(inbox: str | Path, suffixes: Sequence[str] = INPUT_SUFFIXES) -> list[Path]:
    """Files waiting in an inbox, by name, and (reference inboxes) folders: a paper's source tree
    or a directory of papers. Hidden ones (``.name``) are skipped, so a file or folder being
    copied in under a dot-name and renamed when complete is never read half-written."""
    folder = Path(inbox)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and (
        (p.is_file() and _has_suffix(p, suffixes)) or (p.is_dir() and suffixes is INPUT_SUFFIXES)))


def citing_paper_of(path: Path) -> str | None:
    """A .bbl or .bib file in the inbox is the reference list of the paper its name names:
    ``2101.00001.bbl`` is paper ``2101.00001``; percent-escapes are decoded, so
    ``hep-th%2F9901001.bib`` is ``hep-th/9901001``. Other formats carry ``citing_paper`` per row."""
    name = path.name
    for ext in (".bbl", ".bib"):
        if name.lower().endswith(ext):
            return unquote(name[: -len(ext)])
    return None


def finished_input_digests(ledger_dir: LedgerDir) -> dict[str, str]:
    """sha256 of every input file of a finished run -> that run's id. A file the run could not
    read yet (a PDF whose GROBID was down or not configured) does not count: it is read again."""
    ledger = LedgerStore(ledger_dir)
    out: dict[str, str] = {}
    for path in sorted(LedgerPlaces.of(ledger_dir).manifests.glob("*/manifest.json")):
        run_id = path.parent.name
        if ledger.run_finished(run_id):
            unread = inputs_to_read_again(ledger, run_id)
            for item in json.loads(path.read_text()).get("inputs", []):
                if item.get("path") not in unread:
                    out.setdefault(item.get("sha256"), run_id)
    return out


def inputs_to_read_again(ledger: LedgerStore, run_id: str) -> set[str]:
    """The inputs of a run rejected as "not read yet" (``pdf_papers.READ_LATER``: the service was
    unavailable, or none was configured), from its input rejects."""
    path = ledger.part_path("rejects", run_id, "input-rejects")
    if not path.is_file():
        return set()
    table = pq.read_table(path, columns=["file", "reason"]).to_pylist()
    return {row["file"] for row in table if read_later(row["reason"] or "")}



@dataclass
class Intake:
    """The inbox as tonight's run finds it: files to read, and files a finished run already read."""

    new_files: list[Path] = field(default_factory=list)
    already_processed: dict[str, str] = field(default_factory=dict)  # inbox file -> the run that read it

    def counts(self) -> dict[str, int]:
        return {"new_files": len(self.new_files), "already_processed": len(self.already_processed)}


def take_inbox(inbox: str | Path, ledger_dir: LedgerDir) -> Intake:
    """The inbox's files, split into new ones and those whose exact bytes a finished run already
    read (those are only moved, never read again)."""
    done = finished_input_digests(ledger_dir)
    intake = Intake()
    for path in inbox_files(inbox):
        digests = input_digests(path)
        if digests and all(d in done for d in digests):
            intake.already_processed[str(path)] = done[digests[0]]
        else:
            intake.new_files.append(path)
    return intake
