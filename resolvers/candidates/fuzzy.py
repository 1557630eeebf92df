"""The fuzzy path of the resolution chain: parsed strings with no settling identifier -> outcomes.

The matcher decides no state: it returns a ``FuzzyOutcome`` (best, runner-up, reason, evidence,
score) and the chain's rule (``resolvers.resolution.rule_fuzzy``) turns it into a verdict. The
chain sends only usable strings (``parse_uncertain`` is the chain's rule too).

Per batch: ask the retriever for candidates of every string in one call (title tokens when the parser isolated a
title, the string's most distinctive tokens otherwise), verify each candidate, and link only a
clear winner. References left without a link after a title-only query get a second query from
the whole string's tokens (a wrongly isolated title must not cost the link). Both queries carry
the string's locator keys (volume:page pairs, see ``candidates.locator_tokens``).

A candidate whose title is not the string's (``verify.title_names_another_work``) may not be the
link unless volume and first page agree; it still counts as a rival. The batch driver
(``resolvers.resolution.apply_rule_chain``) hands over the parsed records it already made, so each
string is parsed once.
"""
from __future__ import annotations

import bisect
import heapq
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, fields
from typing import Any, Hashable, Mapping, Sequence

from resolvers.candidates.retrieval import Candidate, Retriever, index_tokens, locator_tokens
from resolvers.model import Reason, Work
from resolvers.parsing.fields import ParsedReference
from resolvers.verification.forms import RefView
from resolvers.verification.verify import (
    LINK_THRESHOLD,
    LOGIT_MARGIN,
    MARGIN,
    Features,
    clear_margin,
    features,
    prepare_forms,
    probability,
    title_names_another_work,
    work_forms,
)
from resolvers.verification.verify_bound import cheap_bound, is_notice, refined_bound

RESOLVER_SOURCE = "raw_fallback"
BOUND_SLACK = 1e-9  # a candidate is left unscored only when its bound is this far below what decides
MIN_TITLE_TERMS = 3
# Outcomes kept per matcher (one per catalog generation in a worker), by parsed string: a string
# resolved again (cited by another paper, a re-run) costs a lookup. About 3 KB each.
OUTCOME_CACHE = 16384
_PARSED_FIELDS = tuple(f.name for f in fields(ParsedReference))


@dataclass(frozen=True, slots=True)
class FuzzyOutcome:
    """What the matcher found for one string. ``reason`` is ``FUZZY_MATCH`` for a clear winner
    (``best``, with ``score``), else why there is none (``NO_CANDIDATES``, ``BELOW_THRESHOLD``,
    ``NOTICE_NOT_WORK``, ``TOO_CLOSE_TO_CALL``); ``evidence`` is what the ledger keeps."""

    reason: Reason
    evidence: dict[str, Any]
    best: Work | None = None
    runner_up: Work | None = None
    score: float | None = None
    source: str = RESOLVER_SOURCE  # the link's ``resolver_source``: a search service's name when it found the work

    @property
    def clear(self) -> bool:
        return self.reason is Reason.FUZZY_MATCH


Scored = tuple[float, Candidate, Features]  # a candidate's score, the candidate, its features


@dataclass(order=True, slots=True)
class _Scored:
    """A fully compared candidate, ordered as ``_decide`` ranks them: score down, then candidate order."""

    neg_p: float
    at: int
    cand: Candidate = field(compare=False)
    f: Features = field(compare=False)
    names_another: bool = field(compare=False)


def _same_work(a: Work, b: Work) -> bool:
    """Two catalog records of one work (an arXiv preprint and its journal version)."""
    if a.work_id == b.work_id:
        return True
    ids_a = {a.doi, *a.alt_dois} - {None}
    ids_b = {b.doi, *b.alt_dois} - {None}
    return bool(ids_a & ids_b)


def _brief(work: Work) -> dict:
    return {"work_id": work.work_id, "title": work.title,
            "first_author": work.authors[0] if work.authors else None}


