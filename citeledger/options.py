"""What the command line, the configuration and the flows share about options: the default
folders, and the one check of a whole-number option. A module of its own with nothing heavy to
import, so ``citeledger --help`` and argument errors stay instant."""
from __future__ import annotations

import argparse
import math
import os
import re
from typing import Any

from resolvers.errors import ConfigError

DEFAULT_CATALOG = "data/catalog"
DEFAULT_LEDGER = "data/ledger"
DEFAULT_INBOX = "data/inbox"
DEFAULT_PROCESSED = "data/processed"
DEFAULT_CATALOG_INBOX = "data/catalog-inbox"


def path_setting(value: Any) -> str:
    """A folder setting (``ledger``, ``catalog``, ``state_dir``) as given, or a ValueError saying what
    it must be: the one check of a path the settings file, the environment and the model share."""
    if not isinstance(value, str) or isinstance(value, bool):
        raise ValueError("expected a folder path (a string)")
    if not value.strip():
        raise ValueError("expected a folder path, got an empty one")
    if "\x00" in value:
        raise ValueError("a path holds no NUL character")
    return value


def at_least(name: str, value: Any, low: int) -> int:
    """``value`` as an int of at least ``low``, or a ConfigError naming the option: the one check
    the configuration's ``[limits]``, the command line and the library entry points share."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value).strip(), 10)
        except ValueError:
            raise ConfigError(f"{name}: expected a whole number, got {value!r}") from None
    if value < low:
        raise ConfigError(f"{name}: must be >= {low}, got {value}")
    return value


def _int_type(low: int) -> Any:
    """An argparse ``type=`` that checks with ``at_least`` (argparse then reports it, exit 2)."""
    def parse(text: str) -> int:
        try:
            return at_least("value", text, low)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix("value: ")) from None

    parse.__name__ = "positive_int" if low == 1 else "non_negative_int"
    return parse


positive_int = _int_type(1)  # batch sizes, worker counts, page caps, row caps
non_negative_int = _int_type(0)  # counts where none is a fair answer (``eval --worst 0``)


def env_seconds(name: str, default: float) -> float:
    """The environment variable ``name`` as a finite number of seconds >= 0 (``default`` when
    unset), or one ConfigError naming it: ``nan`` or ``inf`` would wait forever, a negative
    number means nothing. Read when it is used, so ``--help`` never depends on it."""
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = float(text.strip())
    except ValueError:
        raise ConfigError(f"{name}: expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name}: must be a finite number of seconds >= 0, got {text!r}")
    return value


_MEMORY_SIZE = re.compile(r"^\s*\d+(\.\d+)?\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)


def env_memory_size(name: str, default: str) -> str:
    """The environment variable ``name`` as a DuckDB memory limit (``3GB``, ``512MiB``; ``default``
    when unset), or one ConfigError naming it, instead of DuckDB's error when a connection opens."""
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    if not _MEMORY_SIZE.match(text) or not float(re.sub(r"[^\d.]", "", text)) > 0:
        raise ConfigError(f"{name}: expected a memory size such as 3GB or 512MB, got {text!r}")
    return text.strip()


_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_run_id(run_id: str) -> str:
    """Run ids become folder names: allow only a safe alphabet, and no name Windows keeps for a device."""
    if not _RUN_ID.match(run_id or "") or ".." in run_id:
        raise ConfigError(f"run id {run_id!r} must be 1-128 letters, digits, '.', '_' or '-'")
    if is_device_name(run_id):
        raise ConfigError(f"run id {run_id!r} is a name Windows keeps for a device (a folder of that name cannot "
                          "be made there): give another")
    return run_id


# names Windows keeps for devices, whatever follows their first dot (``con.html`` cannot be made there)
DEVICE_NAMES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})


def is_device_name(name: str) -> bool:
    """Whether a file or folder name is, up to its first dot and in any case, a Windows device name."""
    return name.split(".", 1)[0].lower() in DEVICE_NAMES
