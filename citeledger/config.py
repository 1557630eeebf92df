"""citeledger's settings: one typed model (pydantic-settings) fed by four sources.

Precedence, later winning: built-in defaults < the TOML file < ``CITELEDGER_*`` environment
variables < the command line. The file is ``--config PATH`` (``load_config(path)``), else
``$CITELEDGER_CONFIG``, else ``citeledger.toml`` in the working directory, else none. Defaults
are safe: every remote resolver is off, so a default run opens no network connection. Every key,
its variable and its default are in ``docs/configuration.md``; ``citeledger config show`` prints
the effective settings and where each came from.

``load_config`` returns the frozen ``Config`` the library takes; ``Config.origins`` names the
source of every setting (``default``, ``file PATH``, ``env NAME``, ``cli --option``).
"""
from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

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
CROSSREF_PUBLIC_INTERVAL = 0.5  # Crossref without a contact address: the public pool, slower
CROSSREF_PUBLIC_CONCURRENCY = 1
_SERVICE_DEFAULTS = {"arxiv": ARXIV_DEFAULTS, "crossref": CROSSREF_DEFAULTS, "openalex": OPENALEX_DEFAULTS,
                     "retraction_watch": RETRACTION_WATCH_DEFAULTS, "grobid": GROBID_DEFAULTS}


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
    # where each setting came from, by its dotted key (``limits.batch_size``): default, file, env, cli
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def service(self, name: str) -> ServiceSettings:
        return getattr(self, name)

    def remote_settings(self) -> RemoteSettings:
        """The plain settings the remote layer takes (it never sees this Config)."""
        return RemoteSettings(
            enabled=self.remote, mailto=self.mailto, arxiv=self.arxiv, crossref=self.crossref,
            retraction_watch=self.retraction_watch, openalex=self.openalex, grobid=self.grobid,
            endpoints=self.endpoints,
            arxiv_id_batch=self.limits.arxiv_id_batch, search=self.search,
        )


# -- the typed model ---------------------------------------------------------------------------

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
    max_body_bytes: int = Field(gt=0)
    max_file_bytes: int = Field(gt=0)
    deadline_seconds: float = Field(gt=0)
    max_redirects: int = Field(ge=0)


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


class Settings(BaseSettings):
    """The whole configuration as one typed model; its sources are given by ``load_config``."""

    model_config = SettingsConfigDict(extra="forbid", frozen=True)

    state_dir: str
    remote: RemoteModel
    endpoints: EndpointsModel
    search: SearchModel
    limits: LimitsModel
    query: QueryModel
    papers: PapersModel

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)  # load_config hands the merged layers in; see Layer


# -- the sources ---------------------------------------------------------------------------------

def _flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, last = key.split(".")
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return out


def default_values() -> dict[str, Any]:
    """Every setting's built-in default, nested as in the TOML file."""
    remote: dict[str, Any] = {"enabled": [], "mailto": None}
    remote.update({name: dataclasses.asdict(s) for name, s in _SERVICE_DEFAULTS.items()})
    return {"state_dir": Config.state_dir, "remote": remote, "endpoints": dataclasses.asdict(Endpoints()),
            "search": {**dataclasses.asdict(SearchSettings()), "services": list(SearchSettings().services)},
            "limits": dataclasses.asdict(ResourceLimits()), "query": dataclasses.asdict(QueryLimits()),
            "papers": dataclasses.asdict(PaperLimits())}


_ENDPOINT_ENV = {"arxiv_api": "CITELEDGER_ARXIV_URL", "arxiv_oai": "CITELEDGER_ARXIV_OAI_URL",
                 "crossref_api": "CITELEDGER_CROSSREF_URL", "openalex_api": "CITELEDGER_OPENALEX_URL",
                 "retraction_watch_csv": "CITELEDGER_RETRACTION_WATCH_URL",
                 "arxiv_eprint": "CITELEDGER_ARXIV_EPRINT_URL", "arxiv_pdf": "CITELEDGER_ARXIV_PDF_URL",
                 "grobid": "CITELEDGER_GROBID_URL"}


