"""The build-records flow: write the citation record (JSON, text, HTML) of every paper a run touched."""
from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from citeledger.run.finishing import rebuild_records


@flow(name="build-records")
def build_records(ledger: str = "data/ledger", catalog: str = "data/catalog", run_id: str | None = None,
                  papers: list[str] | None = None) -> list[str]:
    """Records of ``papers``, or of every paper the run ``run_id`` (default: the latest) touched."""
    return [str(Path(p)) for p in rebuild_records(ledger, catalog, run_id, papers, get_run_logger())]
