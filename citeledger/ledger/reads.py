"""What other stages read of a ledger's views: the current verdicts of some states, the links and
notices a nightly re-checks, the papers citing some works, a run's transitions and changed strings,
the citing papers' titles read from their own sources."""
from __future__ import annotations

from typing import Any, Sequence

from citeledger.catalog.catalog_store import dict_rows
from citeledger.ledger.ledger_store import connect_views, observations_holding
from citeledger.ledger.views import REFERENCE_CHANGES_OVER, TRANSITIONS_OVER
from citeledger.storage.places import LedgerDir, LedgerPlaces
from citeledger.storage.sql import process_connection, scalar, sql_literal, strings_table


def run_transitions(ledger_dir: LedgerDir, run_id: str) -> int:
    """How many transitions the observations of ``run_id`` recorded."""
    return run_changes(ledger_dir, run_id)[0]

def run_changes(ledger_dir: LedgerDir, run_id: str) -> tuple[int, int]:
    """(transitions, reference changes) the observations of ``run_id`` recorded: state or work
    changes, and known references that came with another raw string. Counted over the observations
    of the references the run read (the ``transitions`` and ``reference_changes`` views over those
    alone: a reference's changes are within its own observations), so the cost follows the run's
    rows and their history, not the ledger's size."""
    parts = LedgerPlaces.of(ledger_dir).parts("observations", run_id)
    if not any(parts.glob("*.parquet")):
        return 0, 0
    con = process_connection()
    try:
        observations_holding(con, ledger_dir, "SELECT DISTINCT citing_paper, reference_index FROM read_parquet("
                             f"{sql_literal(parts / '*.parquet')})", "in_run_files")
        con.execute("CREATE TEMP TABLE read_by_run AS SELECT o.* FROM in_run_files o SEMI JOIN (SELECT DISTINCT "
                    f"citing_paper, reference_index FROM read_parquet({sql_literal(parts / '*.parquet')})) "
                    "USING (citing_paper, reference_index)")
        transitions = scalar(con, f"SELECT count(*) FROM ({TRANSITIONS_OVER.format(source='read_by_run')}) "
                                  "WHERE to_run = ?", [run_id])
        changes = scalar(con, f"SELECT count(*) FROM ({REFERENCE_CHANGES_OVER.format(source='read_by_run')}) "
                              "WHERE to_run = ?", [run_id])
        return int(transitions), int(changes)
    finally:
        con.close()


def current_rows(ledger_dir: LedgerDir, statuses: Sequence[str]) -> list[dict[str, Any]]:
    """Current observations in ``statuses``, with the catalog_seq of the run that made them
    (null for runs written before runs carried it)."""
    con = connect_views(ledger_dir, None)
    try:
        strings_table(con, "wanted", "status", sorted(set(statuses)))
        cols = {r[0] for r in con.execute("DESCRIBE runs").fetchall()}
        seq = "r.catalog_seq" if "catalog_seq" in cols else "NULL::BIGINT"
        con.execute(f"""SELECT c.citing_paper, c.reference_index, c.raw, c.source, c.status, c.work_id,
                              c.extracted_dois, c.extracted_arxiv_ids, c.observation_id, c.run_id,
                              {seq} AS catalog_seq
                       FROM current c LEFT JOIN runs r USING (run_id)
                       WHERE c.status IN (SELECT status FROM wanted)
                       ORDER BY c.citing_paper, c.reference_index""")
        return dict_rows(con)
    finally:
        con.close()

def current_links_and_notices(ledger_dir: LedgerDir) -> tuple[list[str], dict[str, dict[str, Any]], list[str]]:
    """Every work a current observation links to, the latest notice of each work (and of each
    cited DOI with no work), and the DOIs current observations with no work cite."""
    con = connect_views(ledger_dir, None)
    try:
        works = [r[0] for r in con.execute("SELECT DISTINCT work_id FROM current WHERE work_id IS NOT NULL "
                                           "ORDER BY 1").fetchall()]
        dois = [r[0] for r in con.execute("SELECT DISTINCT unnest(extracted_dois) FROM current "
                                          "WHERE work_id IS NULL ORDER BY 1").fetchall() if r[0]]
        con.execute("SELECT * FROM notices")
        return works, {r["work_id"]: r for r in dict_rows(con)}, dois
    finally:
        con.close()

def citing_papers_of_works(ledger_dir: LedgerDir, work_ids: Sequence[str]) -> list[str]:
    """Citing papers whose current observations link to any of ``work_ids``."""
    if not work_ids:
        return []
    con = connect_views(ledger_dir, None)
    try:
        strings_table(con, "wanted", "work_id", sorted(set(work_ids)))
        # a cited DOI with no work has its notice under "doi:<doi>" (notice_check.cited_doi_notice_rows)
        return [r[0] for r in con.execute(
            "SELECT DISTINCT citing_paper FROM current WHERE work_id IN (SELECT work_id FROM wanted) OR (work_id IS "
            "NULL AND list_has_any(extracted_dois, (SELECT list(work_id[5:]) FROM wanted WHERE work_id LIKE 'doi:%'))) "
            "ORDER BY 1").fetchall()]
    finally:
        con.close()


def paper_titles(ledger_dir: LedgerDir) -> dict[str, list[str]]:
    """Each citing paper's title as the latest run read it from the paper's own source (an e-print's
    ``\\title``, a PDF's metadata or first page), with where it was read: paper id -> [title, source]."""
    folder = LedgerPlaces.of(ledger_dir).titles
    if not any(folder.glob("*/*.parquet")):
        return {}
    con = process_connection()
    try:
        rows = con.execute("SELECT citing_paper, arg_max(title, observed_at), arg_max(title_source, observed_at) "
                           f"FROM read_parquet({sql_literal(folder / '*' / '*.parquet')}) GROUP BY 1").fetchall()
    finally:
        con.close()
    return {str(paper): [str(title), str(source)] for paper, title, source in rows if title}
