"""Which references a nightly run resolves again, and why only these: the ones whose verdict a
grown catalog could change (see ``nightly``). Reads the ledger and catalog; writes nothing."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from citeledger.catalog.catalog_store import ParquetCatalog
from citeledger.engine.process_cache import get_catalog
from citeledger.ledger.reads import current_rows
from citeledger.storage.places import CatalogDir, LedgerDir
from resolvers.model import Reference, Status
from resolvers.observation import observation_id
from resolvers.parsing.text import rerun_tokens

NO_LINK_STATES = (Status.UNRESOLVED.value, Status.MALFORMED_IDENTIFIER.value)
MAX_NEWER_WORKS_FOR_TOKEN_FILTER = 200_000


def title_tokens(text: str | None) -> set[str]:
    """The words of a title or reference string a nightly re-run matches on (``resolvers.parsing.text``)."""
    return rerun_tokens(text)


@dataclass
class RerunSelection:
    references: list[Reference] = field(default_factory=list)
    why: dict[str, int] = field(default_factory=dict)  # reason -> count, for the run report
    reasons: list[str] = field(default_factory=list)  # each reference's reason, in order

    def add(self, ref: Reference, reason: str) -> None:
        self.references.append(ref)
        self.reasons.append(reason)
        self.why[reason] = self.why.get(reason, 0) + 1

    def split(self) -> tuple[list[Reference], list[Reference]]:
        """(re-runs for the local chain only, re-runs a remote service could not answer): only
        the second may be searched again (the search step sends new references)."""
        local = [r for r, why in zip(self.references, self.reasons) if why != "retry_unavailable"]
        retry = [r for r, why in zip(self.references, self.reasons) if why == "retry_unavailable"]
        return local, retry


class _NewerWorks:
    """Works that arrived after a given catalog_seq: their identifiers and title tokens."""

    def __init__(self, catalog: ParquetCatalog, seq: int):
        rows = catalog.works_after(seq)
        self.count = len(rows)
        self.ids: set[str] = set()
        self.postings: dict[str, list[int]] = {}
        self.sizes: list[int] = []
        for i, row in enumerate(rows):
            self.ids.update(x.lower() for x in (row["doi"], row["arxiv_id"], *(row["alt_dois"] or ())) if x)
            tokens = title_tokens(row["title"])
            self.sizes.append(len(tokens))
            for t in tokens:
                self.postings.setdefault(t, []).append(i)

    def may_match(self, raw: str, extracted: Sequence[str]) -> bool:
        if self.count > MAX_NEWER_WORKS_FOR_TOKEN_FILTER:
            return True
        if any(x.lower() in self.ids for x in extracted):
            return True
        shared: dict[int, int] = {}
        for t in title_tokens(raw):
            for i in self.postings.get(t, ()):
                shared[i] = shared.get(i, 0) + 1
        return any(n >= min(2, self.sizes[i]) for i, n in shared.items())


def select_rerun(ledger_dir: LedgerDir, catalog_dir: CatalogDir, remote: bool = False,
                 exclude: set[tuple[str, int]] | None = None) -> RerunSelection:
    """The current references whose state the catalog (or a remote service) could now change;
    see the module docstring for the rule."""
    catalog = get_catalog(catalog_dir)
    statuses = [*NO_LINK_STATES, Status.VERIFIED_FUZZY.value] + ([Status.UNAVAILABLE.value] if remote else [])
    selection = RerunSelection()
    newer: dict[int, _NewerWorks] = {}
    exclude = exclude or set()
    for row in current_rows(ledger_dir, statuses):
        key = (row["citing_paper"], int(row["reference_index"]))
        if key in exclude:
            continue
        ref = Reference(row["citing_paper"], int(row["reference_index"]), row["raw"], row["source"] or "unknown")
        if row["status"] == Status.UNAVAILABLE.value:
            selection.add(ref, "retry_unavailable")
            continue
        if observation_id(ref, catalog.fingerprint) == row["observation_id"]:
            continue  # resolving it again would give the very same observation
        seq = int(row["catalog_seq"] or 0)
        if seq not in newer:
            newer[seq] = _NewerWorks(catalog, seq)
        extracted = [*(row["extracted_dois"] or ()), *(row["extracted_arxiv_ids"] or ())]
        if newer[seq].count and newer[seq].may_match(row["raw"], extracted):
            selection.add(ref, "fuzzy_new_candidates" if row["status"] == Status.VERIFIED_FUZZY.value
                          else f"{row['status']}_new_works")
    return selection