def parsed_key(p: ParsedReference) -> tuple:
    """Everything of a parse the matcher reads: equal keys, equal outcomes."""
    return tuple(tuple(v) if isinstance(v, list) else v for v in (getattr(p, name) for name in _PARSED_FIELDS))


def string_queries(p: ParsedReference) -> tuple[list[str] | None, list[str]]:
    """A string's two retrieval queries, each with its locator keys: its title's tokens (with a
    ``Name: subtitle`` lead, see ``RefView``; None with fewer than ``MIN_TITLE_TERMS``), and the
    whole string's tokens but numbers."""
    loc = locator_tokens(p.text)
    t_tokens = index_tokens(f"{p.title_lead} {p.title}" if p.title_lead else p.title)
    title = t_tokens + loc if len(t_tokens) >= MIN_TITLE_TERMS else None
    return title, [t for t in index_tokens(p.text) if not t.isdigit()] + loc


class FuzzyResolver:
    """Resolves batches of raw strings against a retriever's catalog."""

    def __init__(self, retriever: Retriever, k: int = 20, link_threshold: float = LINK_THRESHOLD,
                 margin: float = MARGIN, cache_size: int = OUTCOME_CACHE):
        """``cache_size``: outcomes kept by parsed string (0: none); the retriever's catalog must
        not change under the matcher (the pipeline makes one per catalog generation)."""
        self.retriever = retriever
        self.k = k
        self.link_threshold = link_threshold
        self.margin = margin
        self.cache_size = cache_size
        self._outcomes: OrderedDict[Hashable, FuzzyOutcome] = OrderedDict()
        self._lock = threading.Lock()
        # outcomes shared with sibling processes (``publish(outcomes)``, ``take_new() -> outcomes``):
        # the caller's, since a resolver writes no files (``citeledger.engine.fuzzy_outcomes``)
        self.share: Any = None

    def match_batch(self, parsed: Sequence[ParsedReference]) -> list[FuzzyOutcome]:
        """One outcome per parsed string (the chain has set the unusable ones aside). An outcome
        depends on the parsed string and the catalog only (each string's candidates and scores are
        its own), so each distinct parse is matched once and its outcome kept (``cache_size``)."""
        keys = [parsed_key(p) for p in parsed]
        if self.share is not None and self.cache_size > 0:
            self._keep(self.share.take_new())
        with self._lock:
            known = {k: self._outcomes[k] for k in keys if k in self._outcomes}
            for k in known:
                self._outcomes.move_to_end(k)
        todo = {k: p for k, p in zip(keys, parsed) if k not in known}
        found = dict(zip(todo, self._match(list(todo.values())))) if todo else {}
        if self.cache_size > 0 and found:
            self._keep(found)
            if self.share is not None:
                self.share.publish(found)
        return [known[k] if k in known else found[k] for k in keys]

    def _keep(self, outcomes: Mapping[Any, FuzzyOutcome]) -> None:
        """Keep these outcomes, the oldest dropped past ``cache_size``."""
        if not outcomes:
            return
        with self._lock:
            self._outcomes.update(outcomes)
            while len(self._outcomes) > self.cache_size:
                self._outcomes.popitem(last=False)

    def _match(self, parsed: Sequence[ParsedReference]) -> list[FuzzyOutcome]:
        """``match_batch`` over distinct strings."""
        outcomes: list[FuzzyOutcome | None] = [None] * len(parsed)
        views: dict[int, RefView] = {}
        title_q: dict[int, list[str]] = {}
        raw_q: dict[int, list[str]] = {}
        string_q: dict[int, list[str]] = {}
        for i, p in enumerate(parsed):
            views[i] = RefView.of(p)
            title, string_q[i] = string_queries(p)
            if title is not None:
                title_q[i] = title
            else:
                raw_q[i] = string_q[i]
        # the title queries and the whole-string ones of title-less strings in one retrieval (one
        # read of the candidates' rows); the retries of unlinked titles in a second
        # each string's candidate bounds, kept for its retry (most of its candidates come again)
        bounds: dict[int, dict] = {i: {} for i in title_q}
        for i, cands in self._retrieve({**title_q, **raw_q}).items():
            outcomes[i] = self._decide(views[i], cands, "title" if i in title_q else "string", bounds.get(i))
        retry = {i: string_q[i] for i in title_q if not (o := outcomes[i]) or not o.clear}
        for i, cands in self._retrieve(retry).items():
            second = self._decide(views[i], cands, "string", bounds[i])
            if second.clear or second.reason is Reason.TOO_CLOSE_TO_CALL:
                outcomes[i] = second
        return outcomes  # type: ignore[return-value]

    def local_candidates(self, parsed: ParsedReference) -> list[Candidate]:
        """The string's catalog candidates by the queries ``match_batch`` asks (title first, then
        the whole string), each work once: what a search answer is weighed against. The search
        step retrieves them once per reference, however many services it asks."""
        title, string = string_queries(parsed)
        found = self._retrieve(dict(enumerate(q for q in (title, string) if q is not None)))
        cands: dict[str, Candidate] = {}
        for c in (c for i in sorted(found) for c in found[i]):
            cands.setdefault(c.work.work_id, c)
        return list(cands.values())

    def decide_with(self, parsed: ParsedReference, extra: Sequence[Work], query: str,
                    local: Sequence[Candidate] | None = None) -> FuzzyOutcome:
        """The same verification (features, threshold, margin over the runner-up) over this
        string's local candidates (``local``, else retrieved now) together with ``extra`` works
        (a search service's answer); a work both hold is counted once, as the catalog's."""
        cands = {c.work.work_id: c for c in (self.local_candidates(parsed) if local is None else local)}
        for work in extra:
            cands.setdefault(work.work_id, Candidate(work, -1, 0.0))
        return self._decide(RefView.of(parsed), list(cands.values()), query)

    def _retrieve(self, queries: dict[int, list[str]]) -> dict[int, list[Candidate]]:
        if not queries:
            return {}
        keys = list(queries)
        found = self.retriever.candidates_batch([queries[i] for i in keys], self.k)
        prepare_forms({id(c.work): c.work for cands in found for c in cands if c.forms is None}.values())
        return dict(zip(keys, found))

    def _score(self, ref: RefView, cands: list[Candidate], memo: dict | None = None) -> tuple[list[Scored], list[dict]]:
        """The candidates' scores, best first (equal scores in candidate order), and the notices
        set aside, in candidate order. Only the candidates that can decide the outcome are
        compared in full (``verify_bound``): in the order of their cheap bounds, each one whose
        bound reaches ``_needed`` gets its refined bound (the costly title comparisons), and
        each one whose refined bound reaches it is compared in full; the rest score below it, so
        the outcome and its evidence are the same whatever the order. ``memo``: this string's
        bounds by catalog row, reused and filled (its retry meets most candidates again)."""
        notices: list[dict] = []
        forms = [c.forms if c.forms is not None else work_forms(c.work) for c in cands]
        order: list[tuple[float, int, list]] = []
        for i, (c, w) in enumerate(zip(cands, forms)):
            if is_notice(ref, w):
                notices.append({**_brief(c.work), "score": round(probability(features(ref, c.work, w)), 4)})
                continue
            known = memo.get(c.row) if memo is not None and c.row >= 0 else None
            if known is None or known[0] is not c.work and known[0] != c.work:
                known = [c.work, cheap_bound(ref, c.work, w), None]
                if memo is not None and c.row >= 0:
                    memo[c.row] = known
            order.append((-known[1].bound, i, known))
        order.sort(key=lambda x: (x[0], x[1]))
        return self._compare(ref, cands, forms, order), notices

    def _compare(self, ref: RefView, cands: list[Candidate], forms: list, order: list) -> list[Scored]:
        """``_score``'s comparisons, best bound first: ``order`` holds (-cheap bound, index, memo
        entry), best first; a candidate met at its cheap bound gets its refined bound and goes back
        in line at it, one met at its refined bound is compared in full. So candidates are
        compared in the order of their refined bounds, and refined only while their cheap bound
        could still beat every candidate in line."""
        done: list[_Scored] = []
        line = [(neg, i, known, False) for neg, i, known in order]  # sorted: a heap already
        while line:
            needed = self._needed(done) - BOUND_SLACK if done else -math.inf
            neg_bound, i, known, refined = line[0]
            if -neg_bound < needed:
                break
            heapq.heappop(line)
            if not refined:
                if known[2] is None:
                    known[2] = refined_bound(ref, cands[i].work, forms[i], known[1])
                heapq.heappush(line, (-known[2][0], i, known, True))
                continue
            f = features(ref, cands[i].work, forms[i], known[2][1])
            bisect.insort(done, _Scored(-probability(f), i, cands[i], f, title_names_another_work(ref, f)))
        return [(-s.neg_p, s.cand, s.f) for s in done]

    def _needed(self, done: list["_Scored"]) -> float:
        """The score a candidate not yet compared must reach to change the outcome: that of the
        best eligible candidate and of its runner-up when the best links; that of the best and
        the link threshold when nothing eligible reaches it."""
        best = next((s for s in done if not s.names_another), None)
        if best is None or -best.neg_p < self.link_threshold:
            return min(-done[0].neg_p, self.link_threshold)
        runner = next((s for s in done if s is not best and not _same_work(s.cand.work, best.cand.work)), None)
        return -1.0 if runner is None else min(-best.neg_p, -runner.neg_p)

    def _decide(self, ref: RefView, cands: list[Candidate], query: str, memo: dict | None = None) -> FuzzyOutcome:
        thresholds = {"link": self.link_threshold, "margin": self.margin, "logit_margin": LOGIT_MARGIN}
        if not cands:
            return FuzzyOutcome(Reason.NO_CANDIDATES, {"query": query, "candidates": 0, "thresholds": thresholds})
        scored, notices = self._score(ref, cands, memo)
        base: dict[str, Any] = {"query": query, "candidates": len(cands), "thresholds": thresholds,
                "parsed_title": ref.parsed.title}
        if notices:
            base["notices_set_aside"] = notices[:3]
        # a candidate whose title contradicts the string's own title may not be the link (it still
        # counts as a rival of the others)
        eligible = [x for x in scored if not title_names_another_work(ref, x[2])]
        if not eligible or eligible[0][0] < self.link_threshold:
            if notices and max(n["score"] for n in notices) >= self.link_threshold:
                return FuzzyOutcome(Reason.NOTICE_NOT_WORK, base)
            top = None
            if scored:
                p, c, f = scored[0]
                top = c.work
                base["best"] = {**_brief(c.work), "score": round(p, 4), "features": f.as_dict()}
                if p >= self.link_threshold:
                    base["best"]["title_names_another_work"] = True
            return FuzzyOutcome(Reason.BELOW_THRESHOLD if scored else Reason.NO_CANDIDATES, base, top)
        scored = [eligible[0]] + [x for x in scored if x is not eligible[0]]
        p, best, f = scored[0]
        runner = next(((q, c, g) for q, c, g in scored[1:] if not _same_work(c.work, best.work)), None)
        evidence = {**base, "features": f.as_dict()}
        if runner is not None:
            q, c, g = runner
            evidence["runner_up"] = {**_brief(c.work), "score": round(q, 4), "features": g.as_dict()}
            if not clear_margin(p, q, self.margin):
                evidence["best"] = {**_brief(best.work), "score": round(p, 4)}
                return FuzzyOutcome(Reason.TOO_CLOSE_TO_CALL, evidence, best.work, c.work)
        else:
            evidence["runner_up"] = None
        return FuzzyOutcome(Reason.FUZZY_MATCH, evidence, best.work, runner[1].work if runner else None, round(p, 4))
