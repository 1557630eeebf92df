"""Both JSON seeds imported into an empty ledger come back whole: ``record ID --format pith`` of an
imported paper prints the seed's RFC 8785 bytes (no field differs), a pith number finds its paper,
and the ledger's columns hold each observation's facts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from pith_fixtures import PITH, citation_record, number_record

from citeledger.cli import main
from resolvers.jcs import jcs
from resolvers.strict_json import loads_strict

SEEDS = Path(__file__).parent.parent.parent / "shared" / "seeds"
SEED_FILES = {"2501.00254": "pith-paper-citation-record-2501.00254.json",
              "2509.00217": "pith-number-record-2509.00217.json"}


def _seed(name: str) -> Path:
    """The published seed in ``../shared/seeds`` (the copy under tests/fixtures/pith when the
    shared folder is not beside the checkout), checked to be the same bytes as the fixture."""
    shared, fixture = SEEDS / name, PITH / name
    if shared.is_file():
        assert shared.read_bytes() == fixture.read_bytes()
        return shared
    return fixture


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    ledger = tmp_path_factory.mktemp("round-trip") / "ledger"
    assert main(["import-pith", *(str(_seed(n)) for n in SEED_FILES.values()), "--ledger", str(ledger)]) == 0
    return ledger


def _printed(capsys, *argv: str) -> bytes:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out.encode("utf-8")


@pytest.mark.parametrize("paper", sorted(SEED_FILES))
def test_each_json_seed_comes_back_as_its_canonical_json(imported, capsys, paper):
    seed = loads_strict(_seed(SEED_FILES[paper]).read_bytes())
    for alias in (paper, f"arXiv:{paper}v1", f"10.48550/arXiv.{paper}"):
        out = _printed(capsys, "record", alias, "--format", "pith", "--ledger", str(imported))
        assert out == jcs(seed) + b"\n", alias


def test_a_pith_number_finds_its_paper_in_full_short_or_as_a_prefix(imported, capsys):
    number = number_record()
    for given in (number["pith_number"], number["short_pith_number"], "pith:UHAXZSIEIUGA"):
        assert _printed(capsys, "record", given, "--format", "pith", "--ledger", str(imported)) == \
            jcs(number) + b"\n", given
    assert main(["record", "pith:AAAAAAAA", "--format", "pith", "--ledger", str(imported)]) == 1
    assert "no Pith number record numbered 'pith:AAAAAAAA'" in capsys.readouterr().err


def test_another_format_of_an_imported_only_paper_says_what_the_ledger_holds(imported, capsys, default_catalog):
    assert main(["record", "2501.00254", "--ledger", str(imported), "--catalog", str(default_catalog)]) == 1
    assert "only Pith's record of it: `citeledger record ID --format pith`" in capsys.readouterr().err
    assert main(["record", "2501.00254", "--format", "pith", "--sign", "--ledger", str(imported),
                 "--catalog", str(default_catalog)]) == 2


def test_the_ledger_columns_hold_each_observation_and_the_record_facts(imported, capsys):
    record = citation_record()
    assert main(["query", "select observation_json, source_observed_at, citing_version, notice_sources, "
                 "notice_observed_at from pith_observations order by direction desc, reference_index",
                 "--ledger", str(imported), "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    observations = record["outbound"] + record["inbound"]
    assert [loads_strict(r["observation_json"]) for r in rows] == observations
    assert [r["source_observed_at"] for r in rows] == [o["citation"]["source_observed_at"] for o in observations]
    assert {r["citing_version"] for r in rows} == {1}
    measured = [r for r in rows if r["notice_sources"]]
    assert {tuple(r["notice_sources"]) for r in measured} == {("crossref", "retraction_watch")}
    assert {r["notice_observed_at"] for r in measured} == {"2026-08-15T06:32:42.880941+00:00"}
    assert main(["query", "select kind, arxiv_id, pith_number, as_of, title from pith_records order by kind",
                 "--ledger", str(imported), "--format", "json"]) == 0
    facts = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert facts == [
        {"kind": "pith.paper-citation-record.v1", "arxiv_id": "2501.00254", "pith_number": None,
         "as_of": record["as_of"], "title": record["paper"]["title"]},
        {"kind": "pith_number_record", "arxiv_id": "2509.00217", "pith_number": number_record()["pith_number"],
         "as_of": number_record()["updated_at"], "title": number_record()["paper"]["title"]}]
