"""The one small interface every lookup goes through.

Resolvers ask a ``CatalogLookup`` for works; they never see DuckDB or Parquet. The Parquet-backed
catalog lives in ``citeledger.store``; tests use ``InMemoryCatalog``.
"""
from __future__ import annotations

from typing import Iterable, Protocol, Sequence

from resolvers.identifiers.journal_ref import number_key, venue_key
from resolvers.model import Work

LocatorKey = tuple[str, str, str]  # (venue key, volume, first page): ``resolvers.identifiers.journal_ref``


class CatalogLookup(Protocol):
    """What resolution needs from a catalog. Every method takes a batch."""

    @property
    def fingerprint(self) -> str:
        """A digest of the catalog's content: part of every observation id."""

    def works_by_doi(self, dois: Sequence[str]) -> dict[str, Work]:
        """Lower-case DOI -> work, for the DOIs the catalog knows (primary or cross-walked)."""

    def works_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, Work]:
        """Canonical arXiv id (no version) -> work, for the ids the catalog knows."""

    def works_by_locator(self, keys: Sequence[LocatorKey]) -> dict[LocatorKey, list[Work]]:
        """(venue key, volume, first page) -> every work printed there (errata and duplicates
        included: the caller decides), for the keys the catalog knows."""

    def works_at_volume_page(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, Work]]]:
        """(volume, first page) -> (venue key, work) of every work printed there, any venue (for
        venues OCR misread: the caller compares the keys)."""


class InMemoryCatalog:
    """A catalog held in dicts, for tests and small runs, with the Parquet catalog's semantics.

    A DOI may be claimed by two works (an arXiv preprint whose journal DOI is also a work of its
    own): the work whose *own* identifier it is wins (``doi:<doi>``, or arXiv's own 10.48550 DOI
    of an arXiv work), then the smallest work id, as in the store's identifier ranks.
    """

    def __init__(self, works: Iterable[Work], fingerprint: str = "in-memory"):
        self.works: dict[str, Work] = {w.work_id: w for w in works}
        ranked: dict[str, tuple[int, str]] = {}
        self._by_doi: dict[str, Work] = {}
        self._by_arxiv: dict[str, Work] = {}
        self._by_locator: dict[LocatorKey, list[Work]] = {}
        for work in sorted(self.works.values(), key=lambda w: w.work_id):
            for doi in {d for d in (work.doi, *work.alt_dois) if d}:
                own = work.work_id == f"doi:{doi}" or (
                    work.arxiv_id and doi == f"10.48550/arxiv.{work.arxiv_id.lower()}")
                rank = (0 if own else 1, work.work_id)
                if doi not in ranked or rank < ranked[doi]:
                    ranked[doi] = rank
                    self._by_doi[doi] = work
            if work.arxiv_id:
                self._by_arxiv.setdefault(work.arxiv_id, work)
            key = (venue_key(work.venue), number_key(work.volume), number_key(work.first_page))
            if all(key):
                self._by_locator.setdefault(key, []).append(work)
        self._fingerprint = fingerprint

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def works_by_doi(self, dois: Sequence[str]) -> dict[str, Work]:
        return {d: self._by_doi[d] for d in dois if d in self._by_doi}

    def works_by_arxiv_id(self, arxiv_ids: Sequence[str]) -> dict[str, Work]:
        return {a: self._by_arxiv[a] for a in arxiv_ids if a in self._by_arxiv}

    def works_by_locator(self, keys: Sequence[LocatorKey]) -> dict[LocatorKey, list[Work]]:
        return {k: list(self._by_locator[k]) for k in keys if k in self._by_locator}

    def works_at_volume_page(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, Work]]]:
        wanted = set(pairs)
        out: dict[tuple[str, str], list[tuple[str, Work]]] = {}
        for (key, volume, page), works in sorted(self._by_locator.items()):
            if (volume, page) in wanted:
                out.setdefault((volume, page), []).extend((key, w) for w in works)
        return out
