"""``--format``: one vocabulary for every command that prints or writes a record. ``text`` is the form
for people (a page, a table), ``json`` for programs, then ``csv``, ``html`` and ``pith`` where a
command has them. Earlier names are still taken: ``ledger`` and ``table`` mean ``text``,
``citeledger`` (``records``) means ``json``, as the outside contract names ``record --format ledger``."""
from __future__ import annotations

import argparse

FORMERLY = {"ledger": "text", "table": "text", "citeledger": "json"}


def canonical(name: str) -> str:
    return FORMERLY.get(name, name)


def format_option(p: argparse.ArgumentParser, choices: list[str], default: str, help: str,
                  formerly: tuple[str, ...] = ()) -> None:
    """``--format`` among ``choices``; ``formerly``: the command's earlier names, said in its help."""
    olds = [f"{old} for {FORMERLY[old]}" for old in formerly]
    p.add_argument("--format", type=canonical, choices=choices, default=default,
                   help=f"{help} (default {default}; also taken: {', '.join(olds)})" if olds else help)
