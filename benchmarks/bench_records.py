"""Citation records built and signed in one run: 10,000 papers of 40 references each (default),
from synthetic observation rows shaped like the ledger's (evidence with fuzzy features, notices
with events). Prints records per second for building (with the JCS content digest), signing
(ed25519 receipt), schema validation (a validator built once; every record or a sample) and
serialising the JSON, text and HTML pages, and the cost of each step per record, in this process's CPU time (the
machine is shared: the wall clock is printed too).

    PYTHONPATH=. python benchmarks/bench_records.py [--papers 10000] [--refs 40] [--validate-every 1]

The writer end to end (ledger reads, files written) is benchmarks/bench_records_ledger.py.
"""
from __future__ import annotations

import argparse
import json
import time
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from citeledger.records import receipts, record_files
from citeledger.records.record import build_record
from citeledger.records.record_json import validate_record
from resolvers.notices.standing import EventType, NoticeEvent, standing_notice

WHEN = "2026-12-01T05:00:00.000000Z"
STATES = ["verified_exact", "verified_fuzzy", "unresolved", "parse_uncertain", "metadata_mismatch"]


def evidence_value(i: int) -> str:
    features = {"aligned": i % 2, "author": 0.5 + (i % 7) / 20, "page": 1, "title": 0.3636 + (i % 13) / 100,
                "title_len": 1.609, "venue": 0.0, "volume": 1, "year": 1.0}
    return json.dumps({"rule": "fuzzy", "fuzzy": {"best": {"features": features, "score": 0.91 + (i % 5) / 100,
                                                           "work_id": f"doi:10.1000/w{i}"},
                                                  "candidates": 20, "thresholds": {"link": 0.9, "margin": 0.25}}})


def paper_rows(p: int, refs: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(1, refs + 1):
        status = STATES[(p + i) % len(STATES)]
        linked = status in ("verified_exact", "verified_fuzzy", "metadata_mismatch")
        rows.append({
            "observation_id": f"obs:{p:06d}{i:03d}", "observation_digest": "sha256:" + f"{p:032x}{i:032x}",
            "run_id": "run-bench", "observed_at": WHEN, "source_observed_at": WHEN, "citing_paper": f"2501.{p:05d}",
            "reference_index": i, "raw": f"A. Author{i}, B. Writer. A title about topic {i} of paper {p}. J. Things {i} (20{i % 25:02d}) {i}-{i + 9}.",
            "source": "arxiv_source", "status": status, "resolver_source": "raw_fallback" if linked else None,
            "work_id": f"doi:10.1000/w{i}" if linked else None, "doi": f"10.1000/w{i}" if linked else None,
            "arxiv_id": None, "extracted_dois": [], "extracted_arxiv_ids": [], "score": 0.93 if linked else None,
            "evidence": evidence_value(i)})
    return rows


def context(refs: int) -> tuple[dict, dict, dict]:
    event = NoticeEvent("10.1000/w1", EventType.RETRACTION, "2020-01-02", "10.1000/n1", "retraction_watch_csv")
    notices = {f"doi:10.1000/w{i}": standing_notice(f"10.1000/w{i}", [event] if i == 1 else [],
                                                    ["retraction_watch_csv"], "2026-12-01 00:50:29+00:00")
               for i in range(1, refs + 1)}
    works = {f"doi:10.1000/w{i}": {"work_id": f"doi:10.1000/w{i}", "doi": f"10.1000/w{i}", "title": f"Work {i}",
                                   "authors": ["A. Author"], "year": 2001, "venue": "J. Things",
                                   "sources": ["crossref"]} for i in range(1, refs + 1)}
    provenance = {"run_catalog": {"run-bench": "sha256:" + "ab" * 32},
                  "catalog_built_at": {"sha256:" + "ab" * 32: "2026-12-01T00:50:29+00:00"},
                  "notice_sources": {"retraction_watch_csv": "2026-12-01T00:50:29+00:00"}}
    return notices, works, provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--refs", type=int, default=40)
    parser.add_argument("--validate-every", type=int, default=500, help="validate every Nth record (1: all; "
                        "the record writer validates its first 20, then every 500th)")
    args = parser.parse_args()
    notices, works, provenance = context(args.refs)
    private = Ed25519PrivateKey.generate()
    key = receipts.SigningKey(receipts.key_id(private.public_key()), private)
    generated = {"tables": {"current": "current", "notices": "notices", "works": "works"}, "as_of": WHEN}
    validate_record(receipts.sign_record(build_record(
        "warm-up", None, paper_rows(0, args.refs), [], notices, generated, works=works, provenance=provenance), key))
    spent = {"build (rows -> record, JCS digest)": 0.0, "sign (ed25519 receipt)": 0.0,
             "validate (schema + digest)": 0.0, "serialise (JSON, text, HTML)": 0.0}
    names = list(spent)
    wall_started = time.perf_counter()
    for p in range(args.papers):
        rows = paper_rows(p, args.refs)
        t0 = time.process_time()
        record = build_record(f"2501.{p:05d}", None, rows, [], notices, generated, works=works,
                                      provenance=provenance)
        t1 = time.process_time()
        receipts.sign_record(record, key, signed_at="2026-12-01T05:00:00Z")
        t2 = time.process_time()
        if p % args.validate_every == 0:
            validate_record(record)
        t3 = time.process_time()
        record_files.record_pages_of(record)
        t4 = time.process_time()
        for name, seconds in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            spent[name] += seconds
    wall = time.perf_counter() - wall_started
    work = sum(v for k, v in spent.items() if not k.startswith("serialise"))
    print(f"{args.papers} records of {args.refs} references, validating every {args.validate_every}: "
          f"{args.papers / work:,.0f} records/s built, signed and validated (serialising apart), in CPU time of this "
          f"process ({work:.1f} CPU s; {wall:.1f} s on the wall clock with making the synthetic rows, "
          f"{args.papers / wall:,.0f} records/s)")
    for name, seconds in spent.items():
        print(f"  {name:<36} {seconds / args.papers * 1000:7.3f} ms/record")


if __name__ == "__main__":
    main()
