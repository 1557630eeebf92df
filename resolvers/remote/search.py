"""Search-based candidates for references the local chain could not link.

``SearchResolver.ask(service, query, budget)`` returns a ``SearchAnswer`` (the works a service
offers for one query), from, in turn: this process's memory (one request per distinct query per
run, even when two threads ask at once), the on-disk cache the caller hands in (``SearchCache``;
resolvers write no file: ``citeledger.storage.remote_state.SearchCacheDir``), or the service itself
through its polite client (rate limit, Retry-After, circuit breaker). A request needs a unit of
the run's ``RequestBudget``; a budget spent, like a service that cannot answer, raises
``RemoteUnavailable``: the reference is ``unavailable`` and is asked again on the next run.
Failures are never cached. ``query_for`` decides what is sent, and whether anything is.
"""
from __future__ import annotations

import dataclasses
import re
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Protocol

from resolvers.errors import RemoteUnavailable
from resolvers.model import Work
from resolvers.parsing.fields import ParsedReference
from resolvers.parsing.text import STOPWORDS, clean_raw, fold, index_tokens
from resolvers.remote.http import PoliteClient
from resolvers.remote.search_clients import SEARCHERS
from resolvers.remote.settings import SearchSettings

# answers hold converted works: a new conversion is a new format (2: OpenAlex hits converted as the
# catalog reader converts them), and entries of an older one are asked again
CACHE_FORMAT = 2
MEMORY_MAX = 200_000  # answers kept in memory (the disk cache keeps them all)
_WORD = re.compile(r"[^\W\d_]{4,}")
_TERM = re.compile(r"[^\W_]+")
# a journal's start the parser left on the end of a title ("..., Eur", "... . Phys. Rev"): not title words
_VENUE_TAIL = re.compile(r"[,.]\s*[A-Z][\w.]*(?:\s+[A-Z][\w.]*)?\s*$")


class SearchCache(Protocol):
    """Answers kept between runs: ``get`` gives the stored entry (or None), ``put`` replaces it."""

    def get(self, service: str, query: str) -> dict[str, Any] | None: ...

    def put(self, service: str, query: str, entry: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class SearchAnswer:
    service: str
    query: str
    works: tuple[Work, ...]
    fetched_at: str  # ISO time the service answered
    cached: bool = False  # from the disk cache or this run's memory, not a new request
    set_aside: int = 0  # hits that were notices or had no identifier

    def as_entry(self) -> dict[str, Any]:
        return {"format": CACHE_FORMAT, "service": self.service, "query": self.query, "fetched_at": self.fetched_at,
                "set_aside": self.set_aside, "works": [_work_dict(w) for w in self.works]}


def _work_dict(work: Work) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(work).items()}


def _work_of(values: dict[str, Any]) -> Work:
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return Work(**fields)


def answer_from_entry(entry: dict[str, Any]) -> SearchAnswer | None:
    """A cached entry back as an answer; None for an entry of another format or a damaged one."""
    try:
        if entry.get("format") != CACHE_FORMAT:
            return None
        works = tuple(_work_of(w) for w in entry["works"])
        return SearchAnswer(entry["service"], entry["query"], works, entry["fetched_at"], True,
                            int(entry.get("set_aside", 0)))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


@dataclass
class RequestBudget:
    """How many search requests one run may send (``limit`` 0: no limit), and what it spent."""

    limit: int = 0
    requests: dict[str, int] = field(default_factory=dict)  # service -> requests sent
    cache_hits: dict[str, int] = field(default_factory=dict)  # service -> answers from the cache
    refused: int = 0  # requests not sent because the budget was spent
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, service: str) -> None:
        with self._lock:
            if self.limit and sum(self.requests.values()) >= self.limit:
                self.refused += 1
                raise RemoteUnavailable(service, f"the run's search request budget ({self.limit}) is spent; "
                                                 "asked again next run")
            self.requests[service] = self.requests.get(service, 0) + 1

    def hit(self, service: str) -> None:
        with self._lock:
            self.cache_hits[service] = self.cache_hits.get(service, 0) + 1

    def report(self) -> dict[str, Any]:
        with self._lock:
            return {"requests": dict(sorted(self.requests.items())), "total": sum(self.requests.values()),
                    "cache_hits": dict(sorted(self.cache_hits.items())), "budget": self.limit or None,
                    "not_sent_budget_spent": self.refused}


