"""The commands of Pith's record formats: ``record/records --format pith`` (their output),
``import-pith``, ``compare`` and ``verify --pith-key``; each a thin map onto ``record_commands.pith_files``,
``ledger.pith_rows`` and ``pith``."""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from citeledger.app_errors import UsageError
from citeledger.cli.preflight import check_inputs
from resolvers.errors import ConfigError


def check_sign(args: argparse.Namespace) -> None:
    """``--sign`` only with ``--format pith``, and only when the ledger has a key: before any work."""
    if args.sign and args.format != "pith":
        raise UsageError(f"{args.command}: --sign is for --format pith (citeledger's own records are signed "
                         "once `citeledger keys init` made a key)")
    if args.sign:
        from citeledger.records.pith_files import signing_key

        signing_key(args.ledger)


def print_pith_record(record: dict[str, Any], args: argparse.Namespace) -> int:
    """``record ID --format pith``: the v2 ``record`` in Pith's shape, as ``records --format pith`` writes it."""
    from citeledger.display import json_visible
    from citeledger.records import pith_files

    key = pith_files.signing_key(args.ledger) if args.sign else None
    pith = pith_files.pith_of(record, args.ledger, args.catalog, key)
    sys.stdout.write(json_visible(pith_files.pith_bytes(pith).decode("utf-8")))
    return 0


def imported_record(paper_id: str, args: argparse.Namespace) -> dict[str, Any] | None:
    """The paper's current imported Pith record (``ledger.pith_rows.current_record``), if any (a
    ledger that imported none loads no Pith reader: ``citeledger record``'s start-up)."""
    from citeledger.ledger.views import LEDGER_PARTS

    if not (Path(args.ledger) / LEDGER_PARTS["pith_records"][0]).is_dir():
        return None
    from citeledger.ledger.pith_rows import current_record

    return current_record(paper_id, args.ledger)


def print_imported_record(row: Mapping[str, Any], args: argparse.Namespace) -> int:
    """``record ID --format pith`` of a paper the ledger knows only from Pith: the record imported,
    given back as its RFC 8785 bytes (what was kept, byte for byte), never re-signed."""
    from citeledger.display import json_visible

    if args.sign:
        raise UsageError(f"record: the ledger knows {args.id!r} only from Pith's record ({row['kind']}), which "
                         "citeledger gives back as it was imported and does not sign")
    sys.stdout.write(json_visible(row["document"] + "\n"))
    return 0


def write_pith_records(args: argparse.Namespace) -> list[Path]:
    """``records --format pith``: the Pith records of the papers whose records were just written."""
    from citeledger.records import pith_files, record_files
    from citeledger.records.ledger_reads import latest_run_id

    key = pith_files.signing_key(args.ledger) if args.sign else None
    papers = args.papers
    if not papers:
        run_id = args.run_id or latest_run_id(args.ledger)
        papers = record_files.papers_touched(run_id, args.ledger, args.catalog) if run_id else []
    return pith_files.write_pith_records(papers, args.ledger, args.catalog, key)


def cmd_import_pith(args: argparse.Namespace) -> int:
    """Each file kept or refused on its own: a line per file kept (stdout), a line per file refused
    (stderr, also a ``rejects`` row); exit 1 when any was refused."""
    from citeledger.display import visible_line
    from citeledger.ledger.ledger_store import check_ledger_dir
    from citeledger.ledger.pith_rows import import_pith

    check_inputs(args.files)
    check_ledger_dir(args.ledger)
    key = pith_trusted_key(args.pith_key) if args.pith_key else None
    refused = 0
    for done in import_pith(args.files, args.ledger, datetime.now(timezone.utc), key):
        if done.fault:
            refused += 1
            print(visible_line(f"citeledger: {done.file}: not imported: {done.fault}"), file=sys.stderr)
            continue
        kind = done.kind.value if done.kind else "?"
        print(visible_line(f"{done.file}: {kind} of {done.paper or 'an unnamed paper'}, {done.rows} observations, "
                           f"digests hold, kept as {done.written}"))
    return 1 if refused else 0


def cmd_compare(args: argparse.Namespace) -> int:
    from citeledger.display import visible_controls
    from citeledger.ledger.pith_rows import compare

    result = compare(args.id, args.ledger)
    if args.format == "json":
        from citeledger.display import json_visible

        print(json_visible(json.dumps(result, indent=1, default=str, ensure_ascii=False)))
        return 0
    print(visible_controls("\n".join(compare_lines(result, args.width))))
    return 0


def _side(row: Mapping[str, Any] | None) -> tuple[str, str]:
    if not row:
        return "-", ""
    work = row.get("doi") or (f"arXiv:{row['arxiv_id']}" if row.get("arxiv_id") else "")
    return str(row.get("status") or f"({row.get('pith_status')})"), str(work)


def compare_lines(result: Mapping[str, Any], width: int) -> list[str]:
    """The comparison as tables: a line per reference of the paper, then a line per citation of it
    (``citing paper#index``), each followed by the counts of state pairs."""
    record = result.get("pith_record")
    lines = [f"paper {result['paper']}: Pith's record " + (f"as of {record['as_of']} ({record['stored_as'][:12]})"
                                                            if record else "not imported"),
             f"outbound: {result['references']} references, citeledger {result['citeledger']}, "
             f"Pith {result['pith']}, both {result['both']}, same state {result['same_state']}"]
    lines += _pair_lines(result, width, lambda p: str(p["reference_index"]))
    inbound = result["inbound"]
    lines.append(f"inbound: {inbound['references']} citations, citeledger {inbound['citeledger']}, "
                 f"Pith {inbound['pith']}, both {inbound['both']}, same state {inbound['same_state']}")
    lines += _pair_lines(inbound, width, lambda p: f"{p['citing_paper']}#{p['reference_index']}")
    return lines


