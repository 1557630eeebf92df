"""citeledger's configuration, in one place: a TOML file plus environment variables.

Where the file comes from: ``load_config(path)`` (the CLI's ``--config``), else the
``CITELEDGER_CONFIG`` variable, else ``citeledger.toml`` in the working directory, else none.
Environment variables override the file. Defaults are safe: every remote resolver is off, so a
default run opens no network connection. Every key is documented in ``docs/configuration.md``.
"""
from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from citeledger.options import at_least
from papers import PaperLimits
from resolvers.errors import ConfigError
from resolvers.remote.settings import (  # noqa: F401 (re-exported: the types config files fill)
    ARXIV_DEFAULTS,
    CROSSREF_DEFAULTS,
    CROSSREF_POLITE_INTERVAL,
    GROBID_DEFAULTS,
    OPENALEX_DEFAULTS,
    RETRACTION_WATCH_DEFAULTS,
    Endpoints,
    RemoteSettings,
    SearchSettings,
    ServiceSettings,
)

REMOTE_SERVICES = ("arxiv", "crossref", "openalex")
SERVICES = ("arxiv", "crossref", "retraction_watch", "openalex", "grobid")
SEARCH_SERVICES = ("crossref", "openalex", "arxiv")
CONFIG_FILE_NAME = "citeledger.toml"


# The remote layer's own settings types live in resolvers.remote.settings (the bottom floor);
# this module builds them from the TOML file and the environment.
CROSSREF_PUBLIC_INTERVAL = 0.5
CROSSREF_PUBLIC_CONCURRENCY = 1


@dataclass(frozen=True)
class ResourceLimits:
    """Bounds that keep one bad input from exhausting memory or a remote service."""

    max_raw_chars: int = 100_000  # longer reference strings are rejected
    max_input_bytes: int = 2 * 1024**3  # larger input files are refused
    batch_size: int = 1000  # references per resolution batch
    arxiv_id_batch: int = 50  # ids per arXiv id_list query


@dataclass(frozen=True)
class QueryLimits:
    """Bounds of one ``citeledger query``: a runaway query ends with an error, not a full machine."""

    timeout_seconds: float = 300.0  # the query is interrupted after this long
    memory_limit: str = "25%"  # DuckDB's memory_limit: "4GB", "512MiB", or a share of RAM ("25%")


_MEMORY_LIMIT = re.compile(r"^\s*(\d+(\.\d+)?)\s*(%|[KMGT]i?B)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Config:
    """Everything configurable. Frozen: build a new one with ``dataclasses.replace``."""

    remote: frozenset[str] = frozenset()  # which remote resolvers are on; default none
    mailto: str | None = None
    arxiv: ServiceSettings = ARXIV_DEFAULTS
    crossref: ServiceSettings = CROSSREF_DEFAULTS
    retraction_watch: ServiceSettings = RETRACTION_WATCH_DEFAULTS
    openalex: ServiceSettings = OPENALEX_DEFAULTS
    search: SearchSettings = field(default_factory=SearchSettings)
    grobid: ServiceSettings = GROBID_DEFAULTS  # politeness towards endpoints.grobid, when set
    endpoints: Endpoints = field(default_factory=Endpoints)
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    query: QueryLimits = field(default_factory=QueryLimits)
    papers: PaperLimits = field(default_factory=PaperLimits)  # [papers]: bounds on one paper (archive bombs)
    state_dir: str = "data/state"  # harvest checkpoints and download validators
    source: str | None = None  # the file this came from, for error messages

    def service(self, name: str) -> ServiceSettings:
        return getattr(self, name)

    def remote_settings(self) -> RemoteSettings:
        """The plain settings the remote layer takes (it never sees this Config)."""
        return RemoteSettings(
            enabled=self.remote, mailto=self.mailto, arxiv=self.arxiv, crossref=self.crossref,
            retraction_watch=self.retraction_watch, openalex=self.openalex, grobid=self.grobid, endpoints=self.endpoints,
            arxiv_id_batch=self.limits.arxiv_id_batch, search=self.search,
        )


# -- loading ----------------------------------------------------------------------------------

_ENV_ENDPOINTS = {
    "CITELEDGER_ARXIV_URL": "arxiv_api",
    "CITELEDGER_ARXIV_OAI_URL": "arxiv_oai",
    "CITELEDGER_CROSSREF_URL": "crossref_api",
    "CITELEDGER_OPENALEX_URL": "openalex_api",
    "CITELEDGER_RETRACTION_WATCH_URL": "retraction_watch_csv",
    "CITELEDGER_ARXIV_EPRINT_URL": "arxiv_eprint",
    "CITELEDGER_ARXIV_PDF_URL": "arxiv_pdf",
    "CITELEDGER_GROBID_URL": "grobid",
}


def _coerce(value: Any, like: Any, where: str) -> Any:
    """Convert a file or environment value to the type of the default, or say which key is wrong."""
    target = type(like)
    try:
        if target is bool:
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if target is int:
            if isinstance(value, float) or isinstance(value, bool):
                raise ValueError(value)
            return int(value)
        if target is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        if target is str or like is None:
            return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected {target.__name__}, got {value!r}") from None
    return value


def _merge(obj: Any, values: Mapping[str, Any], where: str) -> Any:
    """Replace fields of a frozen dataclass from a mapping; unknown keys are errors (typos)."""
    names = {f.name for f in dataclasses.fields(obj)}
    changes = {}
    for key, value in values.items():
        if key not in names:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(sorted(names))})")
        changes[key] = _coerce(value, getattr(obj, key), f"{where}.{key}")
    return dataclasses.replace(obj, **changes)


