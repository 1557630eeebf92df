"""``citeledger keys init`` and ``citeledger verify``: the commands of the records' signed receipts
(``receipts.py``), apart from ``cli.py`` so that one stays small."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from citeledger.cli.preflight import check_inputs
from citeledger.storage import locking
from resolvers.errors import NotFound


def cmd_keys_init(args: argparse.Namespace) -> int:
    from citeledger.ledger.store import check_ledger_dir
    from citeledger.records.receipts import init_keys, key_file_stem, keys_dir

    check_ledger_dir(args.ledger)
    locking.acquire_ledger(args.ledger)
    try:
        kid = init_keys(args.ledger, rotate=args.rotate)
    finally:
        locking.release_ledger(args.ledger)
    print(f"signing key {kid} in {keys_dir(args.ledger)} (public key {key_file_stem(kid)}.pub.json); "
          "records written from now on are signed with it")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Each record: ``ok`` or what failed; exit 1 when any fails."""
    from citeledger.records.receipts import keys_dir, load_public_keys, verify_file

    check_inputs(args.files)
    sources = [Path(k) for k in args.public_key] or [keys_dir(args.ledger)]
    if not args.public_key and not sources[0].is_dir():
        raise NotFound(f"no keys folder {sources[0]}: give --public-key FILE or the --ledger that signed the records")
    keys = load_public_keys(sources)
    failed = 0
    for path in args.files:
        problems = verify_file(path, keys)
        failed += bool(problems)
        print(f"{path}: ok" if not problems else f"{path}: FAILED: {'; '.join(problems)}")
    return 1 if failed else 0


def keys_parsers(sub: Any, make: Callable[..., argparse.ArgumentParser], default_ledger: str) -> None:
    """The ``keys init`` and ``verify`` subcommands (``make``: cli.py's subcommand maker)."""
    keys = make(sub, "keys", "the ledger's signing keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    init = make(keys_sub, "init", "make an ed25519 key pair for the ledger: records written afterwards are signed")
    init.add_argument("--ledger", default=default_ledger, help="the ledger folder (keys go to its keys/)")
    init.add_argument("--rotate", action="store_true", help="replace the active key; its public key stays in "
                      "keys/ so records it signed still verify")
    init.set_defaults(func=cmd_keys_init)
    verify = make(sub, "verify", "check record files' content digest and signature: ok, or what failed (exit 1)")
    verify.add_argument("files", nargs="+", type=Path, help="citation record JSON files")
    verify.add_argument("--ledger", default=default_ledger, help="trust the public keys in this ledger's keys/")
    verify.add_argument("--public-key", action="append", default=[], metavar="FILE",
                        help="trust this key instead (a .pub.json, a PEM public or private key, or a keys folder); "
                             "may be repeated")
    verify.set_defaults(func=cmd_verify)
