"""The one small interface every lookup goes through.

Resolvers ask a ``CatalogLookup`` for works; they never see DuckDB or Parquet. The Parquet-backed
catalog lives in ``citeledger.store``; tests use ``InMemoryCatalog``.
"""
from __future__ import annotations

from typing import Iterable, Protocol, Sequence

from .model import Work


class CatalogLookup(Protocol):
    """What resolution needs from a catalog. Every method takes a batch."""

    @property
    def fingerprint(self) -> str:
        """A digest of the catalog's content: part of every observation id."""

    def works_by_doi(self, dois: Sequence[str]) -> dict[str, Work]:
        """Lower-case DOI -> work, for the DOIs the catalog knows (primary or cross-walked)."""

    def works_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, Work]:
        """Canonical arXiv id (no version) -> work, for the ids the catalog knows."""


class InMemoryCatalog:
    """A catalog held in dicts, for tests and small runs. Same semantics as the Parquet one.

    A DOI may be claimed by two works (an arXiv preprint whose journal DOI is also a work of its
    own): the work whose *own* DOI it is wins, as the citation names that version.
    """

    def __init__(self, works: Iterable[Work], fingerprint: str = "in-memory"):
        self.works: dict[str, Work] = {}
        self._by_doi: dict[str, Work] = {}
        self._by_alt_doi: dict[str, Work] = {}
        self._by_arxiv: dict[str, Work] = {}
        for work in works:
            self.works[work.work_id] = work
            if work.doi:
                self._by_doi[work.doi] = work
            for alt in work.alt_dois:
                self._by_alt_doi.setdefault(alt, work)
            if work.arxiv_id:
                self._by_arxiv[work.arxiv_id] = work
        self._fingerprint = fingerprint

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def works_by_doi(self, dois: Sequence[str]) -> dict[str, Work]:
        found = {}
        for doi in dois:
            work = self._by_doi.get(doi) or self._by_alt_doi.get(doi)
            if work is not None:
                found[doi] = work
        return found

    def works_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, Work]:
        return {a: self._by_arxiv[a] for a in arxiv_ids if a in self._by_arxiv}
