"""A string parsed again (cited by another paper) is parsed once per process
(``lazy_parse.parse_once``): the same fields as a fresh parse, a new object with lists of its
own, and at most ``PARSES_KEPT`` parses kept."""
import dataclasses

from resolvers.parsing import lazy as lazy_parse
from resolvers.parsing.fields import parse_reference
from resolvers.parsing.lazy import lazy_parse as lazy
from resolvers.parsing.lazy import parse_once

RAW = "Vaswani A, Shazeer N. Attention is all you need. Adv Neural Inf Process Syst. 2017;30:5998-6008."


def test_a_string_parsed_again_gives_the_fresh_parse_in_a_new_object(monkeypatch):
    calls = []
    monkeypatch.setattr(lazy_parse, "parse_reference", lambda raw: calls.append(raw) or parse_reference(raw))
    monkeypatch.setattr(lazy_parse, "_PARSES", type(lazy_parse._PARSES)())
    first, second = parse_once(RAW), parse_once(RAW)
    assert calls == [RAW]
    assert dataclasses.asdict(first) == dataclasses.asdict(second) == dataclasses.asdict(parse_reference(RAW))
    assert first is not second and first.authors is not second.authors and first.notes is not second.notes
    first.authors.append("Someone")
    assert parse_once(RAW).authors == parse_reference(RAW).authors


def test_a_lazy_parse_read_in_full_is_the_parsers(monkeypatch):
    monkeypatch.setattr(lazy_parse, "_PARSES", type(lazy_parse._PARSES)())
    for _ in range(2):
        p = lazy(RAW)
        assert p.title and dataclasses.asdict(p) == dataclasses.asdict(parse_reference(RAW))


def test_at_most_parses_kept(monkeypatch):
    monkeypatch.setattr(lazy_parse, "PARSES_KEPT", 2)
    monkeypatch.setattr(lazy_parse, "_PARSES", type(lazy_parse._PARSES)())
    for i in range(4):
        parse_once(f"{RAW} {i}")
    assert list(lazy_parse._PARSES) == [f"{RAW} 2", f"{RAW} 3"]
