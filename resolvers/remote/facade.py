"""The facade of the remote resolvers: ``build_remote`` and the ``RemoteResolver`` the resolution
chain asks by identifier (the package's docstring says what the answers mean)."""
from __future__ import annotations

import re
import threading
from typing import Callable, Iterable

import httpx

from resolvers.errors import ArxivQueryError, RemoteBatchUnavailable, RemoteUnavailable
from resolvers.model import Work
from resolvers.redaction import keep_private
from resolvers.remote.arxiv import ArxivClient, split_arxiv_id
from resolvers.remote.crossref import CrossrefClient, message_to_work
from resolvers.remote.eprint import ArxivFiles
from resolvers.remote.guard.session import RemoteSession
from resolvers.remote.http import PoliteClient
from resolvers.remote.search import SearchCache, SearchResolver
from resolvers.remote.settings import RemoteSettings

_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)


def make_http_client(settings: RemoteSettings, service: str, **kwargs) -> PoliteClient:
    """The polite client of one service from the settings (kwargs: transport, clock, sleep, session).
    A contact configured private is hidden from every message from then on (``redaction``)."""
    if settings.private_mailto:
        keep_private(settings.mailto, "mailto")
    return PoliteClient(service, settings.service(service), mailto=settings.mailto, **kwargs)


def _message_work(doi: str, message: dict) -> Work:
    """A Crossref message as a work; a garbled one (no DOI, authors that are not objects...)
    is a service that could not answer, never a crash and never "not found"."""
    if not isinstance(message.get("DOI"), str) or not message["DOI"].strip():
        raise RemoteUnavailable("crossref", f"malformed work message for {doi}: no DOI")
    try:
        return message_to_work(message)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        raise RemoteUnavailable("crossref", f"malformed work message for {doi}: {exc!r}"[:300]) from None


class RemoteResolver:
    """Lookups by identifier against the enabled services, cached for the life of the object."""

    def __init__(self, arxiv: ArxivClient | None = None, crossref: CrossrefClient | None = None,
                 search: SearchResolver | None = None, files: ArxivFiles | None = None,
                 session: RemoteSession | None = None):
        self.session = session or RemoteSession()
        self.arxiv = arxiv
        self.crossref = crossref
        self.files = files  # arXiv's e-prints and PDFs (``arXiv:ID`` inputs), through arXiv's one client
        self.search = search  # search-based candidates, None when no search service is on
        self._lock = threading.Lock()
        self._arxiv_cache: dict[str, Work | None] = {}
        self._doi_cache: dict[str, Work | None] = {}

    @classmethod
    def from_settings(cls, settings: RemoteSettings, **http_kwargs) -> "RemoteResolver | None":
        return build_remote(settings, **http_kwargs)

    def lookup_arxiv(self, ids: Iterable[str]) -> dict[str, Work | None]:
        """arXiv id -> work or None (arXiv says no such paper). Empty when arXiv is off."""
        ids = list(dict.fromkeys(ids))
        if self.arxiv is None or not ids:
            return {}
        with self._lock:
            answered = {i: self._arxiv_cache[i] for i in ids if i in self._arxiv_cache}
        todo = [i for i in ids if i not in answered]
        step = self.arxiv.batch_size
        for start in range(0, len(todo), step):
            batch = todo[start : start + step]
            try:
                result = self.arxiv.lookup(batch)
            except RemoteUnavailable as exc:
                raise RemoteBatchUnavailable(exc, answered, todo[start:]) from exc
            except ArxivQueryError as exc:  # the API refused the query (a garbled 400...): no answer
                cause = RemoteUnavailable("arxiv", f"query refused: {exc}")
                raise RemoteBatchUnavailable(cause, answered, todo[start:]) from exc
            with self._lock:
                self._arxiv_cache.update(result)
            answered.update(result)
        return {i: answered[i] for i in ids if i in answered}

    def lookup_doi(self, dois: Iterable[str]) -> dict[str, Work | None]:
        """DOI -> work or None. arXiv's own DOIs (10.48550/arXiv.X, registered with DataCite, so
        Crossref would 404) go to the arXiv API; the rest to Crossref. A Crossref 404 is checked
        against the agency endpoint: unknown everywhere -> None; registered with another agency
        -> left out of the result (cannot be checked here, which is not "not found").
        """
        dois = list(dict.fromkeys(d.strip().lower() for d in dois))
        with self._lock:
            answered = {d: self._doi_cache[d] for d in dois if d in self._doi_cache}
        todo = [d for d in dois if d not in answered]
        arxiv_route = {}
        crossref_route = []
        for doi in todo:
            m = _ARXIV_DOI.match(doi)
            split = split_arxiv_id(m.group(1)) if m else None
            if split is not None:
                arxiv_route[doi] = split[0]
            else:
                crossref_route.append(doi)

        def remember(doi: str, work: Work | None) -> None:
            answered[doi] = work
            with self._lock:
                self._doi_cache[doi] = work

        if self.crossref is not None:
            for position, doi in enumerate(crossref_route):
                try:
                    message = self.crossref.work(doi)
                    if message is not None:
                        remember(doi, _message_work(doi, message))
                        continue
                    agency = self.crossref.agency(doi)
                except RemoteUnavailable as exc:
                    rest = crossref_route[position:] + list(arxiv_route)
                    raise RemoteBatchUnavailable(exc, answered, rest) from exc
                if agency is None or agency == "crossref":
                    remember(doi, None)  # no agency knows it, or Crossref's own and absent
                # registered elsewhere (DataCite, mEDRA, ...): not checkable here, left absent
        if arxiv_route and self.arxiv is not None:
            try:
                by_id = self.lookup_arxiv(arxiv_route.values())
            except RemoteBatchUnavailable as exc:
                for doi, aid in arxiv_route.items():
                    if aid in exc.answered:
                        remember(doi, exc.answered[aid])
                unanswered = [d for d in arxiv_route if d not in answered]
                raise RemoteBatchUnavailable(exc.cause, answered, unanswered) from exc
            for doi, aid in arxiv_route.items():
                if aid in by_id:
                    remember(doi, by_id[aid])
        return {d: answered[d] for d in dois if d in answered}

    def clients(self) -> dict[str, PoliteClient]:
        """The polite client of each service on, by service (lookups, searches and files share them)."""
        found: dict[str, PoliteClient] = {}
        for client in (self.arxiv, self.crossref, self.files):
            if client is not None:
                found.setdefault(client.http.service, client.http)
        for http, _ in (self.search.clients.values() if self.search is not None else ()):
            found.setdefault(http.service, http)
        return dict(sorted(found.items()))

    def begin_run(self, run_id: str) -> None:
        """The run ``run_id`` starts (nothing changes for its next batch): every circuit closed,
        the run's remote time counted from zero."""
        if self.session.begin_run(run_id):
            for client in self.clients().values():
                client.breaker.new_run()

    def run_report(self) -> dict:
        """What the run's circuits did (each service whose circuit opened or refused a request:
        its state, openings, requests refused unsent, why it last opened) and its remote time."""
        services = {name: report for name, client in self.clients().items()
                    if (report := client.breaker.report())["openings"] or report["refused"]}
        return {"run_id": self.session.run_id, "services": services, **self.session.report()}

    def stop(self) -> None:
        """End every request now (``RemoteStopped``), and refuse every later one: an interrupt."""
        self.session.stop()

    def close(self) -> None:
        for client in (self.arxiv, self.crossref, self.files):
            if client is not None:
                client.http.close()  # closing twice (the e-prints share arXiv's client) is harmless
        if self.search is not None:
            for http, _ in self.search.clients.values():
                http.close()  # closing twice (a client shared with the lookups) is harmless


