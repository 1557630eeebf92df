"""Configuration: defaults, file, environment precedence, errors; the default opens no socket."""
from __future__ import annotations

import socket

import pytest

from citeledger.config import load_config
from resolvers.errors import ConfigError
from resolvers.remote.facade import build_remote


def test_defaults_are_off_and_polite(tmp_path):
    config = load_config(env={}, cwd=tmp_path)
    assert config.remote == frozenset() and config.mailto is None and config.source is None
    assert config.arxiv.min_interval_seconds == 3.0 and config.arxiv.max_concurrency == 1
    assert config.crossref.min_interval_seconds == 0.5  # public pool without mailto
    assert config.endpoints.arxiv_oai == "https://oaipmh.arxiv.org/oai"
    assert config.limits.max_raw_chars == 100_000


def test_file_then_environment(tmp_path):
    (tmp_path / "citeledger.toml").write_text(
        '[remote]\nenabled = ["arxiv"]\nmailto = "file@example.org"\n'
        "[remote.arxiv]\nmin_interval_seconds = 5\nretries = 1\n"
        '[endpoints]\narxiv_api = "http://127.0.0.1:1/api/query"\n'
        "[limits]\nmax_raw_chars = 5000\n"
    )
    config = load_config(env={}, cwd=tmp_path)
    assert config.remote == {"arxiv"} and config.mailto == "file@example.org"
    assert config.arxiv.min_interval_seconds == 5.0 and config.arxiv.retries == 1
    assert config.crossref.min_interval_seconds == 0.2  # 5/s with a mailto
    assert config.limits.max_raw_chars == 5000 and config.source.endswith("citeledger.toml")
    env = {"CITELEDGER_REMOTE": "arxiv,crossref", "CITELEDGER_MAILTO": "env@example.org",
           "CITELEDGER_ARXIV_URL": "http://127.0.0.1:2/api/query", "CITELEDGER_ARXIV_RETRIES": "4",
           "CITELEDGER_MAX_RAW_CHARS": "7000"}
    config = load_config(env=env, cwd=tmp_path)
    assert config.remote == {"arxiv", "crossref"} and config.mailto == "env@example.org"
    assert config.endpoints.arxiv_api == "http://127.0.0.1:2/api/query"
    assert config.arxiv.retries == 4 and config.arxiv.min_interval_seconds == 5.0
    assert config.limits.max_raw_chars == 7000


def test_explicit_path_and_env_path(tmp_path):
    other = tmp_path / "other.toml"
    other.write_text('[remote]\nenabled = "crossref"\n')
    assert load_config(other, env={}, cwd=tmp_path).remote == {"crossref"}
    assert load_config(env={"CITELEDGER_CONFIG": str(other)}, cwd=tmp_path).remote == {"crossref"}
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.toml", env={}, cwd=tmp_path)


@pytest.mark.parametrize("text", [
    '[remote]\nenabled = ["semanticscholar"]\n',
    "[remote.arxiv]\nmin_intervall_seconds = 1\n",
    '[remote.arxiv]\nretries = "many"\n',
    "[remote.crossref]\nmax_concurrency = 0\n",
    "[nonsense]\nx = 1\n",
    "not toml at all [",
])
def test_bad_values_are_config_errors(tmp_path, text):
    (tmp_path / "citeledger.toml").write_text(text)
    with pytest.raises(ConfigError):
        load_config(env={}, cwd=tmp_path)


def test_remote_none_in_environment_turns_everything_off(tmp_path):
    (tmp_path / "citeledger.toml").write_text('[remote]\nenabled = ["arxiv"]\n')
    assert load_config(env={"CITELEDGER_REMOTE": "none"}, cwd=tmp_path).remote == frozenset()


def test_default_configuration_opens_no_network_connection(tmp_path, monkeypatch):
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise AssertionError("network connection attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    with pytest.raises(AssertionError):  # the guard itself works
        socket.create_connection(("127.0.0.1", 9))
    attempts.clear()

    for key in [k for k in __import__("os").environ if k.startswith("CITELEDGER_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    config = load_config()
    resolver = build_remote(config.remote_settings())
    assert resolver is None  # the resolution chain has nothing remote to call
    assert attempts == []
