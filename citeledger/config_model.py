"""The typed model that checks citeledger's settings (pydantic-settings): every key, its type and
its bounds. ``citeledger.config`` reads the sources and merges them; it hands the merged values to
``Settings`` when any of them needs checking, loading this module (and pydantic) only then, so a
command whose settings are all defaults or paths starts without it (docs/reference/configuration.md)."""
from __future__ import annotations

import os
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from citeledger.options import path_setting

REMOTE_SERVICES = ("arxiv", "crossref", "openalex")
SEARCH_SERVICES = ("crossref", "openalex", "arxiv")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Times are finite numbers of seconds within a sane maximum: ``inf`` or 1e308 for a timeout would
# let one stalled request hold a run forever. A request, its retries and a pause: a day at most;
# a run's remote time, a week.
DAY = 86_400.0
Seconds = Annotated[float, Field(gt=0, le=DAY, allow_inf_nan=False)]
Pause = Annotated[float, Field(ge=0, le=DAY, allow_inf_nan=False)]
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# an address whose parts hold no space, control character or second "@" (it goes into a header)
_ADDRESS = re.compile(r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f]+\.[^@\s\x00-\x1f\x7f-\x9f]+$")


class ServiceModel(_Section):
    min_interval_seconds: Pause
    max_concurrency: int = Field(ge=1)
    timeout_seconds: Seconds
    retries: int = Field(ge=0)
    backoff_base_seconds: Pause
    backoff_max_seconds: Pause
    max_retry_after_seconds: Pause
    circuit_failures: int = Field(ge=1)
    circuit_cooldown_seconds: Pause
    circuit_openings: int = Field(ge=1)
    max_body_bytes: int = Field(gt=0)
    max_file_bytes: int = Field(gt=0)
    deadline_seconds: Seconds
    max_redirects: int = Field(ge=0)
    min_bytes_per_second: float = Field(ge=0, allow_inf_nan=False)
    stall_seconds: Seconds


def _service_list(value: Any, known: tuple[str, ...]) -> tuple[str, ...]:
    """A list, or a comma-separated string (the environment's form), of known service names."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise ValueError(f"expected a list of services, got {value!r}")
    items = tuple(dict.fromkeys(str(v).strip().lower() for v in value if str(v).strip()))
    items = tuple(v for v in items if v != "none")
    unknown = sorted(set(items) - set(known))
    if unknown:
        raise ValueError(f"unknown service(s) {unknown}; known: {list(known)}")
    return items


class RemoteModel(_Section):
    enabled: frozenset[str]
    mailto: str | None
    private_mailto: bool
    max_run_seconds: float = Field(gt=0, le=7 * DAY, allow_inf_nan=False)
    arxiv: ServiceModel
    crossref: ServiceModel
    retraction_watch: ServiceModel
    openalex: ServiceModel
    grobid: ServiceModel

    @field_validator("enabled", mode="before")
    @classmethod
    def _enabled(cls, value: Any) -> frozenset[str]:
        return frozenset(_service_list(value, REMOTE_SERVICES))

    @field_validator("mailto", mode="before")
    @classmethod
    def _mailto(cls, value: Any) -> str | None:
        """An e-mail address, sent in the User-Agent header: a CR LF in it would break every request."""
        text = None if value is None else str(value).strip(" ")
        if text and not _ADDRESS.match(text):
            raise ValueError("expected an e-mail address (one @, no space or control character)")
        return text or None


class EndpointsModel(_Section):
    arxiv_api: str
    arxiv_oai: str
    crossref_api: str
    openalex_api: str
    retraction_watch_csv: str
    arxiv_eprint: str
    arxiv_pdf: str
    grobid: str | None

    @field_validator("*", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        """An http(s) URL with a host, no space or control character (it goes into every request line)."""
        if value is None:
            return None
        text = str(value)
        try:
            parts = urlsplit(text)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or _CONTROL.search(text) \
                or any(c.isspace() for c in text):
            raise ValueError("expected an http:// or https:// URL with a host, no space or control character")
        return text


class SearchModel(_Section):
    services: tuple[str, ...]
    rows: int = Field(ge=1)
    max_query_chars: int = Field(ge=1)
    min_chars: int = Field(ge=0)
    min_title_words: int = Field(ge=0)
    cache_days: float = Field(ge=0, le=36_500, allow_inf_nan=False)
    max_requests_per_run: int = Field(ge=0)
    nightly_request_budget: int = Field(ge=0)
    threads: int = Field(ge=1)

    @field_validator("services", mode="before")
    @classmethod
    def _services(cls, value: Any) -> tuple[str, ...]:
        return _service_list(value, SEARCH_SERVICES)


class LimitsModel(_Section):
    max_raw_chars: int = Field(ge=1)
    max_input_bytes: int = Field(ge=1)
    batch_size: int = Field(ge=1)
    arxiv_id_batch: int = Field(ge=1)


# DuckDB's units: KB, MB... are powers of 1000; KiB, MiB... of 1024
_UNITS = {f"{p}B": 1000.0 ** (i + 1) for i, p in enumerate("KMGT")} | {f"{p}IB": 1024.0 ** (i + 1)
                                                                      for i, p in enumerate("KMGT")}


def machine_memory() -> int | None:
    """The machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


_MEMORY_LIMIT = re.compile(r"^\s*(\d+(\.\d+)?)\s*(%|[KMGT]i?B)\s*$", re.IGNORECASE)


class QueryModel(_Section):
    timeout_seconds: Seconds
    memory_limit: str

    @field_validator("memory_limit")
    @classmethod
    def _memory(cls, value: str) -> str:
        match = _MEMORY_LIMIT.match(value)
        if not match or float(match.group(1)) <= 0 or (match.group(3) == "%" and float(match.group(1)) > 100):
            raise ValueError("expected a size such as '4GB', '512MiB' or '25%' (of RAM, at most 100%)")
        size = float(match.group(1)) * _UNITS.get(match.group(3).upper(), 0)
        memory = machine_memory()
        if memory and size > memory:
            raise ValueError(f"more than this machine's memory ({memory / 2**30:.1f} GiB); give a size "
                             "below it or a share ('25%')")
        return value


class PapersModel(_Section):
    max_total_bytes: int = Field(ge=1)
    max_members: int = Field(ge=1)
    max_member_bytes: int = Field(ge=1)
    max_input_depth: int = Field(ge=1)
    max_expanded_bytes: int = Field(ge=1)
    max_inputs: int = Field(ge=1)
    max_references: int = Field(ge=1)


class NightlyModel(_Section):
    roots: tuple[str, ...]

    @field_validator("roots", mode="before")
    @classmethod
    def _roots(cls, value: Any) -> tuple[str, ...]:
        """A list of folders, or (the environment's form) folders joined by the path separator."""
        if isinstance(value, str):
            value = [v for v in value.split(os.pathsep) if v.strip()]
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError("expected a list of one folder or more")
        return tuple(path_setting(v) for v in value)


class Settings(BaseSettings):
    """The whole configuration as one typed model; its sources are given by ``load_config``."""

    model_config = SettingsConfigDict(extra="forbid", frozen=True)

    ledger: str
    catalog: str
    state_dir: str
    remote: RemoteModel
    endpoints: EndpointsModel
    search: SearchModel
    limits: LimitsModel
    query: QueryModel
    papers: PapersModel
    nightly: NightlyModel

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)  # load_config hands the merged layers in; see Layer

    @field_validator("ledger", "catalog", "state_dir", mode="before")
    @classmethod
    def _path(cls, value: Any) -> str:
        return path_setting(value)
