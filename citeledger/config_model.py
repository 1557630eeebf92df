"""The typed model that checks citeledger's settings (pydantic-settings): every key, its type and
its bounds. ``citeledger.config`` reads the sources and merges them; it hands the merged values to
``Settings`` when any of them needs checking, loading this module (and pydantic) only then, so a
command whose settings are all defaults or paths starts without it (docs/configuration.md)."""
from __future__ import annotations

import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from citeledger.options import path_setting

REMOTE_SERVICES = ("arxiv", "crossref", "openalex")
SEARCH_SERVICES = ("crossref", "openalex", "arxiv")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServiceModel(_Section):
    min_interval_seconds: float = Field(ge=0)
    max_concurrency: int = Field(ge=1)
    timeout_seconds: float = Field(gt=0)
    retries: int = Field(ge=0)
    backoff_base_seconds: float = Field(ge=0)
    backoff_max_seconds: float = Field(ge=0)
    max_retry_after_seconds: float = Field(ge=0)
    circuit_failures: int = Field(ge=1)
    circuit_cooldown_seconds: float = Field(ge=0)
    circuit_openings: int = Field(ge=1)
    max_body_bytes: int = Field(gt=0)
    max_file_bytes: int = Field(gt=0)
    deadline_seconds: float = Field(gt=0)
    max_redirects: int = Field(ge=0)
    min_bytes_per_second: float = Field(ge=0)
    stall_seconds: float = Field(gt=0)


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
    max_run_seconds: float = Field(gt=0)
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
        text = None if value is None else str(value).strip()
        if text and "@" not in text:
            raise ValueError(f"{text!r} is not an e-mail address")
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


class SearchModel(_Section):
    services: tuple[str, ...]
    rows: int = Field(ge=1)
    max_query_chars: int = Field(ge=1)
    min_chars: int = Field(ge=0)
    min_title_words: int = Field(ge=0)
    cache_days: float = Field(ge=0)
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


_MEMORY_LIMIT = re.compile(r"^\s*(\d+(\.\d+)?)\s*(%|[KMGT]i?B)\s*$", re.IGNORECASE)


class QueryModel(_Section):
    timeout_seconds: float = Field(gt=0)
    memory_limit: str

    @field_validator("memory_limit")
    @classmethod
    def _memory(cls, value: str) -> str:
        match = _MEMORY_LIMIT.match(value)
        if not match or float(match.group(1)) <= 0 or (match.group(3) == "%" and float(match.group(1)) > 100):
            raise ValueError("expected a size such as '4GB', '512MiB' or '25%' (of RAM, at most 100%)")
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
