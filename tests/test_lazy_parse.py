"""The identifier path's lazy parse and scan shortcuts answer exactly as the full parser and the
plain regex scans do (resolvers/parsing/lazy.py, parsing.mask_identifiers, identifiers' passes)."""
import json
import random
from pathlib import Path

import pytest

from resolvers.identifiers.extract import extract_identifiers
from resolvers.parsing.fields import _IDENTIFIER_SPAN, ParsedReference, mask_identifiers, parse_reference
from resolvers.parsing.lazy import LazyParsed, lazy_parse

REPO = Path(__file__).parent.parent
QUICK = ("year", "volume", "first_page", "pages", "title_lead")
# tokens that meet the shortcuts' edges: several years, volume shapes, "Name:" leads, identifiers
# in every case (and the case-folding letters "ı", "İ", "ſ"), BibTeX, list numbers
PIECES = ["doi", "DOI", "doı", "doİ", "dx.doi.org/", "https://", "arXiv:", "arxıv", "abs/", "abſ/", "10.1038/",
          "10.12/x", "1706.03762", "hep-th/9901001", "CoRR", "URL", "urn:", "www.", " ", "\n", ",", ".", ":", ";",
          "(", ")", "-", "1999", "2021", "1850", "12", "345", "vol. 3", "pp. 4-5", "; 12(3):45-67", "İ", "ſ",
          "Smith J", "J. Smith,", "LLaMA:", "A title of some words", "Phys. Rev. D", "[3] ", "@article{", "="]


def _strings():
    rows = [json.loads(line)["raw"] for line in (REPO / "data" / "sample_references.jsonl").open()]
    rng = random.Random(3)
    rows += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 20))) for _ in range(3000)]
    return rows


STRINGS = _strings()


def test_quick_fields_are_the_parsers():
    quick = 0
    for raw in STRINGS:
        full = parse_reference(raw)
        for name in QUICK:
            parsed = lazy_parse(raw)
            assert getattr(parsed, name) == getattr(full, name), (name, raw)
            quick += type(parsed) is LazyParsed  # answered without the whole parse
        parsed = lazy_parse(raw)
        assert (parsed.title, type(parsed)) == (full.title, ParsedReference)  # parsed when read
        assert parsed == full
    assert quick > len(STRINGS)  # the shortcuts do answer, not only fall back


def test_any_other_field_parses_the_whole_string():
    raw = "Smith J (2001) Deep learning of many things. Nature 12, 345-350. doi:10.1038/abc"
    parsed = lazy_parse(raw)
    assert type(parsed) is LazyParsed and parsed.year == 2001
    assert parsed.title == parse_reference(raw).title
    assert type(parsed) is ParsedReference and parsed == parse_reference(raw)
    parsed.venue = "Science"  # a parsed object is a plain one: fields can be set
    assert parsed.venue == "Science"


@pytest.mark.parametrize("raw", ["@article{x, title={A}, year={2001}}", "", "title = {A}, year = {2001}"])
def test_bibtex_and_empty_strings_are_parsed_at_once(raw):
    assert type(lazy_parse(raw)) is ParsedReference


def test_mask_starts_where_identifiers_can_start():
    for raw in STRINGS:
        assert mask_identifiers(raw) == _IDENTIFIER_SPAN.sub(" ", raw), raw


def test_doi_words_in_any_case_are_all_read():
    """The DOI-word pass starts at the first "doi", dotless "ı" included (the regex folds it)."""
    ids = extract_identifiers("A. doı:10.12/abc. B. doi:10.34/def")
    assert ids.dois == ("10.12/abc", "10.34/def")
    assert extract_identifiers("x dx.doi.org/10.56/ghi").dois == ("10.56/ghi",)
