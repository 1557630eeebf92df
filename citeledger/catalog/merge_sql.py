"""The SQL of the catalog build's merge step (``catalog.merge``): how the rows every source gives
one work become one row, field by field. The columns come from ``row_schema``: a detail column added
there without a merge rule here fails at import."""
from __future__ import annotations

from typing import Callable

from citeledger.works.row_schema import DETAIL_TYPES


# Field by field: the first non-null value by (precedence, newest first). Each rule also says what
# it gives for a work only one row describes (``single``): the same value without an aggregate,
# so the merge groups only the works several rows describe (at 10M works, nearly none).
def pick(col: str, single: bool = False) -> str:
    if single:
        return col
    return f"first({col} ORDER BY precedence, ingested_seq DESC) FILTER (WHERE {col} IS NOT NULL) AS {col}"


def pick_list(col: str, single: bool = False) -> str:
    if single:
        return f"coalesce(CASE WHEN len({col}) > 0 THEN {col} END, []) AS {col}"
    return (f"coalesce(first({col} ORDER BY precedence, ingested_seq DESC) "
            f"FILTER (WHERE len({col}) > 0), []) AS {col}")


def _list(expr: str, single: bool) -> str:
    """The list of ``expr`` over a work's rows (the aggregate keeps nulls, as ``[expr]`` does)."""
    return f"[{expr}]" if single else f"list({expr})"


def union_list(col: str, single: bool = False) -> str:
    return f"list_sort(list_distinct(flatten({_list(col, single)}))) AS {col}"


def newest(col: str, single: bool = False) -> str:
    return col if single else f"max({col}) AS {col}"


# Relations (notice sources) of several sources are all kept: one source's JSON keys patched over
# another's, the best and newest last; a work with one relations value keeps it as it was.
RELATIONS = """CASE WHEN count(DISTINCT relations) > 1 THEN list_reduce(
        list(relations::JSON ORDER BY precedence DESC, ingested_seq) FILTER (WHERE relations IS NOT NULL),
        lambda a, b: json_merge_patch(a, b))::VARCHAR
      ELSE first(relations ORDER BY precedence, ingested_seq DESC) FILTER (WHERE relations IS NOT NULL)
      END AS relations"""

DETAIL_MERGE: dict[str, Callable[[str, bool], str]] = {
    "categories": pick_list, "versions": pick_list, "journal_ref": pick, "comments": pick, "issue": pick,
    "pmcid": pick, "source_ids": union_list, "source_updated": newest,
    # one source gives each count (copies of one source: the best, newest copy's count and its time)
    "cited_by_count_openalex": pick, "cited_by_count_openalex_at": pick,
    "cited_by_count_crossref": pick, "cited_by_count_crossref_at": pick,
}
if set(DETAIL_MERGE) != set(DETAIL_TYPES):
    raise RuntimeError("every detail column of work_row.DETAIL_TYPES needs a merge rule here")

# A source that dates its records (OpenAlex ``updated_date``): of the new copies of one work the
# newest is kept, and one older than what the catalog holds already is dropped. (Undated rows
# pass as they are: the window only runs over the dated ones.)
NEW_LATEST_SQL = """
    CREATE VIEW new_latest AS SELECT * FROM new_works WHERE source_updated IS NULL
    UNION ALL
    SELECT * FROM new_works n
    WHERE n.source_updated IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM old_works o WHERE o.work_id = n.work_id AND o.source_updated > n.source_updated)
    QUALIFY row_number() OVER (PARTITION BY n.work_id, n.sources
                               ORDER BY n.source_updated DESC, n.ingested_seq DESC) = 1"""


