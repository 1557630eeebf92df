"""Settings: one precedence (default < file < env < cli), `config show` naming each source,
`--config` on every command, invalid values in one line with exit 2, and every option
docs/reference/configuration.md documents accepted."""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from citeledger.config import default_values, env_names, load_config
from resolvers.errors import ConfigError

cli = importlib.import_module("citeledger.cli.entry")
REPO = Path(__file__).parent.parent
DOC = (REPO / "docs" / "reference" / "configuration.md").read_text()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No CITELEDGER_* of the caller's shell, no citeledger.toml of the working directory, no
    --config left over from another test."""
    monkeypatch.setenv("CITELEDGER_CONFIG", "")  # so that the --config a test gives is undone after it
    for key in [k for k in __import__("os").environ if k.startswith("CITELEDGER_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    import citeledger.config as config_module

    monkeypatch.setattr(config_module, "_CLI_CONFIG", [])


def test_precedence_default_file_env_cli(tmp_path):
    (tmp_path / "citeledger.toml").write_text("[limits]\nbatch_size = 7\nmax_raw_chars = 900\narxiv_id_batch = 9\n")
    env = {"CITELEDGER_MAX_RAW_CHARS": "800", "CITELEDGER_ARXIV_ID_BATCH": "8"}
    config = load_config(env=env, cwd=tmp_path, cli={"limits.arxiv_id_batch": 5, "endpoints.grobid": None})
    assert (config.limits.batch_size, config.limits.max_raw_chars, config.limits.arxiv_id_batch) == (7, 800, 5)
    assert config.limits.max_input_bytes == 2 * 1024**3
    origins = config.origins
    assert origins["limits.batch_size"] == f"file {tmp_path / 'citeledger.toml'}"
    assert origins["limits.max_raw_chars"] == "env CITELEDGER_MAX_RAW_CHARS"
    assert origins["limits.arxiv_id_batch"].startswith("cli ")
    assert origins["limits.max_input_bytes"] == "default"


def test_config_show_names_each_source(tmp_path, capsys, monkeypatch):
    settings = tmp_path / "other.toml"
    settings.write_text('[query]\nmemory_limit = "2GB"\n')
    monkeypatch.setenv("CITELEDGER_QUERY_TIMEOUT_SECONDS", "12")
    assert cli.main(["config", "show", "--config", str(settings), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    rows = {r["key"]: r for r in shown["settings"]}
    assert shown["file"] == str(settings)
    assert rows["query.memory_limit"] == {"key": "query.memory_limit", "value": "2GB", "source": f"file {settings}"}
    assert rows["query.timeout_seconds"]["value"] == 12.0
    assert rows["query.timeout_seconds"]["source"] == "env CITELEDGER_QUERY_TIMEOUT_SECONDS"
    assert rows["remote.enabled"] == {"key": "remote.enabled", "value": [], "source": "default"}
    assert set(rows) == set(env_names())  # every setting is shown, and every one has its variable


def test_config_before_or_after_the_command_and_missing_file(tmp_path, capsys):
    settings = tmp_path / "x.toml"
    settings.write_text("[limits]\nbatch_size = 3\n")
    for argv in (["--config", str(settings), "config", "show"], ["config", "show", "--config", str(settings)]):
        assert cli.main(argv) == 0
        assert re.search(r"limits\.batch_size\s+3\s+file ", capsys.readouterr().out)
    assert cli.main(["config", "show", "--config", str(tmp_path / "nope.toml")]) == 2
    assert capsys.readouterr().err.strip() == f"citeledger: --config {tmp_path / 'nope.toml'}: no such file"


@pytest.mark.parametrize("where,setting,expected", [
    ("env", ("CITELEDGER_BATCH_SIZE", "0"), "limits.batch_size: must be >= 1, got '0' (env CITELEDGER_BATCH_SIZE)"),
    ("env", ("CITELEDGER_ARXIV_RETRIES", "many"), "remote.arxiv.retries: "),
    ("env", ("CITELEDGER_REMOTE", "google"), "remote.enabled: unknown service(s) ['google']"),
    ("file", "[query]\ntimeout_seconds = -1\n", "query.timeout_seconds: must be > 0, got -1 (file "),
    ("file", "[remote.arxiv]\nmin_intervall_seconds = 1\n", "remote.arxiv.min_intervall_seconds: unknown setting"),
    ("file", "remote = 3\n", "remote: expected a table, got 3 (file "),
])
def test_an_invalid_value_is_one_line_naming_setting_and_source(tmp_path, capsys, monkeypatch, where, setting,
                                                                 expected):
    if where == "env":
        monkeypatch.setenv(*setting)
    else:
        (tmp_path / "citeledger.toml").write_text(setting)
    assert cli.main(["config", "show"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"citeledger: {expected}"), err
    assert ("(env " if where == "env" else "(file ") in err


def test_config_reaches_commands_that_read_settings(tmp_path, capsys, default_catalog):
    """--config is read by `query` (its [query] limits) and `resolve` ([limits]): a bad value in
    the file given stops both with exit 2 before any work."""
    bad = tmp_path / "bad.toml"
    bad.write_text('[query]\nmemory_limit = "lots"\n')
    assert cli.main(["query", "select 1", "--ledger", str(tmp_path / "l"), "--catalog", str(default_catalog),
                     "--config", str(bad)]) == 2
    assert "query.memory_limit" in capsys.readouterr().err
    bad.write_text("[limits]\nbatch_size = 0\n")
    refs = tmp_path / "r.jsonl"
    refs.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "A title. 2001."}) + "\n")
    assert cli.main(["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(tmp_path / "l"),
                     "--config", str(bad)]) == 2
    assert "limits.batch_size: must be >= 1" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0 and re.fullmatch(r"citeledger \S+\n", capsys.readouterr().out)


# -- every option docs/reference/configuration.md documents is accepted ------------------------------------

def documented_keys() -> dict[str, str]:
    """Dotted key -> environment variable, from the doc's key tables (sections by their heading)."""
    keys: dict[str, str] = {}
    section = None
    for line in DOC.splitlines():
        heading = re.match(r"^###? .*?`\[([a-z_.]+)\]`", line)
        if line.startswith("#"):
            section = "" if "Top level" in line else heading.group(1) if heading else None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| `") else []
        if section is None or len(cells) < 2 or not re.fullmatch(r"`[a-z_.]+`", cells[0]):
            continue
        key = cells[0].strip("`")
        env = re.match(r"`(CITELEDGER_[A-Z_]+)`", cells[1])
        keys[key if section == "" else f"{section}.{key}"] = env.group(1) if env else ""
    return keys


