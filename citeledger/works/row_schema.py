"""The work row, defined once: the columns of ``resolvers.model.Work`` (each with its Arrow type,
said here and nowhere else) plus the columns only the catalog keeps. ``works.parquet``, the
source readers, the lookups and the fuzzy index all derive their shape from this module."""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Sequence

import pyarrow as pa

from resolvers.model import Work

WORK_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Work))

# The Arrow type of every Work field (a field missing here fails at import, below).
WORK_TYPES: dict[str, pa.DataType] = {
    "work_id": pa.string(), "doi": pa.string(), "arxiv_id": pa.string(), "title": pa.string(),
    "authors": pa.list_(pa.string()), "year": pa.int32(), "venue": pa.string(), "volume": pa.string(),
    "first_page": pa.string(), "pmid": pa.string(), "type": pa.string(), "alt_dois": pa.list_(pa.string()),
    "withdrawn": pa.bool_(),
}

# Only the catalog keeps these: Crossref's update relations (JSON, for notices), the formats that
# gave the work, its best source precedence, and when it arrived or last changed.
CATALOG_TYPES: dict[str, pa.DataType] = {
    "relations": pa.string(), "sources": pa.list_(pa.string()), "precedence": pa.int32(),
    "ingested_seq": pa.int64(),
}

VERSION_TYPE = pa.struct([("version", pa.string()), ("created", pa.string())])

# What a source says beyond the Work fields, kept for users and citation records (the catalog
# readers fill them, the merge keeps them): arXiv's categories, versions (``created`` ISO 8601 UTC
# ``Z``), journal-ref and comments (null for non-arXiv works); the issue and PMC id of OpenAlex /
# Crossref; the source's own record ids (``openalex:W..``, ``dblp:KEY``); and the source record's
# last update (OpenAlex ``updated_date``: of two copies of one record, the newest wins). Citation
# counts as each source states them, each with the time the source's record is of (OpenAlex
# ``cited_by_count`` at its ``updated_date``, Crossref ``is-referenced-by-count`` at its ``indexed``
# time; ISO 8601 UTC ``Z``): a column per source, never summed or merged across sources.
DETAIL_TYPES: dict[str, pa.DataType] = {
    "categories": pa.list_(pa.string()), "versions": pa.list_(VERSION_TYPE), "journal_ref": pa.string(),
    "comments": pa.string(), "issue": pa.string(), "pmcid": pa.string(), "source_ids": pa.list_(pa.string()),
    "source_updated": pa.string(),
    "cited_by_count_openalex": pa.int64(), "cited_by_count_openalex_at": pa.string(),
    "cited_by_count_crossref": pa.int64(), "cited_by_count_crossref_at": pa.string(),
}
CATALOG_TYPES.update(DETAIL_TYPES)

WORKS_SCHEMA = pa.schema([(name, WORK_TYPES[name]) for name in WORK_FIELDS] + list(CATALOG_TYPES.items()))

# What a source row carries before merging: a work plus its relations and details.
SOURCE_FIELDS: tuple[str, ...] = (*WORK_FIELDS, "relations", *DETAIL_TYPES)


def _to_python(arrow_type: pa.DataType) -> Callable[[Any], Any]:
    """How a stored value becomes a Work field: lists become tuples, a null flag False."""
    if pa.types.is_list(arrow_type):
        return lambda v: tuple(v or ())
    if pa.types.is_boolean(arrow_type):
        return bool
    return lambda v: v


_CONVERT = tuple(_to_python(WORK_TYPES[name]) for name in WORK_FIELDS)


def work_from_values(values: Sequence[Any]) -> Work:
    """A Work from its field values in ``WORK_FIELDS`` order (the columnar readers' fast path)."""
    return Work(*(convert(v) for convert, v in zip(_CONVERT, values)))


def works_from_columns(columns: Sequence[Sequence[Any]]) -> list[Work]:
    """Works from their field values by column in ``WORK_FIELDS`` order (``work_from_values`` of
    each row, converted a column at a time)."""
    converted = [col if name not in _CONVERTED else [convert(v) for v in col]
                 for name, convert, col in zip(WORK_FIELDS, _CONVERT, columns)]
    return [Work(*values) for values in zip(*converted)]


_CONVERTED = frozenset(name for name in WORK_FIELDS
                       if pa.types.is_list(WORK_TYPES[name]) or pa.types.is_boolean(WORK_TYPES[name]))


def work_from_row(rec: dict[str, Any]) -> Work:
    """A Work from a catalog row (extra columns ignored, missing ones empty)."""
    return work_from_values([rec["work_id"], *(rec.get(name) for name in WORK_FIELDS[1:])])


def work_row(work: Work) -> dict[str, Any]:
    """A Work's fields as a row (the inverse of ``work_from_row``)."""
    return {name: getattr(work, name) for name in WORK_FIELDS}


def works_jsonl_row(work: Work) -> dict[str, Any]:
    """A work fetched remotely as a works-JSONL row, so a catalog build takes it in: its journal
    DOI (not arXiv's own, which the build derives from the arXiv id); no work id or cross-walks."""
    journal_dois = [d for d in (work.doi, *work.alt_dois) if d and not d.startswith("10.48550/")]
    row = work_row(work)
    del row["work_id"], row["alt_dois"]
    row.update(doi=journal_dois[0] if journal_dois else (work.doi if not work.arxiv_id else None),
               authors=list(work.authors))
    return row