def _merged_columns(single: bool) -> str:
    """The merged row's columns from the rows of one work (``single``: from its only row)."""
    doi = "doi" if single else ("first(doi ORDER BY doi LIKE '10.48550/arxiv.%', precedence, ingested_seq DESC) "
                                "FILTER (WHERE doi IS NOT NULL) AS doi")
    alt = _list("list_concat(alt_dois, CASE WHEN doi IS NULL THEN []::VARCHAR[] ELSE [doi] END)", single)
    details = ", ".join(DETAIL_MERGE[col](col, single) for col in DETAIL_TYPES)
    picks = ", ".join(pick(c, single) for c in ("arxiv_id", "title"))
    more = ", ".join(pick(c, single) for c in ("year", "venue", "volume", "first_page", "pmid", "type"))
    return f"""work_id, {doi}, {picks}, {pick_list('authors', single)}, {more},
           list_sort(list_distinct(flatten({alt}))) AS alt_dois,
           {'withdrawn' if single else 'bool_or(withdrawn) AS withdrawn'}, {'relations' if single else RELATIONS},
           list_sort(list_distinct(flatten({_list('sources', single)}))) AS sources,
           {'precedence::INTEGER AS precedence' if single else 'min(precedence)::INTEGER AS precedence'},
           {'ingested_seq' if single else 'max(ingested_seq) AS ingested_seq'}, {details}"""


# Every DOI any source gives a work is kept: the primary one (a journal DOI before arXiv's own
# 10.48550 DOI, then by precedence) and the others as cross-walks, so a reference or a Retraction
# Watch row naming any of them finds the work. Works with one row skip the grouping.
ALL_ROWS_SQL = "CREATE VIEW all_rows AS SELECT * FROM old_works UNION ALL BY NAME SELECT * FROM new_latest"
SHARED_IDS_SQL = "CREATE TABLE shared_ids AS SELECT work_id FROM all_rows GROUP BY work_id HAVING count(*) > 1"
MERGED_SQL = f"""
    SELECT * REPLACE (list_filter(alt_dois, lambda d: d IS DISTINCT FROM doi) AS alt_dois) FROM (
    SELECT {_merged_columns(True)}
    FROM all_rows ANTI JOIN shared_ids USING (work_id)
    UNION ALL
    SELECT {_merged_columns(False)}
    FROM all_rows SEMI JOIN shared_ids USING (work_id)
    GROUP BY work_id)"""

# The same without the shortcut (every work grouped): what the tests compare it with.
MERGED_GROUPED_SQL = f"""
    SELECT * REPLACE (list_filter(alt_dois, lambda d: d IS DISTINCT FROM doi) AS alt_dois) FROM (
    SELECT {_merged_columns(False)} FROM all_rows GROUP BY work_id)"""

_SAME = ("doi", "arxiv_id", "title", "authors", "year", "venue", "volume", "first_page", "pmid", "type",
         "alt_dois", "relations", "sources", *DETAIL_TYPES)

# ingested_seq of a merged work must not change when nothing new arrived, or a re-build would
# change the file: keep the old value unless a new row brought news.
KEEP_SEQ_SQL = """
    UPDATE merged SET ingested_seq = o.ingested_seq FROM old_works o
    WHERE merged.work_id = o.work_id AND merged.withdrawn = o.withdrawn AND """ + " AND ".join(
    f"merged.{col} IS NOT DISTINCT FROM o.{col}" for col in _SAME)

# Identifiers: a work's own ids rank 0, cross-walked ids (a preprint's journal DOI) rank 1.
IDENTIFIERS_SQL = """
    SELECT DISTINCT scheme, value, work_id, rank FROM (
      SELECT 'doi' AS scheme, value, work_id,
             CASE WHEN work_id = 'doi:' || value
                    OR value = '10.48550/arxiv.' || lower(arxiv_id) THEN 0 ELSE 1 END AS rank
      FROM (SELECT doi AS value, work_id, arxiv_id FROM merged WHERE doi IS NOT NULL
            UNION ALL SELECT unnest(alt_dois), work_id, arxiv_id FROM merged)
      UNION ALL
      SELECT 'arxiv', arxiv_id, work_id, 0 FROM merged WHERE arxiv_id IS NOT NULL)
    ORDER BY scheme, value, rank, work_id"""