def _parse_remote(value: Any, where: str) -> frozenset[str]:
    if isinstance(value, str):
        items = [v.strip().lower() for v in value.split(",")]
    elif isinstance(value, (list, tuple)):
        items = [str(v).strip().lower() for v in value]
    else:
        raise ConfigError(f"{where}: expected a list of services, got {value!r}")
    items = [v for v in items if v and v != "none"]
    unknown = sorted(set(items) - set(REMOTE_SERVICES))
    if unknown:
        raise ConfigError(f"{where}: unknown remote resolver(s) {unknown}; known: {list(REMOTE_SERVICES)}")
    return frozenset(items)


def _validate(config: Config) -> None:
    for name in SERVICES:
        s = config.service(name)
        where = f"remote.{name}"
        if s.min_interval_seconds < 0 or s.timeout_seconds <= 0:
            raise ConfigError(f"{where}: min_interval_seconds must be >= 0 and timeout_seconds > 0")
        if s.max_concurrency < 1 or s.retries < 0 or s.circuit_failures < 1:
            raise ConfigError(f"{where}: max_concurrency and circuit_failures must be >= 1, retries >= 0")
    for section in ("limits", "papers"):
        values = getattr(config, section)
        for f in dataclasses.fields(values):
            at_least(f"{section}.{f.name}", getattr(values, f.name), 1)
    _validate_query(config.query)
    _validate_search(config.search)
    if config.mailto is not None and "@" not in config.mailto:
        raise ConfigError(f"mailto: {config.mailto!r} is not an e-mail address")


def _validate_query(query: QueryLimits) -> None:
    if not query.timeout_seconds > 0:
        raise ConfigError(f"query.timeout_seconds: must be > 0, got {query.timeout_seconds}")
    match = _MEMORY_LIMIT.match(query.memory_limit)
    if not match or float(match.group(1)) <= 0 or (match.group(3) == "%" and float(match.group(1)) > 100):
        raise ConfigError(f"query.memory_limit: expected a size such as '4GB', '512MiB' or '25%' (of RAM, "
                          f"at most 100%), got {query.memory_limit!r}")


def _validate_search(search: SearchSettings) -> None:
    for name in ("rows", "max_query_chars", "threads"):
        at_least(f"search.{name}", getattr(search, name), 1)
    for name in ("min_chars", "min_title_words", "max_requests_per_run", "nightly_request_budget"):
        at_least(f"search.{name}", getattr(search, name), 0)
    if search.cache_days < 0:
        raise ConfigError(f"search.cache_days: must be >= 0, got {search.cache_days}")


def _search_changes(config: Config, values: Mapping[str, Any], where: str) -> SearchSettings:
    """The ``[search]`` table (or ``CITELEDGER_SEARCH_*``): ``services`` is a list (or a
    comma-separated string) of ``crossref``, ``openalex``, ``arxiv``, in the order to ask them."""
    values = dict(values)
    services = None
    if "services" in values:
        raw = values.pop("services")
        items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, (list, tuple)) else None
        if items is None:
            raise ConfigError(f"{where}.services: expected a list of services, got {raw!r}")
        services = tuple(dict.fromkeys(str(i).strip().lower() for i in items if str(i).strip()))
        unknown = sorted(set(services) - set(SEARCH_SERVICES))
        if unknown:
            raise ConfigError(f"{where}.services: unknown service(s) {unknown}; known: {list(SEARCH_SERVICES)}")
    merged = _merge(config.search, values, where)
    return merged if services is None else dataclasses.replace(merged, services=services)


