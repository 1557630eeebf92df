"""The fuzzy matcher matches each distinct parsed string once and keeps its outcome: the same
outcomes as matching every string, for repeats within a batch and across batches."""
import dataclasses

from resolvers.candidates import fuzzy
from resolvers.candidates.fuzzy import FuzzyResolver
from resolvers.candidates.retrieval import InMemoryRetriever
from resolvers.model import Reason, Work
from resolvers.parsing.fields import parse_reference

WORKS = [Work("doi:10.1/a", doi="10.1/a", title="Attention is all you need", authors=("Ashish Vaswani",), year=2017),
         Work("doi:10.1/b", doi="10.1/b", title="Deep residual learning for image recognition",
              authors=("Kaiming He",), year=2016)]
RAWS = ["A. Vaswani et al. Attention is all you need. NeurIPS, 2017.",
        "K. He, X. Zhang. Deep residual learning for image recognition. CVPR 2016.",
        "A. Vaswani et al. Attention is all you need. NeurIPS, 2017."]


def _counting_retrievals(monkeypatch):
    asked = []
    real = FuzzyResolver._retrieve

    def counted(self, queries):
        asked.extend(queries.values())
        return real(self, queries)
    monkeypatch.setattr(FuzzyResolver, "_retrieve", counted)
    return asked


def test_repeated_strings_are_matched_once_with_the_same_outcome(monkeypatch):
    asked = _counting_retrievals(monkeypatch)
    plain = FuzzyResolver(InMemoryRetriever(WORKS), cache_size=0)
    each = [plain.match_batch([parse_reference(raw)])[0] for raw in RAWS]
    assert len(asked) == 3 and each[0].reason is Reason.FUZZY_MATCH
    asked.clear()
    cached = FuzzyResolver(InMemoryRetriever(WORKS))
    first = cached.match_batch([parse_reference(raw) for raw in RAWS])
    assert len(asked) == 2  # the repeat within the batch is matched once
    again = cached.match_batch([parse_reference(RAWS[1]), parse_reference(RAWS[0])])
    assert len(asked) == 2  # and not again in a later batch
    assert [dataclasses.astuple(o) for o in first] == [dataclasses.astuple(o) for o in each]
    assert [dataclasses.astuple(o) for o in again] == [dataclasses.astuple(o) for o in (each[1], each[0])]


def test_the_cache_keeps_at_most_its_size(monkeypatch):
    asked = _counting_retrievals(monkeypatch)
    matcher = FuzzyResolver(InMemoryRetriever(WORKS), cache_size=1)
    matcher.match_batch([parse_reference(RAWS[0])])
    matcher.match_batch([parse_reference(RAWS[1])])  # pushes the first out
    matcher.match_batch([parse_reference(RAWS[0])])
    assert len(asked) == 3 and len(matcher._outcomes) == 1


def test_a_parse_with_other_fields_is_another_string():
    """Fields given with a reference (a .bib entry's title) make another parse: not the cached one."""
    parsed = parse_reference(RAWS[0])
    other = dataclasses.replace(parsed, title="Deep residual learning for image recognition")
    assert fuzzy.parsed_key(parsed) != fuzzy.parsed_key(other)
    assert fuzzy.parsed_key(parsed) == fuzzy.parsed_key(parse_reference(RAWS[0]))


def test_the_outcome_cache_size_comes_from_the_environment(monkeypatch):
    """CITELEDGER_OUTCOME_CACHE=0 turns the cache off (a benchmark of repeated strings then
    measures distinct ones); a value that is not a count is a configuration error."""
    import pytest

    from citeledger.engine.process_cache import outcome_cache_size
    from resolvers.errors import ConfigError

    monkeypatch.delenv("CITELEDGER_OUTCOME_CACHE", raising=False)
    assert outcome_cache_size() == fuzzy.OUTCOME_CACHE
    monkeypatch.setenv("CITELEDGER_OUTCOME_CACHE", "0")
    assert outcome_cache_size() == 0
    monkeypatch.setenv("CITELEDGER_OUTCOME_CACHE", "-1")
    with pytest.raises(ConfigError, match="CITELEDGER_OUTCOME_CACHE"):
        outcome_cache_size()
