"""citeledger's settings: one typed model (pydantic-settings, ``config_model``) fed by four sources.

Precedence, later winning: built-in defaults < the TOML file < ``CITELEDGER_*`` environment
variables < the command line. The file is ``--config PATH`` (``load_config(path)``), else
``$CITELEDGER_CONFIG``, else ``citeledger.toml`` in the working directory, else none. Defaults
are safe: every remote resolver is off, so a default run opens no network connection. Every key,
its variable and its default are in ``docs/reference/configuration.md``; ``citeledger config show`` prints
the effective settings and where each came from, the ledger and the catalog first.

Paths (``ledger``, ``catalog``, ``state_dir``) given in a settings file are relative to that file's
folder; in the environment or on the command line, to the working directory. They are checked by
``options.path_setting`` here and in the model; when nothing but paths is given (no file, or a file of
paths only), the settings are the defaults and those paths, and the model (with pydantic) is not
loaded: a command such as ``citeledger query`` starts without it.

``load_config`` returns the frozen ``Config`` the library takes; ``Config.origins`` names the
source of every setting (``default``, ``file PATH``, ``env NAME``, ``cli --option``).
"""
from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from citeledger.options import DEFAULT_CATALOG, DEFAULT_LEDGER, path_setting
from papers.paper_model import PaperLimits
from resolvers.errors import ConfigError
from resolvers.redaction import HIDDEN, redact
from resolvers.remote.settings import (  # noqa: F401 (re-exported: the types config files fill)
    ARXIV_DEFAULTS,
    CROSSREF_DEFAULTS,
    CROSSREF_POLITE_INTERVAL,
    GROBID_DEFAULTS,
    MAX_RUN_SECONDS,
    OPENALEX_DEFAULTS,
    RETRACTION_WATCH_DEFAULTS,
    Endpoints,
    RemoteSettings,
    SearchSettings,
    ServiceSettings,
)

SERVICES = ("arxiv", "crossref", "retraction_watch", "openalex", "grobid")
MAX_SETTINGS_DEPTH = 8  # the deepest setting is a list in a table in a table: remote.<service>.<key>
PATH_KEYS = ("ledger", "catalog", "state_dir")  # in a settings file: relative to the file's folder
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

    ledger: str = DEFAULT_LEDGER  # the ledger folder of every command that takes --ledger
    catalog: str = DEFAULT_CATALOG  # the catalog folder of every command that takes --catalog
    remote: frozenset[str] = frozenset()  # which remote resolvers are on; default none
    mailto: str | None = None
    private_mailto: bool = False  # the contact sent to the services only, hidden in what is printed or stored
    max_run_seconds: float = MAX_RUN_SECONDS  # a run's remote time in all (resolvers/remote/guard/session.py)
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
    nightly_roots: tuple[str, ...] = ("data",)  # folders a nightly's own must lie under (citeledger/nightly/folders.py)
    source: str | None = None  # the file this came from, for error messages
    # where each setting came from, by its dotted key (``limits.batch_size``): default, file, env, cli
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def service(self, name: str) -> ServiceSettings:
        return getattr(self, name)

    def remote_settings(self) -> RemoteSettings:
        """The plain settings the remote layer takes (it never sees this Config)."""
        return RemoteSettings(
            enabled=self.remote, mailto=self.mailto, private_mailto=self.private_mailto, arxiv=self.arxiv,
            crossref=self.crossref, retraction_watch=self.retraction_watch, openalex=self.openalex, grobid=self.grobid,
            endpoints=self.endpoints,
            arxiv_id_batch=self.limits.arxiv_id_batch, search=self.search, max_run_seconds=self.max_run_seconds,
        )


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
    remote: dict[str, Any] = {"enabled": [], "mailto": None, "private_mailto": False,
                              "max_run_seconds": MAX_RUN_SECONDS}
    remote.update({name: dataclasses.asdict(s) for name, s in _SERVICE_DEFAULTS.items()})
    return {"ledger": Config.ledger, "catalog": Config.catalog, "state_dir": Config.state_dir, "remote": remote,
            "endpoints": dataclasses.asdict(Endpoints()),
            "search": {**dataclasses.asdict(SearchSettings()), "services": list(SearchSettings().services)},
            "limits": dataclasses.asdict(ResourceLimits()), "query": dataclasses.asdict(QueryLimits()),
            "papers": dataclasses.asdict(PaperLimits()), "nightly": {"roots": list(Config.nightly_roots)}}


_ENDPOINT_ENV = {"arxiv_api": "CITELEDGER_ARXIV_URL", "arxiv_oai": "CITELEDGER_ARXIV_OAI_URL",
                 "crossref_api": "CITELEDGER_CROSSREF_URL", "openalex_api": "CITELEDGER_OPENALEX_URL",
                 "retraction_watch_csv": "CITELEDGER_RETRACTION_WATCH_URL",
                 "arxiv_eprint": "CITELEDGER_ARXIV_EPRINT_URL", "arxiv_pdf": "CITELEDGER_ARXIV_PDF_URL",
                 "grobid": "CITELEDGER_GROBID_URL"}


