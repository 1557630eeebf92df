"""The refresh-catalog flow: grow the catalog (and its notice sources) from the files dropped in
a catalog inbox and, when remote is on, from what arXiv, Crossref and Retraction Watch published
since the last refresh (checkpointed harvests). Off by default: no inbox file, no network."""
from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger

from citeledger.nightly import steps as nightly


@flow(name="refresh-catalog")
def refresh_catalog(catalog: str = "data/catalog", catalog_inbox: str | None = "data/catalog-inbox",
                    remote: bool = False) -> dict[str, Any]:
    """Build the catalog inbox's source files (and, with ``remote``, the harvests) into the catalog."""
    logger = get_run_logger()
    report = nightly.ingest_new_sources(catalog, catalog_inbox, remote=remote)
    for error in report.errors:
        logger.warning("refresh: %s", error)
    if report.changed:
        logger.info("catalog %s: %d -> %d works from %d files (%s)", catalog, report.works_before,
                    report.works_after, len(report.files), report.generation)
    else:
        logger.info("catalog %s: nothing new (%d works)", catalog, report.works_after)
    if report.shards:
        logger.info("catalog %s: live generation sharded %d ways, as the catalog was", catalog, report.shards)
    return report.as_dict()
