"""Resolution: an ordered chain of small rules, first hit wins, in the contract's order of states.

1. ``parse_uncertain``   the string is not a usable reference and carries no well-formed identifier
2. ``verified_exact``    a well-formed identifier resolves and the string does not contradict it
3. ``metadata_mismatch`` an identifier resolves but the string's title or year belongs elsewhere
4. ``verified_fuzzy``    the fuzzy matcher found one clearly corroborated work
5. ``malformed_identifier``  an identifier-like token is not well formed, nothing else resolved it
6. ``unavailable``       a remote resolver was needed and could not answer
7. ``unresolved``        nothing resolved a usable reference

Lookups are batched: a ``BatchContext`` gathers every catalog (and remote) answer a batch needs,
then each reference runs through the rules. The fuzzy matcher is a seam: any object with
``match_batch(parsed) -> list[FuzzyOutcome]``; it decides no state (``rule_fuzzy`` and
``rule_unresolved`` turn its outcome into one); without one, references with no identifier stay
``unresolved``. ``fuzzy_verdicts`` runs the fuzzy path alone, for evaluations of the matcher.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from resolvers.candidates.fuzzy import RESOLVER_SOURCE as FUZZY_SOURCE
from resolvers.candidates.fuzzy import FuzzyOutcome
from resolvers.candidates.locator_match import (
    lookup_keys,
    match_locators,
    ocr_found,
    page_variants,
    string_locators,
    string_ocr_locators,
)
from resolvers.catalog import CatalogLookup
from resolvers.context import BatchContext, ReferenceContext, Rule
from resolvers.errors import RemoteBatchUnavailable, RemoteUnavailable
from resolvers.identifiers.batch import extract_batch
from resolvers.model import ExtractedIdentifiers, Reason, Reference, Status, Verdict, Work
from resolvers.parsing.fields import ParsedReference, apply_fields, parse_reference
from resolvers.parsing.lazy import lazy_parse
from resolvers.parsing.quality import parse_uncertain_reason
from resolvers.search_step import SearchStep, run_search_step
from resolvers.verification.agreement import check_agreement


class FuzzyMatcher(Protocol):
    """Takes the parsed records of usable strings (each string is parsed once, by the chain) and
    returns one outcome each; ``rule_fuzzy`` decides what state an outcome is."""

    def match_batch(self, parsed: Sequence[ParsedReference]) -> list[FuzzyOutcome]: ...


class RemoteLookup(Protocol):
    """A remote resolver. Each answer is a Work (found) or None (the service says no such
    identifier); an identifier left out of the answer is one no enabled service can check.
    Raises ``RemoteUnavailable`` when a needed service cannot answer; a
    ``RemoteBatchUnavailable`` keeps in ``answered`` what was settled before the failure."""

    def lookup_arxiv(self, arxiv_ids: Sequence[str]) -> dict[str, Work | None]: ...

    def lookup_doi(self, dois: Sequence[str]) -> dict[str, Work | None]: ...


def remote_name(scheme: str, identifier: str) -> str:
    """The ``resolver_source`` of a remote answer: which service settled the identifier."""
    if scheme == "arxiv" or identifier.startswith("10.48550/arxiv."):
        return "arxiv_api"
    return "crossref_api"


# --- the batch context ---------------------------------------------------------------------


def _work_evidence(work: Work) -> dict[str, Any]:
    return {"work_id": work.work_id, "doi": work.doi, "arxiv_id": work.arxiv_id, "title": work.title,
            "year": work.year}


def rule_parse_uncertain(ref: ReferenceContext, batch: BatchContext) -> Verdict | None:
    if ref.ids.any_wellformed or ref.uncertain_reason is None:
        return None
    return Verdict(Status.PARSE_UNCERTAIN, ref.uncertain_reason,
                   evidence={"rule": "parse_uncertain", "why": ref.uncertain_reason.value})


def identify(ref: ReferenceContext, batch: BatchContext) -> Verdict | None:
    """``rule_identifier``, run once per reference (the batch's lookups are complete when the
    chain calls it) and kept for ``decide``."""
    if not ref.identifier_tried:
        ref.identified, ref.identifier_tried = rule_identifier(ref, batch), True
    return ref.identified


def rule_identifier(ref: ReferenceContext, batch: BatchContext) -> Verdict | None:
    """Exact resolution by arXiv id, then DOI. Takes the first identifier whose work the string
    does not contradict; if every resolved one is contradicted, reports the first mismatch."""
    hits: list[tuple[str, str, Work]] = []
    for arxiv_id in ref.ids.arxiv_ids:
        work = batch.by_arxiv.get(arxiv_id)
        if work is not None:
            hits.append(("arxiv_id", arxiv_id, work))
    for doi in ref.ids.dois:
        work = batch.by_doi.get(doi)
        if work is not None:
            hits.append(("doi", doi, work))
    if not hits:
        return None
    mismatch: Verdict | None = None
    for source, identifier, work in hits:
        resolver = batch.remote_found.get(identifier, source)
        agreement = check_agreement(ref.reference.raw, ref.parsed, work)
        evidence = {"rule": "identifier", "identifier": identifier, "scheme": source,
                    "work": _work_evidence(work), **agreement.details}
        if len(hits) > 1:
            others = sorted({w.work_id for _, _, w in hits} - {work.work_id})
            if others:
                evidence["other_identified_works"] = others
        if not agreement.contradicts:
            reason = Reason.ARXIV_ID_MATCH if source == "arxiv_id" else Reason.DOI_MATCH
            return Verdict(Status.VERIFIED_EXACT, reason, work, resolver, 1.0, evidence)
        if mismatch is None:
            why = agreement.reason or Reason.FIELDS_CONTRADICT  # (a contradiction always names its reason)
            mismatch = Verdict(Status.METADATA_MISMATCH, why, work, resolver, 0.5, evidence)
    return mismatch


def fuzzy_link(outcome: FuzzyOutcome) -> Verdict | None:
    """A clear fuzzy winner is ``verified_fuzzy``; anything else is no link (``rule_unresolved``
    reports the outcome's reason and evidence)."""
    if not outcome.clear or outcome.best is None:
        return None
    return Verdict(Status.VERIFIED_FUZZY, Reason.FUZZY_MATCH, outcome.best, outcome.source, outcome.score,
                   outcome.evidence)


def rule_fuzzy(ref: ReferenceContext, batch: BatchContext) -> Verdict | None:
    verdict = fuzzy_link(ref.fuzzy) if ref.fuzzy is not None else None
    if verdict is None or verdict.work is None:
        return None
    if _names_another_work(ref, verdict.work):
        ref.notes["fuzzy_vetoed"] = {"candidate": verdict.work.work_id, "why": "string's identifier names another work",
                                     "score": verdict.score}
        return None
    return verdict


def _names_another_work(ref: ReferenceContext, work: Work) -> bool:
    """A string that names its own identifier, which is not this work's, cites another work."""
    work_dois = {d for d in (work.doi, *work.alt_dois) if d}
    return bool((ref.ids.dois and not work_dois & set(ref.ids.dois)) or
                (ref.ids.arxiv_ids and work.arxiv_id and work.arxiv_id not in ref.ids.arxiv_ids))


def rule_venue_locator(ref: ReferenceContext, batch: BatchContext) -> Verdict | None:
    """A string no fuzzy match settled whose venue, volume and first page name one catalog work
    that nothing in the string contradicts (``locator_match``): ``verified_fuzzy``."""
    outcome = ref.locator
    if outcome is None or not outcome.clear or outcome.work is None or _names_another_work(ref, outcome.work):
        return None
    return Verdict(Status.VERIFIED_FUZZY, Reason.VENUE_VOLUME_PAGE, outcome.work, FUZZY_SOURCE, outcome.score,
                   outcome.evidence)


def rule_malformed(ref: ReferenceContext, batch: BatchContext) -> Verdict | None:
    if not ref.ids.malformed:
        return None
    first = ref.ids.malformed[0]
    reason = Reason.MALFORMED_ARXIV_ID if first.scheme == "arxiv" else Reason.MALFORMED_DOI
    return Verdict(Status.MALFORMED_IDENTIFIER, reason, evidence={
        "rule": "malformed_identifier",
        "malformed": [{"scheme": m.scheme, "token": m.token, "why": m.why} for m in ref.ids.malformed]})


def rule_unavailable(ref: ReferenceContext, batch: BatchContext) -> Verdict | None:
    """A needed remote answer is missing: an identifier lookup, or a search service
    that failed while no other service's answer gave a link."""
    failed = {i: batch.remote_failed[i] for i in (*ref.ids.arxiv_ids, *ref.ids.dois) if i in batch.remote_failed}
    searched = ref.notes.get("search_failed")
    if not failed and not searched:
        return None
    evidence: dict[str, Any] = {"rule": "unavailable", "failed": failed, "retry": "next run"}
    if searched:
        evidence["search_failed"] = searched
        if ref.fuzzy is not None:
            evidence["fuzzy"] = ref.fuzzy.evidence
    return Verdict(Status.UNAVAILABLE, Reason.REMOTE_UNAVAILABLE, evidence=evidence)


def rule_unresolved(ref: ReferenceContext, batch: BatchContext) -> Verdict:
    evidence: dict[str, Any] = {"rule": "unresolved"}
    if ref.ids.any_wellformed:
        evidence["identifiers_not_in_catalog"] = [*ref.ids.arxiv_ids, *ref.ids.dois]
        reason = Reason.IDENTIFIER_NOT_IN_CATALOG
    elif ref.fuzzy is not None:
        reason = ref.fuzzy.reason if not ref.fuzzy.clear else Reason.NO_CANDIDATES
        evidence["fuzzy"] = ref.fuzzy.evidence
    else:
        reason = Reason.NO_IDENTIFIER
    if ref.locator is not None:
        evidence["venue_locator"] = ref.locator.evidence
    if ref.notes.get("fuzzy_vetoed"):
        evidence["fuzzy_vetoed"] = ref.notes["fuzzy_vetoed"]
        if ref.fuzzy is not None:
            evidence["fuzzy"] = ref.fuzzy.evidence
    return Verdict(Status.UNRESOLVED, reason, evidence=evidence)


RULES: tuple[Rule, ...] = (rule_parse_uncertain, identify, rule_fuzzy, rule_venue_locator, rule_malformed,
                           rule_unavailable)


def decide(ref: ReferenceContext, batch: BatchContext) -> Verdict:
    """First rule that answers wins; ``unresolved`` closes the chain."""
    for rule in RULES:
        verdict = rule(ref, batch)
        if verdict is not None:
            return verdict
    return rule_unresolved(ref, batch)


# --- the batch driver ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resolution:
    reference: Reference
    ids: ExtractedIdentifiers
    verdict: Verdict


def fuzzy_verdicts(fuzzy: FuzzyMatcher, raws: Sequence[str]) -> list[Verdict]:
    """The chain's fuzzy path alone (no identifiers, no catalog lookups), for evaluations of the
    matcher: ``parse_uncertain`` for unusable strings, else the state of the fuzzy outcome."""
    parsed = [parse_reference(raw) for raw in raws]
    reasons = [parse_uncertain_reason(raw, p, False) for raw, p in zip(raws, parsed)]
    usable = [i for i, reason in enumerate(reasons) if reason is None]
    outcomes = dict(zip(usable, fuzzy.match_batch([parsed[i] for i in usable]) if usable else []))
    verdicts = []
    for i, reason in enumerate(reasons):
        if reason is not None:
            verdicts.append(Verdict(Status.PARSE_UNCERTAIN, reason, evidence={"rule": "parse_uncertain",
                                                                             "why": reason.value}))
            continue
        outcome = outcomes[i]
        verdicts.append(fuzzy_link(outcome) or Verdict(Status.UNRESOLVED, outcome.reason, evidence=outcome.evidence))
    return verdicts


def apply_rule_chain(references: Sequence[Reference], catalog: CatalogLookup,
                  fuzzy: FuzzyMatcher | None = None, remote: RemoteLookup | None = None,
                  search: SearchStep | None = None) -> list[Resolution]:
    """Resolve a batch: one catalog query per identifier scheme, one fuzzy call for the rest,
    then (``search``) the search services for what is still without a link."""
    found = extract_batch([r.raw for r in references])  # (strings RE2 says hold none are not scanned)
    contexts = [ReferenceContext(r, ids, _parsed(r)) for r, ids in zip(references, found)]

    arxiv_wanted = sorted({a for c in contexts for a in c.ids.arxiv_ids})
    doi_wanted = sorted({d for c in contexts for d in c.ids.dois})
    batch = BatchContext(by_arxiv=catalog.works_by_arxiv_id(arxiv_wanted),
                         by_doi=catalog.works_by_doi(doi_wanted), remote_failed={})
    if remote is not None:
        _ask_remote(contexts, batch, remote)

    # the fuzzy matcher sees usable strings only: an unusable one that carries an identifier the
    # catalog lacks ends ``unresolved`` by that identifier, never by a fuzzy outcome. Whether a
    # string is usable matters only when no identifier settled it (``rule_parse_uncertain`` and
    # the search step pass over strings with a well-formed identifier), so only those are judged.
    pending = []
    for c in contexts:
        if identify(c, batch) is None:
            c.uncertain_reason = parse_uncertain_reason(c.reference.raw, c.parsed, False)
            if c.uncertain_reason is None:
                pending.append(c)
    if fuzzy is not None and pending:
        for ctx, outcome in zip(pending, fuzzy.match_batch([c.parsed for c in pending])):
            ctx.fuzzy = outcome
    _match_locators([c for c in pending if c.fuzzy is None or not c.fuzzy.clear], catalog)
    if search is not None and fuzzy is not None:
        run_search_step(contexts, fuzzy, search)
    return [Resolution(c.reference, c.ids, decide(c, batch)) for c in contexts]


def _parsed(reference: Reference) -> ParsedReference:
    """The string's parse, made as far as the rules read it (``lazy_parse``); a reference with
    fields of its own (a ``.bib`` entry, GROBID's parse) is parsed at once, its fields over it."""
    if reference.fields:
        return apply_fields(parse_reference(reference.raw), dict(reference.fields))
    return lazy_parse(reference.raw)


def _match_locators(contexts: list[ReferenceContext], catalog: CatalogLookup) -> None:
    """Venue + volume + first page outcomes for the strings the fuzzy matcher left unlinked, with
    one catalog lookup for the batch (a catalog without the lookup is skipped)."""
    by_locator = getattr(catalog, "works_by_locator", None)
    if by_locator is None:
        return
    keys = {id(c): lookup_keys(string_locators(c.parsed)) for c in contexts}
    wanted = sorted({k for ks in keys.values() for k in ks})
    found = by_locator(wanted) if wanted else {}
    for c in contexts:
        c.locator = match_locators(c.parsed, keys[id(c)], found)
    _match_ocr_locators([c for c in contexts if c.locator is None], catalog)


def _match_ocr_locators(contexts: list[ReferenceContext], catalog: CatalogLookup) -> None:
    """For strings none of whose venue keys is at its volume and page: the venue compared by its
    OCR skeleton ("Physica1 Rcview E") among the works printed at that volume and page."""
    at_volume_page = getattr(catalog, "works_at_volume_page", None)
    if at_volume_page is None or not contexts:
        return
    keys = {id(c): lookup_keys(string_ocr_locators(c.parsed)) for c in contexts}
    pairs = sorted({(k[1], page) for ks in keys.values() for k in ks for page in page_variants(k[2])})
    if not pairs:
        return
    at_pages = at_volume_page(pairs)
    for c in contexts:
        c.locator = match_locators(c.parsed, keys[id(c)], ocr_found(keys[id(c)], at_pages), ocr=True)


def _ask_remote(contexts: list[ReferenceContext], batch: BatchContext, remote: RemoteLookup) -> None:
    """Ask the remote resolver for identifiers the catalog lacks, for references no catalog
    identifier already settles. A failure marks those identifiers: the reference is
    ``unavailable`` (retried next run), never ``unresolved``."""
    need_arxiv: set[str] = set()
    need_doi: set[str] = set()
    for c in contexts:
        if any(a in batch.by_arxiv for a in c.ids.arxiv_ids) or any(d in batch.by_doi for d in c.ids.dois):
            continue
        need_arxiv.update(c.ids.arxiv_ids)
        need_doi.update(c.ids.dois)
    for scheme, wanted, lookup, table in (("arxiv", need_arxiv, remote.lookup_arxiv, batch.by_arxiv),
                                          ("doi", need_doi, remote.lookup_doi, batch.by_doi)):
        if not wanted:
            continue
        failure: RemoteUnavailable | None = None
        try:
            answers = lookup(sorted(wanted))
        except RemoteBatchUnavailable as exc:
            answers, failure = dict(exc.answered), exc
        except RemoteUnavailable as exc:
            answers, failure = {}, exc
        if failure is not None:
            for identifier in wanted - set(answers):
                batch.remote_failed[identifier] = str(failure)
        for identifier, work in answers.items():
            if work is not None and identifier in wanted:
                table[identifier] = work
                batch.remote_found[identifier] = remote_name(scheme, identifier)
