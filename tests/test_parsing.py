"""Golden parsing cases: one per reference style (tests/golden/fuzzy/parse_cases.jsonl)."""
import json
from pathlib import Path

import pytest

from resolvers.parsing.fields import clean_raw, norm_text, parse_reference

CASES = [json.loads(l) for l in (Path(__file__).parent / "golden/fuzzy/parse_cases.jsonl").open() if l.strip()]


@pytest.mark.parametrize("case", CASES, ids=[c["style"] for c in CASES])
def test_parse_golden(case):
    p = parse_reference(case["raw"])
    if case["title"] is None:
        assert p.title is None
    else:
        assert norm_text(p.title or "") == norm_text(case["title"])
    if "first_author" in case:
        assert p.authors and p.authors[0] == case["first_author"]
    for field in ("year", "volume", "first_page"):
        if field in case:
            assert getattr(p, field) == case[field], field


def test_pdf_hyphenation_is_undone():
    assert clean_raw("Endo-\nscopic  sphincter") == "Endoscopic sphincter"