def find_config_file(path: str | os.PathLike | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The explicit path, else $CITELEDGER_CONFIG, else ./citeledger.toml if present."""
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file {p} does not exist")
        return p
    if env.get("CITELEDGER_CONFIG"):
        p = Path(env["CITELEDGER_CONFIG"])
        if not p.is_file():
            raise ConfigError(f"CITELEDGER_CONFIG={p} does not exist")
        return p
    p = cwd / CONFIG_FILE_NAME
    return p if p.is_file() else None


def load_config(
    path: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
) -> Config:
    """Defaults, then the TOML file, then environment variables (which win)."""
    env = os.environ if env is None else env
    file = find_config_file(path, env, Path.cwd() if cwd is None else Path(cwd))
    data = _read_toml(file)
    config = Config(source=str(file) if file else None)
    crossref_set: set[str] = set()  # the Crossref settings someone chose (file or environment)
    config = dataclasses.replace(config, **_file_changes(config, data, file, crossref_set))
    config = dataclasses.replace(config, **_env_changes(config, env, crossref_set))
    # Crossref without a contact address is the public pool: slow down unless told otherwise.
    if not config.mailto:
        public = {"min_interval_seconds": CROSSREF_PUBLIC_INTERVAL, "max_concurrency": CROSSREF_PUBLIC_CONCURRENCY}
        public = {k: v for k, v in public.items() if k not in crossref_set}
        config = dataclasses.replace(config, crossref=dataclasses.replace(config.crossref, **public))
    _validate(config)
    return config


def _read_toml(file: Path | None) -> dict[str, Any]:
    if file is None:
        return {}
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None


def _file_changes(config: Config, data: dict[str, Any], file: Path | None, crossref_set: set[str]) -> dict[str, Any]:
    """The settings the TOML file changes (Crossref keys it sets go into ``crossref_set``)."""
    unknown_top = set(data) - {"remote", "endpoints", "limits", "query", "papers", "state_dir", "search"}
    if unknown_top:
        raise ConfigError(f"{file}: unknown section(s) {sorted(unknown_top)}")
    remote = dict(data.get("remote", {}))
    changes: dict[str, Any] = {}
    if "enabled" in remote:
        changes["remote"] = _parse_remote(remote.pop("enabled"), "remote.enabled")
    if "mailto" in remote:
        changes["mailto"] = str(remote.pop("mailto")) or None
    for name in SERVICES:
        if name in remote:
            section = remote.pop(name)
            if not isinstance(section, dict):
                raise ConfigError(f"remote.{name}: expected a table")
            if name == "crossref":
                crossref_set |= set(section)
            changes[name] = _merge(getattr(config, name), section, f"remote.{name}")
    if remote:
        raise ConfigError(f"remote: unknown key(s) {sorted(remote)}")
    for section_name in ("endpoints", "limits", "query", "papers"):
        if section_name in data:
            changes[section_name] = _merge(getattr(config, section_name), data[section_name], section_name)
    if "state_dir" in data:
        changes["state_dir"] = str(data["state_dir"])
    if "search" in data:
        if not isinstance(data["search"], dict):
            raise ConfigError(f"{file}: search: expected a table")
        changes["search"] = _search_changes(config, data["search"], "search")
    return changes


def _env_changes(config: Config, env: Mapping[str, str], crossref_set: set[str]) -> dict[str, Any]:
    """The settings environment variables change (they override the file)."""
    changes: dict[str, Any] = {}
    if "CITELEDGER_REMOTE" in env:
        changes["remote"] = _parse_remote(env["CITELEDGER_REMOTE"], "CITELEDGER_REMOTE")
    if "CITELEDGER_MAILTO" in env:
        changes["mailto"] = env["CITELEDGER_MAILTO"].strip() or None
    if "CITELEDGER_STATE_DIR" in env:
        changes["state_dir"] = env["CITELEDGER_STATE_DIR"]
    endpoint_env = {field_: env[var] for var, field_ in _ENV_ENDPOINTS.items() if env.get(var)}
    if endpoint_env:
        changes["endpoints"] = _merge(config.endpoints, endpoint_env, "environment")
    for name in SERVICES:
        prefix = f"CITELEDGER_{name.upper()}_"
        values = {f.name: env[prefix + f.name.upper()] for f in dataclasses.fields(ServiceSettings)
                  if prefix + f.name.upper() in env}
        if values:
            if name == "crossref":
                crossref_set |= set(values)
            changes[name] = _merge(getattr(config, name), values, prefix.rstrip("_"))
    for section_name, settings, prefix in (("limits", ResourceLimits, "CITELEDGER_"),
                                           ("query", QueryLimits, "CITELEDGER_QUERY_"),
                                           ("papers", PaperLimits, "CITELEDGER_PAPERS_")):
        values = {f.name: env[f"{prefix}{f.name.upper()}"] for f in dataclasses.fields(settings)
                  if f"{prefix}{f.name.upper()}" in env}
        if values:
            changes[section_name] = _merge(getattr(config, section_name), values, "environment")
    search_env = {f.name: env[f"CITELEDGER_SEARCH_{f.name.upper()}"] for f in dataclasses.fields(SearchSettings)
                  if f"CITELEDGER_SEARCH_{f.name.upper()}" in env}
    if search_env:
        changes["search"] = _search_changes(config, search_env, "environment")
    return changes
