"""The ledger reads that build citation records: many papers' rows in one pass, the papers a run
touched, the latest run. Read-only, over ``ledger.connect_views`` (the ledger module keeps what is
written)."""
from __future__ import annotations

from operator import itemgetter
from typing import Any, Sequence

import pyarrow as pa

from citeledger.ledger.ledger_store import connect_views, observations_holding
from citeledger.records.record_json import plain_value
from citeledger.storage.places import CatalogDir, LedgerDir, LedgerPlaces
from citeledger.storage.sql import process_connection, sql_literal, strings_table

Observed = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]

# A time as the records write it (``records.plain_value`` of a UTC datetime), made by DuckDB: turning
# 90,000 rows' times into Python datetimes (with their zone) and back into text cost more than
# the query itself.
ISO_Z = "strftime({} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ')"

# The latest observation of every reference (the ``current`` view's rule: latest ``observed_at``,
# then ``run_id``) is picked over the key columns only, and only the wanted ones are read whole.
# Most references have one observation: those are found by a hash aggregate (``n = 1``), and only
# references observed more than once are ranked by a window (DuckDB's window over every reference
# of the ledger was most of the pass: 3.4 of 5.4 CPU s for 5,000 of 10,000 papers). A reference seen
# once was first read when it was observed; one seen more often, at the earliest observation with the
# same string (``first_seen``). No ORDER BY: ``_PassRows`` and the builder sort what they keep.
# Only the references one of whose observations names a pass's paper (as citing paper, work, DOI or
# arXiv id) are ranked (``candidates``: those whose latest observation does are among them), and only
# the part files holding an observation of one are read whole (``pass_observations``,
# ``ledger_store.observations_holding``), so a pass costs a scan of the ledger's key columns and then work in
# proportion to its papers' rows and their files, not the ledger's.
NAMES_A_PAPER = """(lower(citing_paper) IN (SELECT form FROM every_form) OR work_id IN (SELECT work_id FROM every_work)
          OR doi IN (SELECT form FROM every_form) OR arxiv_id IN (SELECT form FROM every_form))"""
PASS_ROWS_SQL = f"""
WITH candidates AS (SELECT DISTINCT citing_paper, reference_index FROM pass_observations WHERE {NAMES_A_PAPER}),
  candidate_rows AS (SELECT o.* FROM pass_observations o SEMI JOIN candidates USING (citing_paper, reference_index)),
  grouped AS (SELECT citing_paper, reference_index, count(*) AS n, any_value(observed_at) AS observed_at,
         any_value(run_id) AS run_id, any_value(work_id) AS work_id, any_value(doi) AS doi,
         any_value(arxiv_id) AS arxiv_id
       FROM candidate_rows GROUP BY citing_paper, reference_index),
  multi AS (SELECT o.citing_paper, o.reference_index, o.observed_at, o.run_id, o.work_id, o.doi, o.arxiv_id
       FROM candidate_rows o
       SEMI JOIN (SELECT citing_paper, reference_index FROM grouped WHERE n > 1) USING (citing_paper, reference_index)
       QUALIFY row_number() OVER (PARTITION BY citing_paper, reference_index
                                  ORDER BY observed_at DESC, run_id DESC) = 1),
  keys AS (SELECT citing_paper, reference_index, n, observed_at, run_id, work_id, doi, arxiv_id FROM grouped WHERE n = 1
       UNION ALL SELECT m.citing_paper, m.reference_index, g.n, m.observed_at, m.run_id, m.work_id, m.doi, m.arxiv_id
       FROM multi m JOIN grouped g USING (citing_paper, reference_index)),
  wanted AS (SELECT citing_paper, reference_index, n, observed_at AS latest_at, run_id AS latest_run FROM keys
       WHERE {NAMES_A_PAPER}),
  mine AS (SELECT o.*, w.n, w.latest_at, w.latest_run
       FROM candidate_rows o JOIN wanted w USING (citing_paper, reference_index)),
  first_seen AS (SELECT citing_paper, reference_index, raw, min(observed_at) AS seen
       FROM mine WHERE n > 1 GROUP BY ALL),
  picked AS (SELECT * FROM mine WHERE n = 1 AND observed_at = latest_at AND run_id = latest_run
       UNION ALL (SELECT * FROM mine WHERE n > 1 AND observed_at = latest_at AND run_id = latest_run
                  QUALIFY row_number() OVER (PARTITION BY citing_paper, reference_index) = 1))
SELECT p.* EXCLUDE (n, latest_at, latest_run) REPLACE ({ISO_Z.format("p.observed_at")} AS observed_at),
  {ISO_Z.format("(CASE WHEN p.raw IS NULL THEN NULL WHEN p.n = 1 THEN p.observed_at ELSE f.seen END)")}
    AS source_observed_at
FROM picked p LEFT JOIN first_seen f USING (citing_paper, reference_index, raw)"""


