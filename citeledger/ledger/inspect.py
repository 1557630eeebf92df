"""What a catalog holds and which runs a ledger has (``citeledger catalog info``, ``citeledger runs``),
and the ids a ledger knows that are near a mistyped one (``citeledger record``)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from citeledger.storage.places import CatalogDir, LedgerDir
from resolvers.errors import ConfigError


def catalog_info(catalog_dir: CatalogDir) -> dict[str, Any]:
    """Generation, works per source, identifiers per scheme, notice events, index format, size on
    disk and build time of the catalog's live generation."""
    import duckdb

    from citeledger.catalog.store import CatalogStore
    from citeledger.index.fuzzy_index import INDEX_FILE, INDEX_FORMAT
    from citeledger.storage.sql import sql_literal

    store = CatalogStore(catalog_dir)
    gen = store.current()
    if gen is None:
        raise ConfigError(f"no catalog in {catalog_dir}: build one with `citeledger catalog build "
                          f"--catalog {catalog_dir} FILE...`")
    manifest = json.loads((gen / "manifest.json").read_text())
    con = duckdb.connect()
    try:
        per_source: dict[str, int] = dict(con.execute(
            "SELECT s, count(*) FROM (SELECT unnest(sources) AS s "
            f"FROM read_parquet({sql_literal(gen / 'works.parquet')}))"
            " GROUP BY 1 ORDER BY 1").fetchall())
        identifiers: dict[str, int] = dict(con.execute(
            f"SELECT scheme, count(*) FROM read_parquet({sql_literal(gen / 'identifiers.parquet')}) GROUP BY 1 "
            "ORDER BY 1").fetchall())
    finally:
        con.close()
    return {"catalog": str(catalog_dir), "generation": gen.name, "built_at": manifest.get("built_at"),
            "fingerprint": manifest.get("fingerprint"), "works": manifest.get("works"),
            "works_per_source": per_source, "identifiers": identifiers,
            "notice_events": manifest.get("notice_events", 0),
            "notice_sources": sorted(manifest.get("notice_sources", {})),
            "index_format": _index_format(gen / INDEX_FILE), "index_format_expected": INDEX_FORMAT,
            "shards": _shards(gen),
            "bytes_on_disk": sum(p.stat().st_size for p in gen.rglob("*") if p.is_file())}


def _shards(gen: Path) -> dict[str, Any] | None:
    """The generation's fuzzy index shards as runs use them (``shards.stamp_of``: complete and
    made for this works table), their works and terms; None when runs use the one index."""
    from citeledger.index.shards import SHARDS_DIR, stamp_of

    stamp = stamp_of(gen)
    if stamp is None:
        return None
    return {"shards": stamp["n_shards"], "terms": stamp.get("terms"),
            "works_per_shard": [s.get("works") for s in stamp.get("shards", [])],
            "bytes": sum(p.stat().st_size for p in (gen / SHARDS_DIR).rglob("*") if p.is_file())}


def _index_format(path: Path) -> int | None:
    """The blocking index's format stamp (None when there is no index yet)."""
    if not path.exists():
        return None
    return json.loads(path.read_text()).get("format")


def ledger_runs(ledger_dir: LedgerDir) -> list[dict[str, Any]]:
    """Every run the ledger has begun, oldest first: finished ones with their counts from the runs
    table, unfinished ones (no runs row yet) from their manifest."""
    import duckdb

    from citeledger.ledger.store import LedgerStore
    from citeledger.storage.sql import sql_literal

    ledger = LedgerStore(ledger_dir)
    places = ledger.places
    manifests = sorted(places.manifests.glob("*/manifest.json"))
    finished: dict[str, dict[str, Any]] = {}
    run_files = list((places / "runs").glob("*/run.parquet"))
    if run_files:
        con = duckdb.connect()
        try:
            runs = sql_literal(places / "runs" / "*" / "run.parquet")
            cur = con.execute(f"SELECT * FROM read_parquet({runs},"
                              " union_by_name=true)")
            cols = [d[0] for d in cur.description]
            finished = {row["run_id"]: row for row in (dict(zip(cols, r)) for r in cur.fetchall())}
        finally:
            con.close()
    out = []
    for path in manifests:
        started = json.loads(path.read_text())
        run_id = started["run_id"]
        row = finished.get(run_id)
        out.append({"run_id": run_id, "started_at": started.get("started_at"),
                    "finished_at": row["finished_at"].isoformat() if row and row.get("finished_at") else None,
                    "state": _run_state(ledger, run_id),
                    "trigger": row.get("trigger") if row else None,
                    "references": row.get("references") if row else None,
                    "rejects": row.get("rejects") if row else None,
                    "reference_changes": row.get("reference_changes") if row else None,
                    "states": json.loads(row["state_counts"]) if row and row.get("state_counts") else {}})
    begun = {r["run_id"] for r in out}
    for path in sorted((places / "runs").glob("*/failed.parquet")):  # failed before it began (no manifest)
        failed = ledger.run_failure(path.parent.name)
        if failed is not None and failed["run_id"] not in begun:
            out.append({"run_id": failed["run_id"], "started_at": _iso(failed.get("started_at")),
                        "finished_at": None, "state": "failed", "trigger": failed.get("trigger"),
                        "references": None, "rejects": None, "states": {}})
    return sorted(out, key=lambda r: r["started_at"] or "")


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _run_state(ledger: Any, run_id: str) -> str:
    """finished, failed (its last attempt failed: ``LedgerStore.record_failure``) or unfinished."""
    if ledger.run_finished(run_id):
        return "finished"
    return "failed" if ledger.run_failure(run_id) is not None else "unfinished"


def near_ids(wanted: str, known: list[str], limit: int = 5) -> list[str]:
    """The known ids closest to a mistyped one: those sharing its prefix first, then by edit
    similarity (rapidfuzz), at most ``limit``."""
    from rapidfuzz import fuzz, process

    text = wanted.strip().lower()
    prefixed = [k for k in known if text and k.lower().startswith(text)]
    similar = [k for k, score, _ in process.extract(wanted, known, scorer=fuzz.ratio, limit=limit * 2)
               if score >= 50 and k not in prefixed]
    return (prefixed + similar)[:limit]
