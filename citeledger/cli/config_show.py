"""``citeledger config show``: the effective settings and where each came from (default, file,
env, cli), so an operator sees what a run will use before starting it."""
from __future__ import annotations

import argparse
import json
import os
from typing import Any


def cmd_config_show(args: argparse.Namespace) -> int:
    from citeledger.config import cli_config_path, effective_settings, load_config

    config = load_config()
    rows = effective_settings(config)
    if args.format == "json":
        print(json.dumps({"file": config.source, "settings": [
            {"key": key, "value": value, "source": source} for key, value, source in rows]}, indent=2))
        return 0
    how = ("--config" if cli_config_path() else "$CITELEDGER_CONFIG" if os.environ.get("CITELEDGER_CONFIG")
           else "./citeledger.toml")
    print(f"settings file: {config.source} ({how})" if config.source else
          "settings file: none (no --config, no $CITELEDGER_CONFIG, no ./citeledger.toml)")
    print("precedence: default < file < env < cli")
    width = max(len(key) for key, _, _ in rows)
    for key, value, source in rows:
        print(f"{key:<{width}}  {_shown(value):<40}  {source}")
    return 0


def _shown(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value