# The statements one pass asks the ledger, whatever the number of its papers: PASS_ROWS_SQL and the
# cited works' notices (``pass_rows``).
PASS_STATEMENTS = 2


def papers_observations(ledger_dir: LedgerDir, catalog_dir: CatalogDir,
                        papers: Sequence[tuple[Sequence[str], str | None]]) -> list[Observed]:
    """One paper's current outbound rows, the current rows of other papers citing its work, and the
    notices of the works it cites, for many papers (each: the forms of its id, its catalog work id) over
    one connection (each row with ``source_observed_at``: when the ledger first read that reference
    string; times as ISO text with ``Z``, as the records write them). The latest observation of
    every reference is found once for all these papers, not once per paper: a night's records
    cost one pass over the ledger, not one per paper."""
    passed = pass_rows(ledger_dir, catalog_dir, papers)
    return passed.observed(passed.plans)


def pass_rows(ledger_dir: LedgerDir, catalog_dir: CatalogDir,
              papers: Sequence[tuple[Sequence[str], str | None]]) -> "PassRows":
    """The pass's rows and notices of these papers, kept as Arrow (``PassRows``: a paper's rows are
    made into dicts when its record is built, a few hundred papers at a time)."""
    con = connect_views(ledger_dir, catalog_dir, ("notices",))
    try:
        every_form = sorted({f.lower() for forms, _ in papers for f in forms})
        strings_table(con, "every_form", "form", every_form)
        strings_table(con, "every_work", "work_id", sorted({w for _, w in papers if w}))
        observations_holding(con, ledger_dir, f"SELECT citing_paper, reference_index FROM observation_files "
                                              f"WHERE {NAMES_A_PAPER}", "pass_observations")
        table = con.sql(PASS_ROWS_SQL).to_arrow_table()
        passed = PassRows(table, papers)
        # the notices of the cited works, and of cited DOIs that name no catalog work ("doi:<doi>")
        strings_table(con, "cited", "work_id", sorted(passed.cited()))
        passed.notices = {r["work_id"]: r for r in _arrow_rows(con.sql(
            f"SELECT * REPLACE ({ISO_Z.format('checked_at')} AS checked_at) FROM notices "
            "WHERE work_id IN (SELECT work_id FROM cited) ORDER BY work_id").to_arrow_table())}
        return passed
    finally:
        con.close()


