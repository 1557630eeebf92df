"""The build-records flow: write the citation record (JSON, text, HTML) of every paper a run touched."""
from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from citeledger import pipeline
from citeledger.store import latest_run_id


@flow(name="build-records")
def build_records(ledger: str = "data/ledger", catalog: str = "data/catalog", run_id: str | None = None,
                  papers: list[str] | None = None) -> list[str]:
    """Records of ``papers``, or of every paper the run ``run_id`` (default: the latest) touched."""
    logger = get_run_logger()
    if not papers:
        if run_id:
            pipeline.check_run(ledger, run_id)  # a mistyped run id is an error, not "0 records"
        run_id = run_id or latest_run_id(ledger)
        if run_id is None:
            logger.info("the ledger has no run yet: no records to write")
            return []
        papers = pipeline.papers_touched(run_id, ledger, catalog)
    logger.info("writing %d citation records", len(papers))
    written = pipeline.write_records(papers, ledger, catalog)
    return [str(Path(p)) for p in written]
