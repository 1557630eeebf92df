"""OpenAlex works snapshot (``works/updated_date=*/part_*.gz``, one work object a line) -> work rows.

The conversion itself is ``resolvers.openalex.openalex_work`` (the OpenAlex search client uses
the same one); this adds what only a catalog row keeps: ``is_retracted`` as a notice source (in
``relations``), the OpenAlex id and ``updated_date`` (of two copies of one work, the newest wins
at the merge), the issue, the PMC id, and ``cited_by_count`` with the ``updated_date`` it is of.
"""
from __future__ import annotations

import dataclasses
import json

from citeledger.sources.source_rows import SourceRow, citation_count, utc_time
from resolvers.model import Work
from resolvers.openalex import openalex_work

WORK_FIELDS = tuple(f.name for f in dataclasses.fields(Work))


def _relations(is_retracted: bool, openalex_id: str | None) -> str | None:
    """A retraction flag as a notice source (read back by ``notice_sources.events_from_openalex``)."""
    if is_retracted:
        return json.dumps({"openalex": {"id": openalex_id, "is_retracted": True}}, sort_keys=True)
    return None


def work_from_openalex(obj: dict) -> SourceRow | None:
    """One OpenAlex work object -> a work row (None: no identifier and no title)."""
    found = openalex_work(obj)
    if found is None:
        return None
    return SourceRow(
        **{name: getattr(found.work, name) for name in WORK_FIELDS},
        relations=_relations(found.is_retracted, found.openalex_id), issue=found.issue, pmcid=found.pmcid,
        source_ids=(f"openalex:{found.openalex_id}",) if found.openalex_id else (),
        source_updated=found.updated_date,
        cited_by_count_openalex=(count := citation_count(obj.get("cited_by_count"))),
        cited_by_count_openalex_at=utc_time(found.updated_date) if count is not None else None,
    )
