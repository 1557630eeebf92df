"""The search step of the chain: after the local chain, ask the search services for
the usable references it left without a link, and verify their answers with the same verifier.

For each such reference the services are asked in the configured order (``SearchResolver``); each
answer's works join the string's local candidates and go through ``FuzzyResolver.decide_with``:
same features, same threshold, same margin over the runner-up. The first clear winner is the
link (its ``source`` names the service); a too-close call stops the asking (it is declined, as
the local path declines it); a service that cannot answer is noted and the next one asked. The
step decides no state: ``resolution.rule_fuzzy`` takes a clear outcome, and
``rule_unavailable`` a reference whose search failed and found nothing.
"""
from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from resolvers.candidates.fuzzy import FuzzyOutcome
from resolvers.errors import RemoteUnavailable
from resolvers.model import Reason, Reference, Work
from resolvers.parsing.fields import ParsedReference
from resolvers.remote.settings import SEARCH_SOURCES

if TYPE_CHECKING:  # the HTTP clients load only when a run has search services on
    from resolvers.context import ReferenceContext
    from resolvers.remote.search import RequestBudget, SearchAnswer, SearchResolver

# the local outcomes a search may change: nothing found, nothing good enough, or only a notice
SEARCHABLE = frozenset({Reason.NO_CANDIDATES, Reason.BELOW_THRESHOLD, Reason.NOTICE_NOT_WORK})
MAX_EVIDENCE_CANDIDATES = 5


@dataclass
class SearchStep:
    """What one batch's search step uses: the services, the run's budget, and which references
    it may send (the nightly sends only new ones)."""

    search: SearchResolver
    budget: RequestBudget
    eligible: Callable[[Reference], bool] = lambda reference: True


def searchable(ctx: "ReferenceContext") -> bool:
    """Usable, no well-formed identifier, and the local chain found no link (nor a close call)."""
    if ctx.uncertain_reason is not None or ctx.ids.any_wellformed:
        return False
    if ctx.locator is not None and ctx.locator.work is not None:
        return False  # venue, volume and first page settled it locally
    return ctx.fuzzy is None or ctx.fuzzy.reason in SEARCHABLE


def run_search_step(contexts: Sequence["ReferenceContext"], fuzzy: Any, step: SearchStep) -> None:
    """Search for every context that qualifies, several at once (the services' rate limits are
    shared by all threads); the outcomes replace the local ones, failures go to ``notes``."""
    todo = [c for c in contexts if searchable(c) and step.eligible(c.reference) and step.search.sendable(c.parsed)]
    if not todo or not step.search.services:
        return
    with ThreadPoolExecutor(max(1, step.search.settings.threads)) as pool:
        results = list(pool.map(lambda c: search_one(c.parsed, fuzzy, step, c.fuzzy), todo))
    for ctx, (outcome, failed) in zip(todo, results):
        if outcome is not None:
            ctx.fuzzy = outcome
        if failed:
            ctx.notes["search_failed"] = failed


def _brief(work: Work) -> dict[str, Any]:
    return {"work_id": work.work_id, "title": work.title, "first_author": work.authors[0] if work.authors else None,
            "year": work.year}


def _answer_evidence(answer: SearchAnswer) -> dict[str, Any]:
    return {"service": answer.service, "query": answer.query, "fetched_at": answer.fetched_at,
            "cached": answer.cached, "set_aside": answer.set_aside,
            "candidates": [_brief(w) for w in answer.works[:MAX_EVIDENCE_CANDIDATES]]}


def search_one(parsed: ParsedReference, fuzzy: Any, step: SearchStep, local: FuzzyOutcome | None = None
               ) -> tuple[FuzzyOutcome | None, dict[str, str]]:
    """Ask the services in turn until one answer gives a clear link or a too-close call; each
    decision weighs the local candidates and every answer so far (a work one service offers is a
    rival of another's). Returns
    the last outcome (the local one, with what was asked, when no service had candidates) and
    the services that failed."""
    failed: dict[str, str] = {}
    asked: list[dict[str, Any]] = []
    last: FuzzyOutcome | None = None
    found_by: dict[str, tuple[Work, str]] = {}  # every service's works so far: rivals of each other
    local_cands: list | None = None  # the string's catalog candidates, retrieved once for all answers
    for service in step.search.services:
        query = step.search.query_for(service, parsed)
        if query is None:
            continue
        try:
            answer = step.search.ask(service, query, step.budget)
        except RemoteUnavailable as exc:
            failed[service] = str(exc)
            continue
        asked.append(_answer_evidence(answer))
        if not answer.works:
            continue
        for work in answer.works:
            found_by.setdefault(work.work_id, (work, service))
        if local_cands is None:
            local_cands = fuzzy.local_candidates(parsed)
        outcome = fuzzy.decide_with(parsed, [w for w, _ in found_by.values()], f"{service}_search", local_cands)
        by = found_by.get(outcome.best.work_id) if outcome.best is not None else None
        source = SEARCH_SOURCES[by[1]] if by is not None else outcome.source
        last = dataclasses.replace(outcome, source=source, evidence={**outcome.evidence, "search": list(asked)})
        if last.clear or last.reason is Reason.TOO_CLOSE_TO_CALL:
            return last, ({} if last.clear else failed)
    if last is None and asked:
        if local is None:
            return FuzzyOutcome(Reason.NO_CANDIDATES, {"query": "search", "candidates": 0, "search": asked}), failed
        return dataclasses.replace(local, evidence={**local.evidence, "search": asked}), failed
    return last, failed
