"""The ledger reads that build citation records: many papers' rows in one pass, the papers a run
touched, the latest run. Read-only, over ``ledger.connect_views`` (the ledger module keeps what is
written)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

from .catalog import _dict_rows
from .ledger import connect_views


Observed = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]


def papers_observations(ledger_dir: str | Path, catalog_dir: str | Path,
                        papers: Sequence[tuple[Sequence[str], str | None]]) -> list[Observed]:
    """One paper's current outbound rows, the current rows of other papers citing its work, and the
    notices of the works it cites, for many papers (each: the forms of its id, its catalog work id) over
    one connection (each row with ``source_observed_at``: when the ledger first read that reference
    string). The ledger's ``current`` view (the latest observation of every reference) is
    computed once, for the rows any of these papers needs, instead of once per paper: a night's
    records cost one pass over the ledger, not one per paper."""
    con = connect_views(ledger_dir, catalog_dir)
    try:
        every_form = sorted({f.lower() for forms, _ in papers for f in forms})
        con.register("every_form", pa.table({"form": pa.array(every_form, pa.string())}))
        con.register("every_work", pa.table({"work_id": pa.array(sorted({w for _, w in papers if w}), pa.string())}))
        con.execute("""CREATE TEMP TABLE cur AS
                       WITH picked AS (SELECT * FROM current
                         WHERE lower(citing_paper) IN (SELECT form FROM every_form)
                            OR work_id IN (SELECT work_id FROM every_work)
                            OR doi IN (SELECT form FROM every_form) OR arxiv_id IN (SELECT form FROM every_form)),
                       first_seen AS (SELECT o.citing_paper, o.reference_index, o.raw, min(o.observed_at) AS seen
                         FROM observations o SEMI JOIN picked p USING (citing_paper, reference_index) GROUP BY ALL)
                       SELECT p.*, f.seen AS source_observed_at FROM picked p
                       LEFT JOIN first_seen f USING (citing_paper, reference_index, raw)""")
        # the notices of the cited works, and of cited DOIs that name no catalog work ("doi:<doi>")
        con.execute("""CREATE TEMP TABLE cur_notices AS SELECT * FROM notices WHERE work_id IN (SELECT work_id FROM cur)
                       OR work_id IN (SELECT 'doi:' || unnest(extracted_dois) FROM cur WHERE work_id IS NULL)""")
        out = []
        for forms, work_id in papers:
            con.register("forms", pa.table({"form": pa.array(sorted(set(f.lower() for f in forms)), pa.string())}))
            con.execute("SELECT * FROM cur WHERE lower(citing_paper) IN (SELECT form FROM forms) "
                        "ORDER BY reference_index, citing_paper")
            outbound = _dict_rows(con)
            con.execute("""SELECT * FROM cur WHERE lower(citing_paper) NOT IN (SELECT form FROM forms)
                           AND (work_id = ? OR doi IN (SELECT form FROM forms) OR arxiv_id IN (SELECT form FROM forms))
                           ORDER BY citing_paper, reference_index""", [work_id])
            inbound = _dict_rows(con)
            con.execute("""SELECT * FROM cur_notices WHERE work_id IN (SELECT work_id FROM cur
                           WHERE lower(citing_paper) IN (SELECT form FROM forms)) OR work_id IN
                           (SELECT 'doi:' || unnest(extracted_dois) FROM cur
                            WHERE work_id IS NULL AND lower(citing_paper) IN (SELECT form FROM forms))""")
            notices = _dict_rows(con)
            con.unregister("forms")
            out.append((outbound, inbound, notices))
        return out
    finally:
        con.close()


def citing_papers(ledger_dir: str | Path, catalog_dir: str | Path, run_id: str | None) -> list[str]:
    """The citing papers of one run, or of the whole ledger."""
    con = connect_views(ledger_dir, catalog_dir)
    try:
        if run_id is None:
            con.execute("SELECT DISTINCT citing_paper FROM current ORDER BY 1")
        else:
            con.execute("SELECT DISTINCT citing_paper FROM observations WHERE run_id = ? ORDER BY 1", [run_id])
        return [r[0] for r in con.fetchall()]
    finally:
        con.close()


def latest_run_id(ledger_dir: str | Path) -> str | None:
    """The most recently finished run of a ledger."""
    con = connect_views(ledger_dir, None)
    try:
        row = con.execute("SELECT run_id FROM runs ORDER BY finished_at DESC, run_id DESC LIMIT 1").fetchone()
        return row[0] if row else None
    finally:
        con.close()
