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

    from citeledger.catalog.catalog_store import CatalogStore
    from citeledger.index.blocking import INDEX_FILE, INDEX_FORMAT
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
    table, unfinished ones (no runs row yet) from their manifest, failed ones from the row of their
    last failed attempt (``LedgerStore.record_failure``). Read with DuckDB alone (``citeledger runs``
    starts without the writer's modules)."""
    import duckdb

    from citeledger.storage.places import LedgerPlaces
    from citeledger.storage.sql import sql_literal

    places = LedgerPlaces.of(ledger_dir)
    rows: dict[str, dict[str, dict[str, Any]]] = {"run": {}, "failed": {}}  # part -> run id -> its row
    files = sorted((places / "runs").glob("*/*.parquet"))
    if files:
        con = duckdb.connect()
        try:
            cur = con.execute(f"SELECT *, parse_filename(filename, true) AS part FROM read_parquet("
                              f"[{', '.join(sql_literal(f) for f in files)}], union_by_name=true, filename=true)")
            cols = [d[0] for d in cur.description]
            for part in (dict(zip(cols, r)) for r in cur.fetchall()):
                rows.setdefault(part["part"], {})[part["run_id"]] = part
        finally:
            con.close()
    finished, failed = rows["run"], rows["failed"]
    out = []
    for path in sorted(places.manifests.glob("*/manifest.json")):
        started = json.loads(path.read_text())
        run_id = started["run_id"]
        row: dict[str, Any] | None = finished.get(run_id)
        out.append({"run_id": run_id, "started_at": started.get("started_at"),
                    "finished_at": row["finished_at"].isoformat() if row and row.get("finished_at") else None,
                    "state": "finished" if row else "failed" if run_id in failed else "unfinished",
                    "trigger": row.get("trigger") if row else None,
                    "references": row.get("references") if row else None,
                    "rejects": row.get("rejects") if row else None,
                    "reference_changes": row.get("reference_changes") if row else None,
                    "states": json.loads(row["state_counts"]) if row and row.get("state_counts") else {}})
    begun = {r["run_id"] for r in out}
    for run_id, attempt in sorted(failed.items()):  # failed before it began (no manifest)
        if run_id not in begun and run_id not in finished:
            out.append({"run_id": run_id, "started_at": _iso(attempt.get("started_at")), "finished_at": None,
                        "state": "failed", "trigger": attempt.get("trigger"), "references": None, "rejects": None,
                        "states": {}})
    return sorted(out, key=lambda r: r["started_at"] or "")


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def near_ids(wanted: str, known: list[str], limit: int = 5) -> list[str]:
    """The known ids closest to a mistyped one: those sharing its prefix first, then by edit
    similarity (rapidfuzz), at most ``limit``."""
    from rapidfuzz import fuzz, process

    text = wanted.strip().lower()
    prefixed = [k for k in known if text and k.lower().startswith(text)]
    similar = [k for k, score, _ in process.extract(wanted, known, scorer=fuzz.ratio, limit=limit * 2)
               if score >= 50 and k not in prefixed]
    return (prefixed + similar)[:limit]
