"""What the remote layer needs to know, as plain frozen values.

``citeledger.config`` reads these from the TOML file and the environment and hands a
``RemoteSettings`` to ``build_remote``; the remote layer never sees the application's
configuration, so ``resolvers/`` stays the bottom floor (it imports nothing from the app).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from resolvers.errors import ConfigError

MIB = 1024 * 1024
# ``resolver_source`` of a link made from a search service's answer, by service (kept here, beside the
# settings, so a run that searches nothing names them without loading the HTTP clients)
SEARCH_SOURCES = {"crossref": "crossref_search", "openalex": "openalex_search", "arxiv": "arxiv_search"}


@dataclass(frozen=True)
class ServiceSettings:
    """Politeness and fault tolerance for one remote service."""

    min_interval_seconds: float = 1.0  # between request starts, across all threads
    max_concurrency: int = 1
    timeout_seconds: float = 30.0
    retries: int = 3  # extra attempts after the first
    backoff_base_seconds: float = 1.0
    backoff_max_seconds: float = 60.0
    max_retry_after_seconds: float = 120.0  # a longer Retry-After opens the circuit (unavailable) at once
    circuit_failures: int = 5  # consecutive failed attempts that open the circuit
    circuit_cooldown_seconds: float = 60.0  # then one probe request; a stall or a refused pause opens it at once
    circuit_openings: int = 3  # openings in one run after which the circuit stays open for the rest of the run
    # the bounds of one answer (resolvers/remote/bounds.py); docs/reference/configuration.md gives the reasons
    max_body_bytes: int = 64 * MIB  # decoded bytes of one answer; past it: unavailable, the rest unread
    max_file_bytes: int = 256 * MIB  # a whole file fetched (arXiv e-print, PDF) or sent (a PDF to GROBID)
    deadline_seconds: float = 180.0  # one request in all: connects, reads, retries' sleeps
    max_redirects: int = 3  # followed within the same host only; 0: none
    # an answer (headers and body) must keep this rate over every ``stall_seconds`` from its first
    # byte, or it is cut as a stall: a trickle ends in seconds, not at the deadline
    min_bytes_per_second: float = 1024.0
    stall_seconds: float = 10.0

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_file_bytes", "deadline_seconds", "stall_seconds"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: must be > 0, got {getattr(self, name)!r}")
        if self.max_redirects < 0:
            raise ConfigError(f"max_redirects: must be >= 0, got {self.max_redirects!r}")


@dataclass(frozen=True)
class Endpoints:
    """Base URLs of the remote services; configurable so tests point them at a local server."""

    arxiv_api: str = "https://export.arxiv.org/api/query"
    arxiv_oai: str = "https://oaipmh.arxiv.org/oai"  # moved from export.arxiv.org/oai2 in 2025
    crossref_api: str = "https://api.crossref.org"
    openalex_api: str = "https://api.openalex.org"
    retraction_watch_csv: str = (
        "https://gitlab.com/crossref/retraction-watch-data/-/raw/main/retraction_watch.csv"
    )
    # + "/ID": the source as submitted, and the PDF; export.arxiv.org, where arXiv's bulk-access page
    # sends automated fetching (arxiv.org/e-print/ID is the same file)
    arxiv_eprint: str = "https://export.arxiv.org/e-print"
    arxiv_pdf: str = "https://export.arxiv.org/pdf"
    grobid: str | None = None  # the user's GROBID service (http://localhost:8070); None: PDFs are not read


# arXiv's API terms: no more than one request every three seconds, one connection at a time. The
# client also fetches e-prints (tens of MB for papers with figures): its deadline leaves room for one.
ARXIV_DEFAULTS = ServiceSettings(min_interval_seconds=3.0, max_concurrency=1, timeout_seconds=30.0,
                                 deadline_seconds=300.0)
# Crossref allows about 5 requests/s without a key (10 in the polite pool): we stay at 5 with a mailto.
CROSSREF_POLITE_INTERVAL = 0.2  # 5 requests/s: the rate Crossref asks of tools
# a harvest page holds 1,000 works with their reference lists: tens of MB
CROSSREF_DEFAULTS = ServiceSettings(
    min_interval_seconds=CROSSREF_POLITE_INTERVAL, max_concurrency=3, timeout_seconds=20.0,
    max_body_bytes=128 * MIB, deadline_seconds=120.0,
)
# OpenAlex: 10 requests/s (and 100,000 a day) per user; the ``mailto`` puts us in its polite pool.
OPENALEX_DEFAULTS = ServiceSettings(min_interval_seconds=0.1, max_concurrency=3, timeout_seconds=20.0,
                                    max_body_bytes=16 * MIB, deadline_seconds=120.0)
# the Retraction Watch export (about 60 MB of CSV in 2025) is streamed to disk, not held
RETRACTION_WATCH_DEFAULTS = ServiceSettings(
    min_interval_seconds=1.0, max_concurrency=1, timeout_seconds=300.0, retries=2,
    max_body_bytes=1024 * MIB, deadline_seconds=1800.0,
)
# GROBID is the user's own service: no rate limit, two PDFs at a time (its 503 says "busy, wait";
# its own docs suggest a few seconds), and time for a long PDF on a CPU. Its answer is the TEI of
# the references (about a megabyte for a long reference list).
GROBID_DEFAULTS = ServiceSettings(
    min_interval_seconds=0.0, max_concurrency=2, timeout_seconds=120.0, retries=3, backoff_base_seconds=2.0,
    max_body_bytes=32 * MIB, deadline_seconds=600.0,
)


@dataclass(frozen=True)
class SearchSettings:
    """Search-based matching: which services are asked, in which order, and how much.

    A reference is sent only when it is usable, carries no well-formed identifier, the local chain
    left it without a link, and it has a title-like span of ``min_title_words`` words and at least
    ``min_chars`` characters. The services are asked in ``services`` order until one gives a
    verified link (or a too-close call); each answer is cached on disk for ``cache_days``.
    """

    services: tuple[str, ...] = ("crossref", "openalex", "arxiv")  # asked in this order, if enabled
    rows: int = 5  # candidates asked of each service
    max_query_chars: int = 300  # the cleaned string is cut here (word boundary)
    min_chars: int = 30  # shorter strings are not sent
    min_title_words: int = 3  # words of a title-like span a string must have to be sent
    cache_days: float = 30.0  # a cached answer older than this is asked again
    max_requests_per_run: int = 0  # 0: no limit (``citeledger resolve --remote``)
    nightly_request_budget: int = 2000  # the nightly run's search requests, all services together
    threads: int = 8  # references searched at once within a batch (the rate limits still hold)


# A nightly of 10,000 new references asks arXiv about 200 id batches (10 minutes at its one request
# every 3 s) and spends its search budget of 2,000 requests (7 minutes at Crossref's 5/s, up to 100
# at arXiv's pace): three hours bound a night whose services are slow but answering, and leave the
# rest of the day before the next night.
MAX_RUN_SECONDS = 3 * 3600.0


@dataclass(frozen=True)
class RemoteSettings:
    """Which services are on, how politely to call each, and where they live."""

    enabled: frozenset[str] = frozenset()  # default: none, so no client is ever created
    mailto: str | None = None
    private_mailto: bool = False  # the contact is sent to the services only, never printed or stored
    arxiv: ServiceSettings = ARXIV_DEFAULTS
    crossref: ServiceSettings = CROSSREF_DEFAULTS
    retraction_watch: ServiceSettings = RETRACTION_WATCH_DEFAULTS
    openalex: ServiceSettings = OPENALEX_DEFAULTS
    grobid: ServiceSettings = GROBID_DEFAULTS
    endpoints: Endpoints = field(default_factory=Endpoints)
    arxiv_id_batch: int = 50  # ids per arXiv id_list query
    search: SearchSettings = field(default_factory=SearchSettings)
    # the run's remote time in all (while any request of the run waits or is in flight); past it
    # every further request of the run is refused: its references are unavailable, asked next run
    max_run_seconds: float = MAX_RUN_SECONDS

    def service(self, name: str) -> ServiceSettings:
        settings: ServiceSettings = getattr(self, name)
        return settings