def env_names() -> dict[str, str]:
    """The environment variable of every setting, by dotted key (``limits.batch_size`` ->
    ``CITELEDGER_BATCH_SIZE``)."""
    names = {"remote.enabled": "CITELEDGER_REMOTE", "remote.mailto": "CITELEDGER_MAILTO",
             "state_dir": "CITELEDGER_STATE_DIR"}
    names.update({f"endpoints.{k}": v for k, v in _ENDPOINT_ENV.items()})
    defaults = default_values()
    for name in SERVICES:
        names.update({f"remote.{name}.{k}": f"CITELEDGER_{name.upper()}_{k.upper()}" for k in defaults["remote"][name]})
    for section, prefix in (("limits", "CITELEDGER_"), ("query", "CITELEDGER_QUERY_"),
                            ("papers", "CITELEDGER_PAPERS_"), ("search", "CITELEDGER_SEARCH_")):
        names.update({f"{section}.{k}": f"{prefix}{k.upper()}" for k in defaults[section]})
    return names


@dataclass(frozen=True)
class Layer:
    """One source of settings: its name (``file PATH``, ``env``, ``cli``, ``default``) and the
    values it sets, by dotted key, each with its own label for ``config show``."""

    values: dict[str, Any]
    labels: dict[str, str]


def read_config_file(file: Path | None) -> Layer:
    if file is None:
        return Layer({}, {})
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"config file {file}: cannot be read ({exc.strerror})") from None
    values = _flat(data)
    return Layer(values, {k: f"file {file}" for k in values})


def _env_layer(env: Mapping[str, str]) -> Layer:
    values: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for key, name in env_names().items():
        if name not in env:
            continue
        if key.startswith("endpoints.") and not env[name]:
            continue  # an empty URL variable leaves the endpoint as it was
        values[key] = env[name]
        labels[key] = f"env {name}"
    return Layer(values, labels)


def _default_layer(public_crossref: bool) -> Layer:
    values = _flat(default_values())
    labels = {k: "default" for k in values}
    if public_crossref:  # no contact address: Crossref's public pool, slower, unless set
        values["remote.crossref.min_interval_seconds"] = CROSSREF_PUBLIC_INTERVAL
        values["remote.crossref.max_concurrency"] = CROSSREF_PUBLIC_CONCURRENCY
        for key in ("remote.crossref.min_interval_seconds", "remote.crossref.max_concurrency"):
            labels[key] = "default (no remote.mailto: Crossref's public pool)"
    return Layer(values, labels)


def find_config_file(path: str | os.PathLike | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The explicit path, else $CITELEDGER_CONFIG, else ./citeledger.toml if present."""
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"--config {p}: no such file")
        return p
    if env.get("CITELEDGER_CONFIG"):
        p = Path(env["CITELEDGER_CONFIG"])
        if not p.is_file():
            raise ConfigError(f"CITELEDGER_CONFIG={p}: no such file")
        return p
    p = cwd / CONFIG_FILE_NAME
    return p if p.is_file() else None


def load_config(
    path: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
    cli: Mapping[str, Any] | None = None,
) -> Config:
    """Defaults < the TOML file < environment variables < ``cli`` (dotted keys such as
    ``{"limits.batch_size": 500}``, each the value of a command-line option; None values are not
    given). A value of the wrong type or out of range is a ``ConfigError`` naming the setting and
    where it came from."""
    env = os.environ if env is None else env
    if path is None and cli_config_path() is not None and env is os.environ:
        path = cli_config_path()
    file = find_config_file(path, env, Path.cwd() if cwd is None else Path(cwd))
    given = {k: v for k, v in (cli or {}).items() if v is not None}
    layers = [_default_layer(False), read_config_file(file), _env_layer(env),
              Layer(given, {k: f"cli {CLI_OPTIONS.get(k, k)}" for k in given})]
    mailto = next((lay.values["remote.mailto"] for lay in reversed(layers) if "remote.mailto" in lay.values), None)
    if not str(mailto or "").strip():
        layers[0] = _default_layer(True)
    merged: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for layer in layers:
        merged.update(layer.values)
        labels.update(layer.labels)
    for key in merged:  # a section given as a value (``remote = 3``) would hide its settings
        if any(other.startswith(key + ".") for other in merged):
            raise ConfigError(f"{key}: expected a table, got {merged[key]!r} ({labels[key]})")
    try:
        settings = Settings(**_nest(merged))
    except ValidationError as exc:
        raise ConfigError(_first_error(exc, labels)) from None
    return _to_config(settings, str(file) if file else None, labels)


# The command-line options that set a setting (``config show`` names them as the source).
CLI_OPTIONS = {"limits.batch_size": "--batch-size", "endpoints.grobid": "--grobid"}
_CLI_CONFIG: list[str] = []  # the ``--config`` of this command, when given


def use_cli_config(path: str | os.PathLike) -> None:
    """``--config PATH`` for the rest of this command: every ``load_config()`` reads it, and so do
    processes this one starts (through ``CITELEDGER_CONFIG``)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"--config {p}: no such file")
    _CLI_CONFIG[:] = [str(p)]
    os.environ["CITELEDGER_CONFIG"] = str(p.resolve())


