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
        con.execute("SELECT * FROM cur ORDER BY citing_paper, reference_index")
        rows = _dict_rows(con)
        notices = {r["work_id"]: r for r in _dict_rows(con.execute("SELECT * FROM cur_notices ORDER BY work_id"))}
        passed = _PassRows(rows, notices)
        return [passed.paper(forms, work_id) for forms, work_id in papers]
    finally:
        con.close()


class _PassRows:
    """The rows of one pass indexed by what a paper's rows are selected by: its citing-paper forms
    (lower case), and for inbound rows the cited work id, DOI and arXiv id."""

    def __init__(self, rows: list[dict[str, Any]], notices: dict[str, dict[str, Any]]):
        self.notices = notices
        self.by: dict[str, dict[Any, list[dict[str, Any]]]] = {k: {} for k in ("citing", "work_id", "doi", "arxiv_id")}
        for row in rows:  # in citing paper, reference index order: each list keeps it
            self.by["citing"].setdefault((row["citing_paper"] or "").lower(), []).append(row)
            for key in ("work_id", "doi", "arxiv_id"):
                if row[key] is not None:
                    self.by[key].setdefault(row[key], []).append(row)

    def paper(self, forms: Sequence[str], work_id: str | None) -> Observed:
        """One paper's outbound rows (by reference index, then citing paper), the rows of other
        papers citing its work (by citing paper, index) and the notices of what it cites: what
        one query per paper used to select."""
        forms = sorted({f.lower() for f in forms})
        outbound = [r for f in forms for r in self.by["citing"].get(f, ())]
        outbound.sort(key=lambda r: (r["reference_index"], r["citing_paper"]))
        candidates = [*self.by["work_id"].get(work_id, ()), *(r for f in forms for key in ("doi", "arxiv_id")
                                                               for r in self.by[key].get(f, ()))]
        inbound = list({id(r): r for r in candidates if (r["citing_paper"] or "").lower() not in forms}.values())
        inbound.sort(key=lambda r: (r["citing_paper"], r["reference_index"]))
        cited = {r["work_id"] for r in outbound if r["work_id"]}
        cited |= {"doi:" + d for r in outbound if r["work_id"] is None for d in r["extracted_dois"] or ()}
        return outbound, inbound, [self.notices[w] for w in sorted(cited) if w in self.notices]


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
