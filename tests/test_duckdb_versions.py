"""The ``duckdb`` shell the project installs and the DuckDB library that writes the ledger are the
same release, so a query of ``ledger.duckdb`` gives one answer in either."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb


def _shell() -> str:
    beside = Path(sys.executable).parent / "duckdb"
    found = str(beside) if beside.exists() else shutil.which("duckdb")
    assert found, "the duckdb shell of the [dev] extra is not installed beside this Python"
    return found


def test_shell_and_library_are_one_release():
    out = subprocess.run([_shell(), "--version"], capture_output=True, text=True, check=True).stdout
    shell = re.match(r"v?(\d+\.\d+\.\d+)", out.strip())
    assert shell, out
    assert shell.group(1) == duckdb.__version__


def test_pyproject_pins_both_to_one_version():
    text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    library = re.search(r'"duckdb==([\d.]+)"', text)
    shell = re.search(r'"duckdb-cli==([\d.]+)"', text)
    assert library and shell, "duckdb and duckdb-cli are pinned with =="
    assert library.group(1) == shell.group(1)