def cli_config_path() -> str | None:
    return _CLI_CONFIG[0] if _CLI_CONFIG else None


def _first_error(exc: ValidationError, labels: Mapping[str, str]) -> str:
    """One line: the setting, what is wrong, the value and where it came from."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"] if not isinstance(part, int)]
    key = ".".join(loc)
    origin = labels.get(key) or next((labels[k] for k in labels if k.startswith(key + ".")), "default")
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "extra_forbidden":
        known = sorted(_flat(default_values()))
        section = key.rsplit(".", 1)[0] if "." in key else ""
        near = [k.removeprefix(section + ".") for k in known if k.startswith(section + ".")] if section else \
            sorted({k.split(".")[0] for k in known})
        return f"{key}: unknown setting ({origin}); known here: {', '.join(dict.fromkeys(near))}"
    if kind == "greater_than_equal":
        what = f"must be >= {ctx['ge']:g}"
    elif kind == "greater_than":
        what = f"must be > {ctx['gt']:g}"
    elif kind == "value_error":
        what = str(ctx.get("error", error["msg"]))
    else:
        what = error["msg"][0].lower() + error["msg"][1:]
    return f"{key}: {what}, got {error.get('input')!r} ({origin})"


def _to_config(settings: Settings, source: str | None, labels: dict[str, str]) -> Config:
    remote = settings.remote
    services = {name: ServiceSettings(**getattr(remote, name).model_dump()) for name in SERVICES}
    return Config(
        remote=remote.enabled, mailto=remote.mailto, **services,
        search=SearchSettings(**settings.search.model_dump()),
        endpoints=Endpoints(**settings.endpoints.model_dump()),
        limits=ResourceLimits(**settings.limits.model_dump()), query=QueryLimits(**settings.query.model_dump()),
        papers=PaperLimits(**settings.papers.model_dump()), state_dir=settings.state_dir, source=source,
        origins=labels)


def effective_settings(config: Config) -> list[tuple[str, Any, str]]:
    """(dotted key, value, source) of every setting, in the file's order (``config show``)."""
    values = {"state_dir": config.state_dir, "remote.enabled": sorted(config.remote), "remote.mailto": config.mailto}
    for name in SERVICES:
        values.update({f"remote.{name}.{k}": v for k, v in dataclasses.asdict(config.service(name)).items()})
    for section in ("endpoints", "search", "limits", "query", "papers"):
        values.update({f"{section}.{k}": v for k, v in dataclasses.asdict(getattr(config, section)).items()})
    values["search.services"] = list(config.search.services)
    return [(key, value, config.origins.get(key, "default")) for key, value in values.items()]