def _pair_lines(side: Mapping[str, Any], width: int, label: Callable[[Mapping[str, Any]], str]) -> list[str]:
    labels = [label(p) for p in side["pairs"]]
    wide = max([4, *map(len, labels)])
    lines = [f"{'ref':>{wide}}  {'citeledger':<20} {'pith':<20} {'same':<5} {'work (citeledger | pith)'}"]
    for pair, name in zip(side["pairs"], labels):
        ours, theirs = _side(pair["ours"]), _side(pair["theirs"])
        same = {True: "yes", False: "NO", None: ""}[pair["same_state"]]
        text = (pair["ours"] or {}).get("raw") or (pair["theirs"] or {}).get("cited_title") or ""
        works = f"{ours[1]} | {theirs[1]}" if ours[1] or theirs[1] else ""
        line = f"{name:>{wide}}  {ours[0]:<20} {theirs[0]:<20} {same:<5} {works} {' '.join(text.split())}"
        lines.append(line[:width].rstrip())
    lines.append("  state pairs (citeledger / pith):")
    lines += [f"  {count:>5}  {pair}" for pair, count in side["state_pairs"].items()]
    return lines


def pith_trusted_key(path: Path) -> Any:
    """``--pith-key``: a key document as Pith publishes one (or ``citeledger keys show --format json``),
    read as I-JSON; a key that would verify what it never signed is refused (``pith.pith_receipts.trusted_key``)."""
    from citeledger.pith.pith_receipts import trusted_key
    from citeledger.storage.json_documents import read_document

    try:
        document = read_document(path)
        if not isinstance(document, dict):
            raise ValueError("not a key document (a JSON object)")
        return trusted_key(document)
    except (ValueError, AttributeError) as exc:
        raise ConfigError(f"--pith-key {path}: {str(exc).removeprefix(f'{path}: ')}") from None


def pith_failures(path: Path, key: Any) -> list[str]:
    """Why a Pith record file does not hold: its receipt's failures, each by name and meaning, then
    every inconsistency of its content (``pith.consistency``: digests recomputed, the members outside
    the signed digest against the content they come from); empty: it holds."""
    from citeledger.pith import consistency, pith_receipts
    from citeledger.pith.schema import RecordKind, record_kind
    from citeledger.storage.json_documents import read_document

    try:
        document = read_document(path)
    except ValueError as exc:
        return [f"cannot read a JSON record: {str(exc).removeprefix(f'{path}: ')}"]
    kind = record_kind(document)
    if kind is RecordKind.PITH_NUMBER_RECORD:
        failures = [f"{f.value}: {FAILURE_MEANS.get(f.value, f.value)}"
                    for f in pith_receipts.verify_number_record(document, key)]
    elif kind is RecordKind.PITH_CITATION_RECORD:
        if "receipt" not in document:
            failures = ["no receipt: the citation record is not signed (Pith publishes its citation records unsigned)"]
        else:
            body = {k: v for k, v in document.items() if k != "receipt"}
            failures = [f"{f.value}: {FAILURE_MEANS.get(f.value, f.value)}"
                        for f in pith_receipts.verify_citation_record(body, document.get("receipt"), key)]
    else:
        return [f"not a Pith record ({kind.value}): --pith-key checks Pith receipts"]
    return failures + [f"inconsistent: {p}" for p in consistency.problems(document)]


FAILURE_MEANS = {
    "malformed": "the receipt (or the record's canonical_record) is missing or lacks a required member",
    "not_signed": "the receipt's signature_status is not signed_v1",
    "unsupported": "the receipt is not ed25519 over the digest bytes",
    "content_changed": "the content's digest is not the one the record and its receipt state: the content was changed",
    "digest_changed": "the record's digest and the receipt's disagree, or one is not a digest",
    "key_id_mismatch": "the receipt names another key id than the trusted key's",
    "fingerprint_mismatch": "the receipt's public_key_fingerprint is not the trusted key's",
    "signature_invalid": "the signature does not verify over the stated digest with the trusted key",
}


def verify_pith(args: argparse.Namespace) -> int:
    """``verify --pith-key KEYFILE FILE...``: each file ``ok`` or every failure; exit 1 when any fails."""
    check_inputs(args.files)
    key = pith_trusted_key(args.pith_key)
    return report_checks(args.files, lambda path: pith_failures(path, key))


def report_checks(paths: list[Path], problems_of: Callable[[Path], list[str]]) -> int:
    """One line per file, ``ok`` or ``FAILED:`` and its problems; the exit status (1: any failed).
    The line is printed with its control characters escaped (``display.visible_line``): a name or a
    value from a tampered file cannot move the cursor, repaint a line or start another one."""
    from citeledger.display import visible_line

    failed = 0
    for path in paths:
        problems = problems_of(path)
        failed += bool(problems)
        print(visible_line(f"{path}: ok" if not problems else f"{path}: FAILED: {'; '.join(problems)}"))
    return 1 if failed else 0