def env_names() -> dict[str, str]:
    """The environment variable of every setting, by dotted key (``limits.batch_size`` ->
    ``CITELEDGER_BATCH_SIZE``)."""
    names = {"ledger": "CITELEDGER_LEDGER", "catalog": "CITELEDGER_CATALOG", "state_dir": "CITELEDGER_STATE_DIR",
             "remote.enabled": "CITELEDGER_REMOTE", "remote.mailto": "CITELEDGER_MAILTO",
             "remote.private_mailto": "CITELEDGER_PRIVATE_MAILTO",
             "remote.max_run_seconds": "CITELEDGER_REMOTE_MAX_RUN_SECONDS",
             "nightly.roots": "CITELEDGER_NIGHTLY_ROOTS"}
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
    except RecursionError:  # arrays or inline tables nested thousands deep: the parser's stack
        raise ConfigError(f"{file}: nested deeper than a settings file goes ({MAX_SETTINGS_DEPTH} levels)") from None
    except OSError as exc:
        raise ConfigError(f"config file {file}: cannot be read ({exc.strerror})") from None
    if _depth(data) > MAX_SETTINGS_DEPTH:
        raise ConfigError(f"{file}: nested deeper than a settings file goes ({MAX_SETTINGS_DEPTH} levels)")
    values = _flat(data)
    for key in PATH_KEYS:  # relative to the file, so the file means the same from any working directory
        if isinstance(values.get(key), str) and values[key].strip():
            values[key] = _beside(file, values[key])
    if isinstance(values.get("nightly.roots"), list):
        values["nightly.roots"] = [_beside(file, r) if isinstance(r, str) and r.strip() else r
                                   for r in values["nightly.roots"]]
    return Layer(values, {k: f"file {file}" for k in values})


def _depth(value: Any) -> int:
    """How deep tables and arrays nest in a parsed settings file (a number or a string: 0)."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _beside(file: Path, value: str) -> str:
    """A path a settings file gives, relative to the file's folder."""
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else Path(os.path.normpath(file.parent / path)))


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
    set_keys = {key for layer in layers[1:] for key in layer.values}
    if set_keys <= set(PATH_KEYS):  # defaults and paths only: nothing for the model to check
        for key in set_keys:
            merged[key] = _checked_path(key, merged[key], labels[key])
        return _to_config(_nest(merged), str(file) if file else None, labels)
    return _to_config(_checked(merged, labels), str(file) if file else None, labels)


def _checked_path(key: str, value: Any, origin: str) -> str:
    try:
        return path_setting(value)
    except ValueError as exc:
        raise ConfigError(f"{key}: {exc}, got {value!r} ({origin})") from None


def _checked(merged: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """The merged values checked by the typed model (``config_model``, pydantic), as plain values."""
    from pydantic import ValidationError

    from citeledger.config_model import Settings

    try:
        return Settings(**_nest(merged)).model_dump()
    except ValidationError as exc:
        raise ConfigError(_first_error(exc, labels)) from None


# The command-line options that set a setting (``config show`` names them as the source).
CLI_OPTIONS = {"ledger": "--ledger", "catalog": "--catalog", "limits.batch_size": "--batch-size",
               "endpoints.grobid": "--grobid"}
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


def _first_error(exc: Any, labels: Mapping[str, str]) -> str:
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


def _to_config(values: Mapping[str, Any], source: str | None, labels: dict[str, str]) -> Config:
    """The frozen Config of checked values, nested as in the file (the model's, or defaults and paths)."""
    remote = values["remote"]
    services = {name: ServiceSettings(**remote[name]) for name in SERVICES}
    search = {**values["search"], "services": tuple(values["search"]["services"])}
    return Config(
        remote=frozenset(remote["enabled"]), mailto=remote["mailto"], private_mailto=remote["private_mailto"],
        max_run_seconds=remote["max_run_seconds"],
        **services,
        search=SearchSettings(**search), endpoints=Endpoints(**values["endpoints"]),
        limits=ResourceLimits(**values["limits"]), query=QueryLimits(**values["query"]),
        papers=PaperLimits(**values["papers"]), ledger=values["ledger"], catalog=values["catalog"],
        state_dir=values["state_dir"], nightly_roots=tuple(values["nightly"]["roots"]), source=source, origins=labels)


def effective_settings(config: Config) -> list[tuple[str, Any, str]]:
    """(dotted key, value, source) of every setting, in the file's order (``config show``)."""
    values = {"ledger": config.ledger, "catalog": config.catalog, "state_dir": config.state_dir,
              "remote.enabled": sorted(config.remote), "remote.mailto": config.mailto,
              "remote.private_mailto": config.private_mailto,
              "remote.max_run_seconds": config.max_run_seconds}
    for name in SERVICES:
        values.update({f"remote.{name}.{k}": v for k, v in dataclasses.asdict(config.service(name)).items()})
    for section in ("endpoints", "search", "limits", "query", "papers"):
        values.update({f"{section}.{k}": v for k, v in dataclasses.asdict(getattr(config, section)).items()})
    values["search.services"] = list(config.search.services)
    values["nightly.roots"] = list(config.nightly_roots)
    if config.private_mailto and config.mailto:
        values["remote.mailto"] = HIDDEN
    return [(key, shown_value(value), config.origins.get(key, "default")) for key, value in values.items()]


def shown_value(value: Any) -> Any:
    """A setting as ``config show`` prints it: a URL's user info and secret parameters hidden
    (``resolvers.redaction``), in lists too."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [shown_value(v) for v in value]
    return value