def _arrow_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as dicts, made column by column (half the cost of DuckDB's row-by-row fetch), their
    values plain as records write them (``records.plain_value``: an integral float as the integer, NaN
    as None), so the record builder need not copy them (``rows_plain``)."""
    names = table.column_names
    return [dict(zip(names, values)) for values in zip(*_plain_columns(table))]


def _plain_columns(table: pa.Table) -> list[list[Any]]:
    """Each column's values as Python values, plain as records write them (see ``_arrow_rows``)."""
    columns = []
    for column in table.columns:
        kind = column.type
        values = column.to_pylist()
        if pa.types.is_floating(kind):  # a finite fraction is plain already: no call for most scores
            values = [v if v is None or (v - v == 0 and not v.is_integer()) else plain_value(v) for v in values]
        elif not (pa.types.is_string(kind) or pa.types.is_integer(kind) or pa.types.is_boolean(kind)
                  or (pa.types.is_list(kind) and pa.types.is_string(kind.value_type)) or pa.types.is_null(kind)):
            values = [v if v is None else plain_value(v) for v in values]
        columns.append(values)
    return columns


Plan = tuple[list[int], list[int], list[str]]  # a paper's outbound and inbound row numbers, cited notice keys


class PassRows:
    """The rows of one pass as columns of plain values, indexed by row number: a paper's outbound
    rows by its citing-paper forms (lower case), its inbound rows by the cited work id, DOI and arXiv
    id. ``plans``: each paper's rows and notices; ``observed(plans)`` makes the rows of a group of
    papers into dicts (every row of a pass as a dict at once held some 400 MB for 5,000 papers)."""

    def __init__(self, table: pa.Table, papers: Sequence[tuple[Sequence[str], str | None]]):
        self.names, self.columns = table.column_names, _plain_columns(table)
        self.notices: dict[str, dict[str, Any]] = {}
        column = dict(zip(self.names, self.columns))
        self.citing, self.index, self.work_id = column["citing_paper"], column["reference_index"], column["work_id"]
        self.runs, self.dois = column["run_id"], column["extracted_dois"]
        by: dict[str, dict[Any, list[int]]] = {k: {} for k in ("citing", "work_id", "doi", "arxiv_id")}
        for n, citing in enumerate(self.citing):  # in the table's order: each list keeps it
            by["citing"].setdefault((citing or "").lower(), []).append(n)
        for key in ("work_id", "doi", "arxiv_id"):
            for n, value in enumerate(column[key]):
                if value is not None:
                    by[key].setdefault(value, []).append(n)
        self.by = by
        self.plans = [self._plan(forms, work_id) for forms, work_id in papers]

    def _cited(self, outbound: list[int]) -> set[str]:
        """The notice keys of what these rows cite: their work ids, and ``doi:<doi>`` of the DOIs
        cited by a row that names no work."""
        work_id = self.work_id
        cited = {work_id[n] for n in outbound if work_id[n]}
        return cited | {"doi:" + d for n in outbound if work_id[n] is None for d in self.dois[n] or ()}

    def _plan(self, forms: Sequence[str], work_id: str | None) -> Plan:
        """One paper's outbound rows (by reference index, then citing paper), the rows of other
        papers citing its work (by citing paper, index) and the notices of what it cites."""
        forms = sorted({f.lower() for f in forms})
        citing, index, by = self.citing, self.index, self.by
        outbound = [n for f in forms for n in by["citing"].get(f, ())]
        outbound.sort(key=lambda n: (index[n], citing[n]))
        candidates = [*by["work_id"].get(work_id, ()), *(n for f in forms for key in ("doi", "arxiv_id")
                                                          for n in by[key].get(f, ()))]
        inbound = list(dict.fromkeys(n for n in candidates if (citing[n] or "").lower() not in forms))
        inbound.sort(key=lambda n: (citing[n], index[n]))
        return outbound, inbound, sorted(self._cited(outbound))

    def cited(self) -> set[str]:
        """Every notice key the pass's papers cite (the notices query's keys)."""
        return {key for _, _, keys in self.plans for key in keys}

    def outbound_work_ids(self) -> list[str]:
        """The work ids the pass's papers cite (their catalog rows are read once a pass)."""
        return [self.work_id[n] for outbound, _, _ in self.plans for n in outbound if self.work_id[n]]

    def inbound_citing(self) -> list[str]:
        """The citing papers of the pass's inbound rows."""
        return [str(self.citing[n]) for _, inbound, _ in self.plans for n in inbound]

    def run_ids(self) -> set[str]:
        """The run of every row of the pass's papers (``str``: a null run is ``"None"``)."""
        runs = self.runs
        return {str(runs[n]) for outbound, inbound, _ in self.plans for n in (*outbound, *inbound)}

    def observed(self, plans: Sequence[Plan]) -> list[Observed]:
        """Each plan's rows as dicts (values plain, see ``_arrow_rows``) and its notice rows."""
        numbers = [n for outbound, inbound, _ in plans for n in (*outbound, *inbound)]
        gather = itemgetter(*numbers) if len(numbers) > 1 else lambda column: tuple(column[n] for n in numbers)
        names = self.names
        rows = iter([dict(zip(names, values)) for values in zip(*map(gather, self.columns))])
        got: list[Observed] = []
        for outbound, inbound, keys in plans:
            got.append(([next(rows) for _ in outbound], [next(rows) for _ in inbound],
                        [self.notices[k] for k in keys if k in self.notices]))
        return got
def citing_papers(ledger_dir: LedgerDir, catalog_dir: CatalogDir, run_id: str | None) -> list[str]:
    """The citing papers of one run (read from the run's own observation files), or of the whole
    ledger (those of its observations: the same as ``current``'s, without ranking every reference's
    observations first)."""
    if run_id is not None:
        parts = LedgerPlaces.of(ledger_dir).parts("observations", run_id)
        if not any(parts.glob("*.parquet")):
            return []
        con = process_connection()
        sql = f"SELECT DISTINCT citing_paper FROM read_parquet({sql_literal(parts / '*.parquet')}) ORDER BY 1"
    else:
        con = connect_views(ledger_dir, catalog_dir, ("observations",))
        sql = "SELECT DISTINCT citing_paper FROM observations ORDER BY 1"
    try:
        return [r[0] for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def latest_run_id(ledger_dir: LedgerDir) -> str | None:
    """The most recently finished run of a ledger."""
    con = connect_views(ledger_dir, None, ("runs",))
    try:
        row = con.execute("SELECT run_id FROM runs WHERE finished_at IS NOT NULL "
                          "ORDER BY finished_at DESC, run_id DESC LIMIT 1").fetchone()
        return row[0] if row else None
    finally:
        con.close()