def build_remote(
    settings: RemoteSettings,
    *,
    transport: httpx.BaseTransport | None = None,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], None] | None = None,
    search_cache: SearchCache | None = None,
    eprint_max_bytes: int | None = None,
) -> RemoteResolver | None:
    """The facade for the enabled services, or None when remote resolution is off (default).
    A service's identifier lookups and searches share one polite client (one rate limit); with
    ``eprint_max_bytes``, so do arXiv's e-print and PDF downloads (``files``), each at most that big."""
    if not settings.enabled:
        return None
    session = RemoteSession(settings.max_run_seconds, **({"clock": clock} if clock is not None else {}))
    kwargs: dict = {"session": session}
    if transport is not None:
        kwargs["transport"] = transport
    if clock is not None:
        kwargs["clock"] = clock
    if sleep is not None:
        kwargs["sleep"] = sleep
    arxiv = crossref = None
    if "arxiv" in settings.enabled:
        arxiv = ArxivClient(
            make_http_client(settings, "arxiv", **kwargs),
            settings.endpoints.arxiv_api,
            settings.endpoints.arxiv_oai,
            batch_size=settings.arxiv_id_batch,
        )
    if "crossref" in settings.enabled:
        crossref = CrossrefClient(
            make_http_client(settings, "crossref", **kwargs), settings.endpoints.crossref_api, settings.mailto
        )
    files = None
    if eprint_max_bytes is not None:
        http = arxiv.http if arxiv is not None else make_http_client(settings, "arxiv", **kwargs)
        files = ArxivFiles(http, settings.endpoints.arxiv_eprint, settings.endpoints.arxiv_pdf, eprint_max_bytes)
    return RemoteResolver(arxiv, crossref, _search(settings, arxiv, crossref, kwargs, search_cache), files, session)


def _search(settings: RemoteSettings, arxiv: ArxivClient | None, crossref: CrossrefClient | None,
            kwargs: dict, cache: SearchCache | None) -> SearchResolver | None:
    """The search services that are on (``search.services`` that ``enabled`` names), or None."""
    clients: dict[str, tuple[PoliteClient, str]] = {}
    for service in settings.search.services:
        if service not in settings.enabled:
            continue
        if service == "crossref" and crossref is not None:
            clients[service] = (crossref.http, settings.endpoints.crossref_api)
        elif service == "arxiv" and arxiv is not None:
            clients[service] = (arxiv.http, settings.endpoints.arxiv_api)
        elif service == "openalex":
            clients[service] = (make_http_client(settings, "openalex", **kwargs), settings.endpoints.openalex_api)
    if not clients:
        return None
    return SearchResolver(clients, settings.search, settings.mailto, cache)