def _capped(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


def title_like(parsed: ParsedReference, min_words: int) -> bool:
    """Does the string hold a span a search can match: a parsed title of ``min_words`` index
    tokens, or as many lower-case content words (title material; names are capitalised)?"""
    if parsed.title and len(index_tokens(parsed.title)) >= min_words:
        return True
    words = {w for w in _WORD.findall(parsed.text) if w.islower() and w not in STOPWORDS}
    return len(words) >= min_words


class SearchResolver:
    """The enabled search services in the order they are asked, with memory, cache and budget."""

    def __init__(self, clients: dict[str, tuple[PoliteClient, str]], settings: SearchSettings,
                 mailto: str | None = None, cache: SearchCache | None = None,
                 wallclock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)):
        self.clients = clients  # service -> (its polite client, its search URL)
        self.settings = settings
        self.mailto = mailto
        self.cache = cache
        self._wallclock = wallclock
        self._lock = threading.Lock()
        self._answers: dict[tuple[str, str], Future] = {}
        self._budgets: dict[str, RequestBudget] = {}

    @property
    def services(self) -> tuple[str, ...]:
        return tuple(s for s in self.settings.services if s in self.clients)

    def budget(self, run_id: str, limit: int | None = None) -> RequestBudget:
        """The run's budget (made on first use with ``limit``, default the configured one)."""
        with self._lock:
            if run_id not in self._budgets:
                chosen = self.settings.max_requests_per_run if limit is None else limit
                self._budgets[run_id] = RequestBudget(max(0, chosen))
            return self._budgets[run_id]

    def sendable(self, parsed: ParsedReference) -> bool:
        """Strings likely to fail are not sent: too short, or no title-like span."""
        return len(clean_raw(parsed.text)) >= self.settings.min_chars and title_like(
            parsed, self.settings.min_title_words)

    def query_for(self, service: str, parsed: ParsedReference) -> str | None:
        """What is sent: the cleaned string, capped (Crossref, OpenAlex); for arXiv the parsed
        title and first author's surname (``ti:"..." AND au:...``), None without both."""
        if service != "arxiv":
            return _capped(clean_raw(parsed.text), self.settings.max_query_chars)
        if not parsed.title or not parsed.authors or len(index_tokens(parsed.title)) < self.settings.min_title_words:
            return None
        title = " ".join(_TERM.findall(fold(_VENUE_TAIL.sub("", parsed.title))))[: self.settings.max_query_chars]
        surname = " ".join(_TERM.findall(fold(parsed.authors[0])))
        if not title or not surname:
            return None
        return f'ti:"{title}" AND au:{surname.split()[-1]}'

    def ask(self, service: str, query: str, budget: RequestBudget) -> SearchAnswer:
        """The service's answer to ``query``: memory, then the disk cache, then one request."""
        key = (service, query)
        with self._lock:
            future = self._answers.get(key)
            mine = future is None or (future.done() and (future.exception() is not None or self._stale(future)))
            if mine:
                if len(self._answers) >= MEMORY_MAX:  # a long-lived process: forget settled answers
                    self._answers = {k: f for k, f in self._answers.items() if not f.done()}
                future = self._answers[key] = Future()
        assert future is not None
        if not mine:
            answer = future.result()  # raises what the asking thread met
            budget.hit(service)
            return dataclasses.replace(answer, cached=True)
        try:
            answer = self._cached(service, query) or self._request(service, query, budget)
        except BaseException as exc:
            future.set_exception(exc)
            raise
        future.set_result(answer)
        if answer.cached:
            budget.hit(service)
        return answer

    def _stale(self, future: Future) -> bool:
        return self._too_old(future.result().fetched_at)

    def _too_old(self, fetched_at: str) -> bool:
        try:
            when = datetime.fromisoformat(fetched_at)
        except (TypeError, ValueError):
            return True
        return self._wallclock() - when > timedelta(days=self.settings.cache_days)

    def _cached(self, service: str, query: str) -> SearchAnswer | None:
        if self.cache is None:
            return None
        entry = self.cache.get(service, query)
        answer = answer_from_entry(entry) if entry else None
        if answer is None or answer.service != service or answer.query != query or self._too_old(answer.fetched_at):
            return None
        return answer

    def _request(self, service: str, query: str, budget: RequestBudget) -> SearchAnswer:
        http, url = self.clients[service]
        budget.take(service)
        works, aside = SEARCHERS[service](http, url, self.mailto, query, self.settings.rows)
        answer = SearchAnswer(service, query, tuple(works), self._wallclock().isoformat(timespec="seconds"),
                              False, aside)
        if self.cache is not None:
            self.cache.put(service, query, answer.as_entry())
        return answer
