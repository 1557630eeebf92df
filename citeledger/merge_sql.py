"""The SQL of the catalog build's merge step (``catalog.merge``): how the rows every source gives
one work become one row, field by field. The columns come from ``work_row``: a detail column added
there without a merge rule here fails at import."""
from __future__ import annotations

from typing import Callable

from .work_row import DETAIL_TYPES


# Field by field: the first non-null value by (precedence, newest first).
def pick(col: str) -> str:
    return f"first({col} ORDER BY precedence, ingested_seq DESC) FILTER (WHERE {col} IS NOT NULL) AS {col}"


def pick_list(col: str) -> str:
    return (f"coalesce(first({col} ORDER BY precedence, ingested_seq DESC) "
            f"FILTER (WHERE len({col}) > 0), []) AS {col}")


def union_list(col: str) -> str:
    return f"list_sort(list_distinct(flatten(list({col})))) AS {col}"


def newest(col: str) -> str:
    return f"max({col}) AS {col}"


# Relations (notice sources) of several sources are all kept: one source's JSON keys patched over
# another's, the best and newest last; a work with one relations value keeps it as it was.
RELATIONS = """CASE WHEN count(DISTINCT relations) > 1 THEN list_reduce(
        list(relations::JSON ORDER BY precedence DESC, ingested_seq) FILTER (WHERE relations IS NOT NULL),
        lambda a, b: json_merge_patch(a, b))::VARCHAR
      ELSE first(relations ORDER BY precedence, ingested_seq DESC) FILTER (WHERE relations IS NOT NULL)
      END AS relations"""

DETAIL_MERGE: dict[str, Callable[[str], str]] = {
    "categories": pick_list, "versions": pick_list, "journal_ref": pick, "comments": pick, "issue": pick,
    "pmcid": pick, "source_ids": union_list, "source_updated": newest,
}
if set(DETAIL_MERGE) != set(DETAIL_TYPES):
    raise RuntimeError("every detail column of work_row.DETAIL_TYPES needs a merge rule here")
_DETAILS = ", ".join(DETAIL_MERGE[col](col) for col in DETAIL_TYPES)

# A source that dates its records (OpenAlex ``updated_date``): of the new copies of one work the
# newest is kept, and one older than what the catalog holds already is dropped.
NEW_LATEST_SQL = """
    CREATE VIEW new_latest AS SELECT * FROM new_works n
    WHERE n.source_updated IS NULL OR NOT EXISTS (
        SELECT 1 FROM old_works o WHERE o.work_id = n.work_id AND o.source_updated > n.source_updated)
    QUALIFY n.source_updated IS NULL OR row_number() OVER (
        PARTITION BY n.work_id, n.sources, n.source_updated IS NULL
        ORDER BY n.source_updated DESC, n.ingested_seq DESC) = 1"""

# Every DOI any source gives a work is kept: the primary one (a journal DOI before arXiv's own
# 10.48550 DOI, then by precedence) and the others as cross-walks, so a reference or a Retraction
# Watch row naming any of them finds the work.
MERGED_SQL = f"""
    SELECT * REPLACE (list_filter(alt_dois, lambda d: d IS DISTINCT FROM doi) AS alt_dois) FROM (
    SELECT work_id,
           first(doi ORDER BY doi LIKE '10.48550/arxiv.%', precedence, ingested_seq DESC)
               FILTER (WHERE doi IS NOT NULL) AS doi,
           {pick('arxiv_id')}, {pick('title')}, {pick_list('authors')},
           {pick('year')}, {pick('venue')}, {pick('volume')}, {pick('first_page')}, {pick('pmid')},
           {pick('type')},
           list_sort(list_distinct(flatten(list(list_concat(alt_dois,
               CASE WHEN doi IS NULL THEN []::VARCHAR[] ELSE [doi] END))))) AS alt_dois,
           bool_or(withdrawn) AS withdrawn, {RELATIONS},
           list_sort(list_distinct(flatten(list(sources)))) AS sources,
           min(precedence)::INTEGER AS precedence, max(ingested_seq) AS ingested_seq, {_DETAILS}
    FROM (SELECT * FROM old_works UNION ALL BY NAME SELECT * FROM new_latest)
    GROUP BY work_id) ORDER BY work_id"""

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
