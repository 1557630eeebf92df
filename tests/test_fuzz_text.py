"""Property-based attacks on the text path: identifier extraction, parsing, the parse_uncertain
rules and the whole ``apply_rule_chain`` on the fixture catalog.

Any string (NUL, control characters, mojibake, lone surrogates, 100k-character strings) must come
back as a value, never an exception, and in bounded time: the patterns below once made the parser
quadratic (minutes per reference); each now runs in well under a second, so a generous bound here
catches a regression without being flaky.
"""
from __future__ import annotations

import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resolvers.identifiers.extract import canonical_arxiv_id, extract_identifiers, normalize_doi
from resolvers.model import Reference, Status
from resolvers.parsing.fields import parse_reference
from resolvers.parsing.quality import parse_uncertain_reason
from resolvers.parsing.text import LIGATURES, fold
from resolvers.resolution import apply_rule_chain

# Pieces that identifier and name patterns key on, so random strings reach the interesting paths.
FRAGMENTS = ["10.", "10.1234/", "doi:", "DOI ", "https://doi.org/", "arXiv:", "arxiv.org/abs/", "abs/",
             "hep-th/", "9901001", "1706.03762", "v2", "[hep-th]", "[cs.CL]", "eprint = {", "(", ")", "[", "]",
             "{", "}", '"', "'", "“", "”", "A. ", "Smith, J., ", "et al. ", "and ", "(2001) ", "2019. ",
             "vol. 3, pp. 1-5", "12(3):45-67", "; ", ", ", ". ", "\n", "-\n", "\\_", "%2F", "&amp;", "\x00",
             "\x1b", "\u00ad", "\ufeff", "Ã©", "â€™", "é", "ß", "\ud800", "In: ", "@article{", "title = {"]
texty = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=60).map("".join),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),  # mojibake of arbitrary bytes
)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(texty)
def test_extract_identifiers_returns_only_normalised_ids(raw):
    """Whatever the string, every id returned is already in canonical form: a second
    normalisation changes nothing (the ledger's ``extracted_*`` columns are canonical)."""
    ids = extract_identifiers(raw)
    for doi in ids.dois:
        assert normalize_doi(doi) == doi
    for arxiv_id in ids.arxiv_ids:
        assert canonical_arxiv_id(arxiv_id) == arxiv_id
    for token in ids.malformed:
        assert token.scheme in ("doi", "arxiv") and token.why


@FAST
@given(texty)
def test_parse_reference_and_quality_never_raise(raw):
    parsed = parse_reference(raw)
    assert parsed.year is None or 1500 <= parsed.year <= 2049
    parse_uncertain_reason(raw, parsed)


@pytest.fixture(scope="module")
def fixture_lookup(fixture_catalog):
    from citeledger.engine import process_cache as workers

    catalog = workers.get_catalog(fixture_catalog)
    return catalog, workers.get_fuzzy(catalog)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.lists(texty, min_size=1, max_size=12))
def test_resolve_batch_gives_one_state_per_reference(fixture_lookup, raws):
    """The whole chain (identifiers, parser, catalog, fuzzy matcher): one resolution per
    reference, in order, each with exactly one contract state."""
    catalog, fuzzy = fixture_lookup
    refs = [Reference("fuzz", i + 1, raw) for i, raw in enumerate(raws)]
    out = apply_rule_chain(refs, catalog, fuzzy, None)
    assert [r.reference for r in out] == refs
    for r in out:
        assert isinstance(r.verdict.status, Status)
        assert r.verdict.status is not Status.UNAVAILABLE  # no remote, so nothing can be unavailable
        if r.verdict.status.is_link:
            assert r.verdict.work is not None


# Strings that made a pattern quadratic before (minutes at 100k characters), and other long
# repetitions of what the patterns key on. 100k characters is the default max_raw_chars.
N = 100_000
PATHOLOGICAL = {
    "initials": "A. " * (N // 3), "unclosed_single_quotes": " 'ab" * (N // 4), "bibtex_unbalanced":
    "@article{" + "title = {" * (N // 9), "paren_runs": "1 (" * (N // 3), "percent_comment": "%2" * (N // 2),
    "a_dot": "a." * (N // 2), "open_paren": "(" * N, "digits": "1" * N, "doi_prefix_repeat": "10.1234/" * (N // 8),
    "doi_word_repeat": "doi:" * (N // 4), "arxiv_word_repeat": "arXiv:" * (N // 6), "ten_dot": "10." * (N // 3),
    "hundred_k_words": " ".join(["Learning"] * (N // 9)), "names": "Smith, J., " * (N // 11),
    "vol_no_pages": "vol. 1 " * (N // 7), "dots": "." * N, "quote_open": '"' + "a " * (N // 2),
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_strings_finish_quickly(name, fixture_lookup):
    """Bounded time per reference: each string is about 1 s of work at most on a slow machine;
    the bound is 20x that, so only a return of super-linear behaviour (40 s+) fails it."""
    from papers.latex_text import latex_to_text

    raw = PATHOLOGICAL[name]
    catalog, fuzzy = fixture_lookup
    started = time.perf_counter()
    latex_to_text(raw)
    apply_rule_chain([Reference("p", 1, raw)], catalog, fuzzy, None)
    assert time.perf_counter() - started < 20.0


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=30))
def test_fold_drops_exactly_the_combining_characters(text):
    """``fold``'s translation table drops what ``unicodedata.combining`` marks, nothing else."""
    decomposed = unicodedata.normalize("NFKD", text.translate(str.maketrans(LIGATURES)))
    expected = text.lower() if text.isascii() else \
        "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    assert fold.__wrapped__(text) == expected
