"""The search step sees works and verifies them as the local chain does: an OpenAlex
hit is the work the OpenAlex catalog reader makes of the same record (id, DOI, author names), the
local candidates are retrieved by the local chain's own queries (``Name: subtitle`` lead
included), and once per reference however many services answer."""
from __future__ import annotations

import copy
import dataclasses
import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

import httpx
from remote_server import fast

from citeledger.sources.openalex_snapshot import work_from_openalex
from resolvers.candidates.fuzzy import FuzzyResolver
from resolvers.candidates.retrieval import InMemoryRetriever
from resolvers.model import Work
from resolvers.parsing.fields import parse_reference
from resolvers.remote.http import PoliteClient
from resolvers.remote.search import SearchAnswer, SearchResolver
from resolvers.remote.search_clients import search_openalex
from resolvers.remote.settings import SearchSettings
from resolvers.search_step import SearchStep, search_one
from resolvers.verification.verify import surname

OPENALEX_PART = Path(__file__).parent / "fixtures" / "catalog" / "openalex" / "works" / "updated_date=2025-06-11" / \
    "part_000.gz"
WORK_FIELDS = [f.name for f in dataclasses.fields(Work)]


def openalex_record() -> dict:
    """W2741809807 (The state of OA), the recorded openalex-python fixture (see its PROVENANCE)."""
    return json.loads(gzip.open(OPENALEX_PART, "rt").readline())


def search_hits(results: list[dict]) -> list[Work]:
    http = PoliteClient("openalex", fast(), transport=httpx.MockTransport(
        lambda request: httpx.Response(200, json={"meta": {"count": len(results)}, "results": results})))
    works, _ = search_openalex(http, "http://127.0.0.1:9/openalex", None, "state of oa", 5)
    return works


def test_an_openalex_hit_is_the_work_the_catalog_reader_makes():
    record = openalex_record()
    preprint = dict(copy.deepcopy(record), doi="https://doi.org/10.48550/arXiv.1706.03762", ids={})
    suffixed = copy.deepcopy(record)
    suffixed["authorships"][0]["author"]["display_name"] = "Heather A. Piwowar Jr."
    hits = search_hits([record, preprint, suffixed])
    for hit, obj in zip(hits, (record, preprint, suffixed)):
        row = work_from_openalex(obj)
        assert {f: getattr(hit, f) for f in WORK_FIELDS} == {f: getattr(row, f) for f in WORK_FIELDS}
    assert (hits[1].work_id, hits[1].arxiv_id) == ("arxiv:1706.03762", "1706.03762")  # not doi:10.48550/...
    assert surname(hits[2].authors[0]) == "Piwowar"  # the verifier's surname, not "Jr."


class SpyRetriever(InMemoryRetriever):
    """Records every batch of queries it is asked."""

    def __init__(self, works):
        super().__init__(works)
        self.asked: list[list[list[str]]] = []

    def candidates_batch(self, queries, k):
        self.asked.append([list(q) for q in queries])
        return super().candidates_batch(queries, k)


LIGO = "LIGO: a gravitational-wave interferometer for the laser era. Rev Mod Phys 2010;82:1-50."


def test_search_verification_retrieves_by_the_local_chains_queries():
    parsed = parse_reference(LIGO)
    assert parsed.title_lead == "LIGO"
    local = SpyRetriever([])  # nothing found by the title: the chain asks again by the whole string
    FuzzyResolver(local).match_batch([parsed])
    searched = SpyRetriever([])
    FuzzyResolver(searched).decide_with(parsed, [], "crossref_search")
    chain_queries = [q for batch in local.asked for q in batch]
    assert "ligo" in chain_queries[0]  # the title query carries the lead
    assert searched.asked == [chain_queries]  # both of them, in one retrieval


class MemoryCache:
    def __init__(self):
        self.entries: dict[tuple[str, str], dict] = {}

    def get(self, service, query):
        return self.entries.get((service, query))

    def put(self, service, query, entry):
        self.entries[(service, query)] = entry


def test_the_local_candidates_are_retrieved_once_per_reference():
    """Two services answer with works that settle nothing: both answers are weighed against the
    string's local candidates, retrieved once."""
    parsed = parse_reference(LIGO)
    cache = MemoryCache()
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    search = SearchResolver({"crossref": (None, ""), "openalex": (None, "")},  # type: ignore[dict-item]
                            SearchSettings(services=("crossref", "openalex")), cache=cache)
    for service, n in (("crossref", 1), ("openalex", 2)):
        query = search.query_for(service, parsed)
        unrelated = Work(f"doi:10.1000/other{n}", doi=f"10.1000/other{n}", title=f"Unrelated work number {n}")
        cache.put(service, query, SearchAnswer(service, query, (unrelated,), now).as_entry())
    retriever = SpyRetriever([])
    outcome, failed = search_one(parsed, FuzzyResolver(retriever), SearchStep(search, search.budget("t")))
    assert [s["service"] for s in outcome.evidence["search"]] == ["crossref", "openalex"] and not failed
    assert len(retriever.asked) == 1


def test_answers_cached_by_the_earlier_conversion_are_asked_again():
    """Format 1 entries hold OpenAlex works as the search client used to convert them (an arXiv
    DataCite DOI as ``doi:10.48550/...``): they are not read back, the service is asked again."""
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    old = Work("doi:10.48550/arxiv.1706.03762", doi="10.48550/arxiv.1706.03762", title="Attention is all you need")
    entry = SearchAnswer("openalex", "attention", (old,), now).as_entry()
    cache = MemoryCache()
    cache.put("openalex", "attention", dict(entry, format=1))
    search = SearchResolver({"openalex": (None, "")}, SearchSettings(services=("openalex",)),  # type: ignore[dict-item]
                            cache=cache)
    assert search._cached("openalex", "attention") is None
    cache.put("openalex", "attention", entry)
    assert search._cached("openalex", "attention").works == (old,)
