"""Numeric CITELEDGER_* environment variables read outside the configuration file: each is checked
when it is used, and a wrong value is one line naming the variable (exit 2), never a traceback,
an endless wait or a silently accepted negative number; ``--help`` never depends on them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from citeledger import options
from resolvers.errors import ConfigError

REPO = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
MAIN = "import sys; from citeledger.cli.entry import main; sys.exit(main(sys.argv[1:]))"


def cli(args: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    environ.update(PYTHONPATH=str(REPO), **env)
    return subprocess.run([sys.executable, "-c", MAIN, *args], cwd=REPO, env=environ,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-inf", "-5", "1e999"])
def test_a_wrong_lock_timeout_is_one_line_naming_the_variable(value, monkeypatch):
    monkeypatch.setenv("CITELEDGER_LOCK_TIMEOUT", value)
    with pytest.raises(ConfigError, match="CITELEDGER_LOCK_TIMEOUT"):
        options.env_seconds("CITELEDGER_LOCK_TIMEOUT", 3600)


@pytest.mark.parametrize("value,seconds", [("0", 0.0), ("2.5", 2.5), (" 10 ", 10.0), ("", 3600.0)])
def test_a_fair_lock_timeout_is_taken(value, seconds, monkeypatch):
    monkeypatch.setenv("CITELEDGER_LOCK_TIMEOUT", value)
    assert options.env_seconds("CITELEDGER_LOCK_TIMEOUT", 3600) == seconds


def test_help_does_not_read_the_lock_timeout():
    done = cli(["--help"], CITELEDGER_LOCK_TIMEOUT="abc")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("value", ["abc", "nan", "-5"])
def test_a_run_with_a_wrong_lock_timeout_stops_in_one_line(tmp_path, default_catalog, value):
    refs = tmp_path / "refs.jsonl"
    refs.write_text((REPO / "data" / "sample_references.jsonl").read_text().splitlines()[0] + "\n")
    done = cli(["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(tmp_path / "ledger")],
               CITELEDGER_LOCK_TIMEOUT=value)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "CITELEDGER_LOCK_TIMEOUT" in lines[0], done.stderr


@pytest.mark.parametrize("value", ["lots", "-1GB", "0", "3 parsecs"])
def test_a_wrong_memory_limit_names_the_variable(value, monkeypatch):
    monkeypatch.setenv("CITELEDGER_BUILD_MEMORY_LIMIT", value)
    with pytest.raises(ConfigError, match="CITELEDGER_BUILD_MEMORY_LIMIT"):
        options.env_memory_size("CITELEDGER_BUILD_MEMORY_LIMIT", "3GB")


@pytest.mark.parametrize("value", ["512MB", "2GiB", "1.5GB", "100000"])
def test_a_fair_memory_limit_is_taken(value, monkeypatch):
    monkeypatch.setenv("CITELEDGER_INDEX_MEMORY_LIMIT", value)
    assert options.env_memory_size("CITELEDGER_INDEX_MEMORY_LIMIT", "1GB") == value


def test_a_catalog_build_with_a_wrong_memory_limit_stops_in_one_line(tmp_path):
    done = cli(["catalog", "build", *map(str, sorted((FIXTURES / "catalog").glob("*.jsonl"))), "--catalog", str(tmp_path / "cat")],
               CITELEDGER_BUILD_MEMORY_LIMIT="lots")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "CITELEDGER_BUILD_MEMORY_LIMIT" in lines[0], done.stderr
