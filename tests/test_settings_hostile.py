"""Settings that would break every run are refused when they are loaded, in one line naming the
key, the value (its control characters visible) and its source: a CR LF or NUL in the contact
address (a header value), an endpoint that is not an http(s) URL, a timeout or deadline that is not
a finite positive number of seconds within a sane maximum, a memory limit over the machine's memory,
a settings file nested deeper than settings go; a harvest checkpoint nested so is read as damaged."""
from __future__ import annotations

import os

import pytest

from citeledger.cli import main
from citeledger.config import load_config
from resolvers.errors import ConfigError

MEMORY = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def refused(tmp_path, text: str) -> str:
    (tmp_path / "citeledger.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(env={}, cwd=tmp_path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message and "\x00" not in message, message
    assert f"file {tmp_path / 'citeledger.toml'}" in message, message
    return message


@pytest.mark.parametrize("mailto", ["a@b.org\\r\\nX-Evil: 1", "a@b.org\\u0000", "a b@c.org", "a@b.org\\t"])
def test_a_contact_with_a_control_character_or_a_space_is_refused(mailto, tmp_path):
    message = refused(tmp_path, f'[remote]\nmailto = "{mailto}"\n')
    assert message.startswith("remote.mailto: ") and "a" in message


def test_the_contact_from_the_environment_is_checked_too(tmp_path):
    with pytest.raises(ConfigError, match=r"^remote\.mailto: .*\\r\\n.*\(env CITELEDGER_MAILTO\)"):
        load_config(env={"CITELEDGER_MAILTO": "a@b.org\r\nX-Evil: 1"}, cwd=tmp_path)


@pytest.mark.parametrize("url", ["ftp://example.org/x", "http://exa mple.org", "https://example.org/\\u0007x",
                                 "not a url", "http://"])
def test_an_endpoint_that_is_no_http_url_is_refused(url, tmp_path):
    assert refused(tmp_path, f'[endpoints]\ncrossref_api = "{url}"\n').startswith("endpoints.crossref_api: ")


@pytest.mark.parametrize("key", ["timeout_seconds", "deadline_seconds", "stall_seconds", "backoff_max_seconds",
                                 "max_retry_after_seconds", "circuit_cooldown_seconds", "min_interval_seconds"])
@pytest.mark.parametrize("value", ["inf", "nan", "1e308", "-1.0"])
def test_a_remote_time_that_is_not_finite_or_sane_is_refused(key, value, tmp_path):
    message = refused(tmp_path, f"[remote.crossref]\n{key} = {value}\n")
    assert message.startswith(f"remote.crossref.{key}: "), message


@pytest.mark.parametrize("text", ["[query]\ntimeout_seconds = inf\n", "[remote]\nmax_run_seconds = inf\n",
                                  "[remote]\nmax_run_seconds = 1e12\n", "[search]\ncache_days = inf\n"])
def test_other_times_are_finite_and_sane_too(text, tmp_path):
    refused(tmp_path, text)


def test_sane_times_are_taken(tmp_path):
    (tmp_path / "citeledger.toml").write_text("[remote.crossref]\ntimeout_seconds = 600.0\ndeadline_seconds = 3600\n"
                                              "[remote]\nmax_run_seconds = 86400\n")
    config = load_config(env={}, cwd=tmp_path)
    assert config.crossref.timeout_seconds == 600.0 and config.max_run_seconds == 86400


def test_a_memory_limit_over_the_machines_memory_is_refused(tmp_path):
    message = refused(tmp_path, '[query]\nmemory_limit = "999999TB"\n')
    assert message.startswith("query.memory_limit: ") and "memory" in message
    (tmp_path / "citeledger.toml").write_text(f'[query]\nmemory_limit = "{MEMORY // 2**20 // 2}MiB"\n')
    assert load_config(env={}, cwd=tmp_path).query.memory_limit.endswith("MiB")


def test_a_settings_file_nested_too_deep_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    for text in ("a = " + "[" * 5000 + "]" * 5000 + "\n", "a = " + "{b = " * 5000 + "1" + "}" * 5000 + "\n",
                 "[search]\nservices = " + "[" * 40 + "]" * 40 + "\n"):
        (tmp_path / "citeledger.toml").write_text(text)
        monkeypatch.setenv("CITELEDGER_CONFIG", str(tmp_path / "citeledger.toml"))
        assert main(["config", "show"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"citeledger: {tmp_path / 'citeledger.toml'}: ") and "internal error" not in err, err
        assert "nested" in err and len(err.splitlines()) == 1


def test_a_harvest_checkpoint_nested_too_deep_is_a_damaged_one(tmp_path):
    from citeledger.storage.remote_state import FileCheckpoint

    path = tmp_path / "arxiv_oai.json"
    path.write_text('{"request": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert FileCheckpoint(path).read() == {}  # start over, never a crash (nor a wrong resume)


def test_a_sharding_file_nested_too_deep_is_one_line_naming_it(tmp_path, fixture_catalog):
    """``sharding.json``, the catalog's JSON setting of how it is sharded (a file edited by hand)."""
    import shutil

    from citeledger.catalog import sharding
    from citeledger.storage.places import CatalogPlaces

    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    path = CatalogPlaces.of(catalog).sharding
    path.write_text('{"n_shards": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError) as info:
        sharding.sharding_of(catalog)
    assert str(info.value).startswith(f"{path}: not a shard count") and "\n" not in str(info.value)
