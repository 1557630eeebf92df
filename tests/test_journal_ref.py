"""Journal references and venue keys: golden cases in data files.

``tests/golden/journal_refs.jsonl``: real arXiv journal-refs (``../shared/data/catalog/
arxiv_metadata_sample.jsonl.gz``) and the issue's examples, with the venue, key, volume, first
page and year each must give. ``tests/golden/venue_keys.jsonl``: spellings of one venue that
must meet on one key (and keys that must stay apart)."""
import json
from pathlib import Path

import pytest

from resolvers.identifiers.journal_ref import parse_journal_ref, reference_locators, venue_key

GOLDEN = Path(__file__).parent / "golden"


def _cases(name):
    return [json.loads(line) for line in (GOLDEN / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", _cases("journal_refs.jsonl"), ids=lambda c: c["journal_ref"][:40])
def test_journal_ref(case):
    got = parse_journal_ref(case["journal_ref"])
    assert got is not None
    assert (got.venue, got.key, got.volume, got.first_page, got.year) == \
        (case["venue"], case["key"], case["volume"], case["first_page"], case["year"])


@pytest.mark.parametrize("case", _cases("venue_keys.jsonl"), ids=lambda c: c["key"])
def test_venue_spellings_meet_on_one_key(case):
    assert {venue_key(s) for s in case["spellings"]} == {case["key"]}


def test_different_venues_keep_different_keys():
    keys = [c["key"] for c in _cases("venue_keys.jsonl")]
    assert len(keys) == len(set(keys))
    assert venue_key("Phys. Rev. B") != venue_key("Phys. Rev. D")


def test_journal_ref_without_a_volume_is_none():
    assert parse_journal_ref("Energy and Fuels (2007) sous presse") is None
    assert parse_journal_ref(None) is None


@pytest.mark.parametrize("raw", [
    "G. Aad et al., Phys. Lett. B 716, 1 (2012)",
    "Aad G, et al. Phys Lett B. 2012;716(1):1-29.",
    'G. Aad et al., "Observation of a new particle," Phys. Lett. B, vol. 716, no. 1, pp. 1-29, 2012.',
    "Aad, G. (2012). Observation. Physics Letters B, 716(1), 1-29.",
    "G. Aad, Phys.Lett.B716:1-29,2012",
])
def test_reference_locators_find_venue_volume_and_page(raw):
    assert any("physlettb" in loc.keys and (loc.volume, loc.first_page) == ("716", "1")
               for loc in reference_locators(raw))


def test_no_date_between_venue_and_volume_is_skipped():
    [loc] = reference_locators("Hudson. Plast Reconstr Surg n.d.;89:853.")
    assert "plastreconstrsurg" in loc.keys and (loc.volume, loc.first_page) == ("89", "853")


OCR_CASES = [json.loads(line) for line in (GOLDEN / "venue_ocr_keys.jsonl").open(encoding="utf-8")]


@pytest.mark.parametrize("case", OCR_CASES, ids=[c["printed"] for c in OCR_CASES])
def test_a_venue_misread_by_ocr_meets_its_key_by_skeleton(case):
    """The catalog side is the skeleton of its stored key; the string side ``ocr_venue_key``."""
    from resolvers.identifiers.journal_ref import ocr_venue_key
    from resolvers.parsing.text import ocr_skeleton

    skeleton = ocr_skeleton(venue_key(case["venue"]))
    assert ocr_venue_key(case["printed"]) == skeleton and ocr_skeleton(skeleton) == skeleton
    assert venue_key(case["printed"]) != venue_key(case["venue"])  # the exact key does not meet


def test_ocr_skeletons_keep_different_venues_apart():
    from resolvers.identifiers.journal_ref import ocr_venue_key

    keys = {ocr_venue_key(v) for v in ("Phys. Rev. D", "Phys. Rev. B", "Phys. Lett. B", "Nature", "Science",
                                       "Nucl. Phys. B", "JHEP", "Astrophys. J.")}
    assert len(keys) == 8


def test_an_ocr_misread_venue_locator_is_read_past_digits_inside_words():
    from resolvers.identifiers.journal_ref import ocr_venue_key
    from resolvers.parsing.text import ocr_skeleton

    (loc,) = reference_locators("A. B. Smith, Physica1 Rcview E 12, 345 (2001).", ocr_venue_key)
    assert ocr_skeleton("physreve") in loc.keys and (loc.volume, loc.first_page) == ("12", "345")
