"""The ledger and the catalog as settings: ``ledger`` and ``catalog`` in the settings file (relative to
that file), ``CITELEDGER_LEDGER`` / ``CITELEDGER_CATALOG`` and ``--ledger`` / ``--catalog``, found from
any working directory, shown first by ``config show``."""
from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

from citeledger.config import load_config
from resolvers.errors import ConfigError

cli = importlib.import_module("citeledger.cli.entry")
REFERENCES = [{"citing_paper": "p1", "reference_index": 1,
               "raw": "Yuri N. Kartashov, Invariance principle for additive functionals of Markov chains, "
                      "arXiv preprint arXiv:0704.0508, 2007."},
              {"citing_paper": "p1", "reference_index": 2, "raw": "A work no catalog holds. Nobody, 1901."}]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No CITELEDGER_* or citeledger.toml of the caller, no --config left over from another test."""
    for key in [k for k in os.environ if k.startswith("CITELEDGER_")]:
        monkeypatch.delenv(key)
    import citeledger.config as config_module

    monkeypatch.setattr(config_module, "_CLI_CONFIG", [])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, default_catalog) -> Path:
    """A folder holding a catalog and a ledger of two references, resolved from inside it."""
    root = tmp_path_factory.mktemp("corpus")
    refs = root / "refs.jsonl"
    refs.write_text("".join(json.dumps(r) + "\n" for r in REFERENCES))
    assert cli.main(["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(root / "ledger")]) == 0
    return root


def count(capsys, argv: list[str]) -> int:
    capsys.readouterr()
    assert cli.main(["query", "select count(*) as n from current join works using (work_id)",
                     "--format", "json", *argv]) == 0
    return json.loads(capsys.readouterr().out.splitlines()[-1])["n"]


def test_the_environment_names_ledger_and_catalog_from_another_directory(corpus, default_catalog, tmp_path,
                                                                          monkeypatch, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert cli.main(["query", "select count(*) from current"]) == 2  # the default data/ledger is not here
    assert "ledger data/ledger does not exist" in capsys.readouterr().err
    monkeypatch.setenv("CITELEDGER_LEDGER", str(corpus / "ledger"))
    monkeypatch.setenv("CITELEDGER_CATALOG", str(default_catalog))
    assert count(capsys, []) == 1  # one reference linked to a work of the catalog
    assert cli.main(["runs", "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1
    assert cli.main(["record", "p1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["references"] == 2


def test_the_settings_file_names_them_relative_to_itself(corpus, default_catalog, tmp_path, monkeypatch, capsys):
    settings = corpus / "citeledger.toml"
    catalog = os.path.relpath(default_catalog, corpus)
    settings.write_text(f'ledger = "ledger"\ncatalog = "{catalog}"\n')
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    assert count(capsys, ["--config", str(settings)]) == 1
    monkeypatch.setenv("CITELEDGER_CONFIG", str(settings))
    assert count(capsys, []) == 1
    config = load_config()
    assert Path(config.ledger) == corpus / "ledger" and Path(config.catalog).resolve() == default_catalog.resolve()
    assert config.origins["ledger"] == f"file {settings}"


def test_the_command_line_wins_over_environment_and_file(corpus, default_catalog, tmp_path, monkeypatch, capsys):
    (tmp_path / "citeledger.toml").write_text('ledger = "nowhere"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITELEDGER_CATALOG", str(tmp_path / "no-catalog"))
    assert cli.main(["query", "select count(*) from current"]) == 2
    assert f"ledger {tmp_path / 'nowhere'} does not exist" in capsys.readouterr().err
    assert count(capsys, ["--ledger", str(corpus / "ledger"), "--catalog", str(default_catalog)]) == 1
    config = load_config(cli={"ledger": "x", "catalog": None})
    assert (config.ledger, config.origins["ledger"]) == ("x", "cli --ledger")
    assert config.origins["catalog"] == "env CITELEDGER_CATALOG"


def test_config_show_lists_ledger_and_catalog_first(tmp_path, monkeypatch, capsys):
    (tmp_path / "citeledger.toml").write_text('catalog = "cat"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITELEDGER_LEDGER", "/srv/ledger")
    assert cli.main(["config", "show"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:4]]
    assert rows == [["ledger", "/srv/ledger", "env", "CITELEDGER_LEDGER"],
                    ["catalog", str(tmp_path / "cat"), "file", str(tmp_path / "citeledger.toml")]]


def test_a_path_setting_that_is_no_path_is_one_line(tmp_path):
    (tmp_path / "citeledger.toml").write_text("ledger = 3\n")
    with pytest.raises(ConfigError, match=r"^ledger: expected a folder path \(a string\), got 3 \(file "):
        load_config(env={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match=r"^catalog: expected a folder path, got an empty one, got ' ' \(env "):
        load_config(env={"CITELEDGER_CATALOG": " "}, cwd=tmp_path / "none")


def test_paths_alone_give_the_settings_the_model_gives(tmp_path):
    """Defaults and paths are taken without the typed model; a value it must check (here the default
    batch size, given) goes through it: the same Config either way."""
    light = load_config(env={"CITELEDGER_LEDGER": "l"}, cwd=tmp_path)
    checked = load_config(env={"CITELEDGER_LEDGER": "l", "CITELEDGER_BATCH_SIZE": "1000"}, cwd=tmp_path)
    assert light == checked
