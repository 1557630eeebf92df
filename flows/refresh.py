"""The refresh-catalog flow: grow the catalog (and its notice sources) from the files dropped in
a catalog inbox and, when remote is on, from what arXiv, Crossref and Retraction Watch published
since the last refresh (checkpointed harvests). Off by default: no inbox file, no network."""
from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from citeledger.nightly import steps as nightly


def refresh_logged(catalog: str, catalog_inbox: str | None, remote: bool) -> dict[str, Any]:
    """``ingest_new_sources``, then say what it did (in the calling flow or task run's log)."""
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


@task(name="refresh-catalog", task_run_name="refresh-catalog", cache_policy=NO_CACHE)
def refresh_catalog_task(catalog: str, catalog_inbox: str | None, remote: bool) -> dict[str, Any]:
    """The nightly's catalog step: the refresh-catalog flow's work as one task of the night."""
    return refresh_logged(catalog, catalog_inbox, remote)


@flow(name="refresh-catalog")
def refresh_catalog(catalog: str = "data/catalog", catalog_inbox: str | None = "data/catalog-inbox",
                    remote: bool = False) -> dict[str, Any]:
    """Build the catalog inbox's source files (and, with ``remote``, the harvests) into the catalog.

    Args:
        catalog: The catalog folder (created by the first refresh).
        catalog_inbox: Folder of new catalog source files (JSONL, CSV); each is moved to
            ``<catalog_inbox>/processed/<generation>/`` once built in. None: no inbox.
        remote: Also harvest what the configured services (arXiv, Crossref, Retraction Watch)
            published since the last refresh. Off: no network.
    """
    return refresh_logged(catalog, catalog_inbox, remote)