def documented_service_keys() -> list[str]:
    table = DOC.split("### Per service")[1].split("###")[0]
    return re.findall(r"^\| `([a-z_]+)` \|", table, re.M)


def test_the_doc_lists_every_setting_and_each_is_accepted_from_file_and_environment(tmp_path):
    documented = documented_keys()
    for service in ("arxiv", "crossref", "retraction_watch", "openalex", "grobid"):
        for key in documented_service_keys():
            documented[f"remote.{service}.{key}"] = f"CITELEDGER_{service.upper()}_{key.upper()}"
    flat = {}
    for section, values in default_values().items():
        for key, value in (values.items() if isinstance(values, dict) else [("", values)]):
            if isinstance(value, dict):
                flat.update({f"{section}.{key}.{k}": v for k, v in value.items()})
            else:
                flat[f"{section}.{key}" if key else section] = value
    assert set(documented) == set(flat), set(documented) ^ set(flat)
    names = env_names()
    for key, env in documented.items():
        if env:
            assert names[key] == env, key
    samples = {"remote.enabled": ["arxiv"], "remote.mailto": "me@example.org", "endpoints.grobid": "http://127.0.0.1:1"}
    for key, default in flat.items():
        value = samples.get(key, default)
        section, _, name = key.rpartition(".")
        body = f"[{section}]\n{name} = {json.dumps(value)}\n" if section else f"{name} = {json.dumps(value)}\n"
        (tmp_path / "citeledger.toml").write_text(body)
        config = load_config(env={}, cwd=tmp_path)
        assert config.origins[key].startswith("file "), key
        text = ",".join(value) if isinstance(value, list) else str(value)
        assert load_config(env={names[key]: text}, cwd=tmp_path / "none").origins[key] == f"env {names[key]}", key


def documented_options() -> list[tuple[str, str]]:
    """(command, option) of every command-line option the doc names with its command."""
    found = [("catalog build", o) for o in re.findall(r"^\| `(--[a-z-]+)", DOC.split("## Sharded catalogs")[1], re.M)]
    found += [("resolve", "--batch-size"), ("resolve", "--grobid"), ("nightly", "--grobid")]
    found += [(cmd.strip(), opt) for cmd, opt in re.findall(r"`(?:citeledger )?([a-z ]+?) (--[a-z-]+)", DOC)
              if cmd.strip() in ("resolve", "nightly", "config show", "catalog build", "query")]
    return sorted(set(found))


def test_every_command_line_option_in_the_doc_is_accepted():
    parser = cli.build_parser()
    args = {"catalog build": ["x"], "resolve": ["x"], "nightly": [], "config show": [], "query": ["select 1"]}
    values = {"--shards": "2", "--task-runner": "threads", "--dask-address": "tcp://127.0.0.1:1",
              "--dask-workers": "2", "--batch-size": "5", "--grobid": "http://127.0.0.1:1", "--config": "x.toml",
              "--format": "json"}
    options = documented_options()
    assert ("catalog build", "--shards") in options and ("resolve", "--batch-size") in options
    for command, option in options:
        given = [option] if option in ("--remote", "--flow") else [option, values[option]]  # switches take no value
        parsed = parser.parse_args([*command.split(), *args[command], *given])
        assert parsed.command == command.split()[0]
    for command in args:  # --config is accepted by every command, before or after it
        parser.parse_args(["--config", "x.toml", *command.split(), *args[command]])
        parser.parse_args([*command.split(), *args[command], "--config", "x.toml"])


def test_an_unknown_key_in_the_file_is_an_error(tmp_path):
    (tmp_path / "citeledger.toml").write_text("[limits]\nbatch = 3\n")
    with pytest.raises(ConfigError, match=r"^limits\.batch: unknown setting \(file .*\); known here: .*batch_size"):
        load_config(env={}, cwd=tmp_path)
