"""``citeledger keys init``, ``keys show`` and ``citeledger verify``: the commands of the records' signed
receipts (``record_commands.receipts``; Pith's with ``--pith-key``: ``cli.pith``), apart from ``main`` so that
one stays small."""
from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

from citeledger.app_errors import NotFound, UsageError
from citeledger.cli.pith import report_checks
from citeledger.cli.preflight import check_inputs
from citeledger.storage import locking


def cmd_keys_init(args: argparse.Namespace) -> int:
    from citeledger.ledger.ledger_store import check_ledger_dir
    from citeledger.records.receipts import init_keys, key_file_stem, keys_dir

    check_ledger_dir(args.ledger)
    locking.acquire_ledger(args.ledger)
    try:
        kid = init_keys(args.ledger, rotate=args.rotate)
    finally:
        locking.release_ledger(args.ledger)
    print(f"signing key {kid} in {keys_dir(args.ledger)} (public key {key_file_stem(kid)}.pub.json); "
          "records written from now on are signed with it")
    print(f"key id {kid}, fingerprint {key_fingerprint(args.ledger, kid)} (Pith's public_key_fingerprint: "
          "the first 16 bytes of SHA-256 over the raw public key)")
    return 0


def key_fingerprint(ledger: str, kid: str) -> str:
    from citeledger.pith.pith_receipts import fingerprint
    from citeledger.records.receipts import key_file_stem, keys_dir, load_public_keys

    return fingerprint(load_public_keys([keys_dir(ledger) / f"{key_file_stem(kid)}.pub.json"])[kid])


def cmd_keys_show(args: argparse.Namespace) -> int:
    """The ledger's active key by id and fingerprint; ``--format json``: its public key document in
    Pith's shape, which ``verify --pith-key`` takes."""
    from citeledger.pith.pith_receipts import fingerprint, raw_public
    from citeledger.records.receipts import active_key

    key = active_key(args.ledger)
    if key is None:
        raise NotFound(f"ledger {args.ledger} has no signing key (`citeledger keys init` makes one)")
    public = key.private.public_key()
    doc = {"key_id": key.key_id, "algorithm": "ed25519", "format": "raw",
           "public_key_b64": base64.b64encode(raw_public(public)).decode(), "public_key_hex": raw_public(public).hex(),
           "fingerprint_sha256_hex": fingerprint(public)}
    if args.format == "json":
        print(json.dumps(doc, indent=2))
    else:
        print(f"key id {doc['key_id']}\nfingerprint {doc['fingerprint_sha256_hex']}\nalgorithm ed25519\n"
              f"public key (base64) {doc['public_key_b64']}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Each record: ``ok`` or what failed; exit 1 when any fails."""
    from citeledger.records.receipts import keys_dir, load_public_keys, verify_file

    if args.pith_key:
        if args.public_key:
            raise UsageError("verify: give --pith-key or --public-key, not both")
        from citeledger.cli.pith import verify_pith

        return verify_pith(args)
    check_inputs(args.files)
    sources = [Path(k) for k in args.public_key] or [keys_dir(args.ledger)]
    if not args.public_key and not sources[0].is_dir():
        raise NotFound(f"no keys folder {sources[0]}: give --public-key FILE or the --ledger that signed the records")
    keys = load_public_keys(sources)
    return report_checks(args.files, lambda path: verify_file(path, keys))
