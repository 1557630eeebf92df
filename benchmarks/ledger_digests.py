"""Digests of everything a run writes, with the run's own times masked: two runs of the same code on
the same inputs and catalog give the same digests, and any change of a byte of content shows.

What is compared:
- the catalog generation: sha256 of every Parquet file (``manifest.json`` holds the build time and
  is left out; the catalog fingerprint inside every observation id covers works and notices);
- the observations: one sha256 over the sorted ``observation_id observation_digest`` lines (the
  digest covers every column but the run id and the time);
- rejects, runs' state counts, notices: their rows with run ids and times masked;
- the citation records (JSON, text, HTML): each file's bytes with the run's times masked;
- ``ledger.duckdb``: the SQL of its views, with the ledger and catalog paths masked.

Used by ``tests/test_bytes_unchanged.py`` (the embedded sample) and by hand for larger inputs:

    python benchmarks/ledger_digests.py CATALOG LEDGER [--json] > before.json
    ... change the code, rebuild the catalog and resolve again with the same --run-id ...
    python benchmarks/ledger_digests.py CATALOG LEDGER --diff before.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import duckdb

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_RUN = re.compile(r"run-\d{8}T\d{6}Z-[0-9a-f]{6}")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mask(text: str, *paths: Path) -> str:
    """Times and generated run ids to placeholders; absolute paths of this run's folders too."""
    for path in paths:
        text = text.replace(str(path.resolve()), f"<{path.name}>")
    return _RUN.sub("<run>", _TIME.sub("<time>", text))


def _rows(con: duckdb.DuckDBPyConnection, glob: Path, drop: tuple[str, ...]) -> str:
    if not any(glob.parent.parent.rglob("*.parquet")):
        return _sha(b"")
    rel = con.sql(f"SELECT * FROM read_parquet('{glob}', union_by_name=true)")
    cols = [c for c in rel.columns if c not in drop]
    lines = sorted(json.dumps(dict(zip(cols, row)), sort_keys=True, default=str)
                   for row in rel.select(", ".join(f'"{c}"' for c in cols)).fetchall())
    return _sha(_mask("\n".join(lines)).encode())


def _record_digests(records: Path) -> dict[str, str]:
    """Each record file with times masked, and its content digest too: that digest covers the
    times, so it is the one value of a record that differs between two runs of the same code."""
    out = {}
    for path in sorted(records.rglob("*")) if records.exists() else []:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        twin = path.with_suffix(".json")
        if twin.exists():
            digest = json.loads(twin.read_text(encoding="utf-8")).get("content_digest")
            text = text.replace(digest, "<content_digest>") if digest else text
        out[f"records/{path.relative_to(records)}"] = _sha(_mask(text).encode())
    return out


def catalog_digests(catalog: Path) -> dict[str, str]:
    generation = catalog / (catalog / "CURRENT").read_text().strip()
    return {p.name: _sha(p.read_bytes()) for p in sorted(generation.glob("*.parquet"))}


def ledger_digests(ledger: Path, catalog: Path) -> dict[str, str]:
    con = duckdb.connect()
    out: dict[str, str] = {}
    obs = con.execute(f"SELECT observation_id || ' ' || observation_digest FROM "
                      f"read_parquet('{ledger}/observations/*/*.parquet') ORDER BY 1").fetchall()
    out["observations"] = _sha("\n".join(r[0] for r in obs).encode())
    out["observation_count"] = str(len(obs))
    out["rejects"] = _rows(con, ledger / "rejects" / "*" / "*.parquet", ("run_id",))
    out["notices"] = _rows(con, ledger / "notices" / "*" / "*.parquet", ("run_id", "checked_at"))
    out["runs"] = _rows(con, ledger / "runs" / "*" / "*.parquet",
                        ("run_id", "started_at", "finished_at", "seconds", "timings", "inputs"))
    out.update(_record_digests(ledger / "records"))
    db = ledger / "ledger.duckdb"
    if db.exists():
        views = duckdb.connect(str(db), read_only=True)
        try:
            sql = views.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal "
                                "ORDER BY view_name").fetchall()
        finally:
            views.close()
        out["ledger.duckdb views"] = _sha(_mask("\n".join(f"{n}: {s}" for n, s in sql), ledger, catalog).encode())
    con.close()
    return out


def all_digests(catalog: Path, ledger: Path) -> dict[str, str]:
    return {**{f"catalog/{k}": v for k, v in catalog_digests(catalog).items()}, **ledger_digests(ledger, catalog)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalog", type=Path)
    parser.add_argument("ledger", type=Path)
    parser.add_argument("--diff", type=Path, help="a JSON file of earlier digests: print what differs")
    args = parser.parse_args(argv)
    now = all_digests(args.catalog, args.ledger)
    if args.diff is None:
        print(json.dumps(now, indent=1, sort_keys=True))
        return 0
    before = json.loads(args.diff.read_text())
    differs = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
    for key in differs:
        print(f"differs: {key}")
    print(f"{len(before.keys() | now.keys()) - len(differs)} equal, {len(differs)} differ")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
