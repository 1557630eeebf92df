"""Pith records in: ledger-shaped rows as Pith states them, Pith's ids and digests kept, state
names mapped, bad input named by its path."""
import pytest
from pith_fixtures import citation_record, number_record

from citeledger.app_errors import InputError
from citeledger.ledger.ledger_store import OBSERVATION_SCHEMA
from citeledger.pith import pith_reader, states
from citeledger.pith.schema import RecordKind


def test_a_citation_record_reads_as_one_row_per_observation():
    record = citation_record()
    read = pith_reader.read_pith(record)
    assert (read.kind, read.digest, read.digest_verified) == (RecordKind.PITH_CITATION_RECORD,
                                                              record["context_digest"], True)
    assert len(read.rows) == 30 and [r["direction"] for r in read.rows].count("inbound") == 1
    for row, obs in zip(read.rows, record["outbound"] + record["inbound"]):
        assert set(OBSERVATION_SCHEMA.names) <= set(row)
        assert (row["observation_id"], row["observation_digest"], row["source"]) == \
            (obs["observation_id"], obs["observation_digest"], "pith")
        assert row["digest_verified"] and row["reference_source"] == obs["citation"]["source"]
    counts = {s: 0 for s in record["reference_resolution"]["state_counts"]}
    for row in read.rows[:29]:
        counts[row["status"]] += 1
    assert counts == record["reference_resolution"]["state_counts"]
    inbound = read.rows[-1]
    assert (inbound["citing_paper"], inbound["reference_index"], inbound["arxiv_id"], inbound["status"]) == \
        ("2604.19654", 6, "2501.00254", "verified_exact")
    assert read.paper["primary_category"] == "cs.AI" and read.paper["as_of"] == record["as_of"]


def test_a_changed_observation_reads_with_its_digest_not_verified():
    record = citation_record()
    record["outbound"][3]["resolution"]["status"] = "verified_exact"
    read = pith_reader.read_pith(record)
    assert [r["digest_verified"] for r in read.rows].count(False) == 1 and not read.digest_verified


def test_state_names_map_and_an_unknown_one_is_kept_not_guessed():
    assert states.citeledger_state("verified_fuzzy") == ("verified_fuzzy", states.StateMapping.SAME)
    assert set(states.PITH_TO_CITELEDGER_STATE.values()) == set(states.CITELEDGER_STATES) - {"unavailable"}
    record = citation_record()
    record["outbound"][0]["resolution"]["status"] = "linked"
    row = pith_reader.read_pith(record).rows[0]
    assert (row["status"], row["pith_status"], row["state_mapping"]) == (None, "linked", "unknown")
    assert states.citeledger_reason("canonical_work_link_unavailable") == "no_canonical_work"
    assert states.pith_reason("no_canonical_work") == "canonical_work_link_unavailable"


def test_a_number_record_reads_as_its_paper():
    read = pith_reader.read_pith(number_record())
    assert (read.kind, read.digest_verified, read.rows) == (RecordKind.PITH_NUMBER_RECORD, True, [])
    assert read.paper["pith_number"] == "pith:2025:UHAXZSIEIUGAP5YCZ2WXTWMK2B"
    assert (read.paper["arxiv_id"], read.paper["version"], read.paper["primary_category"]) == ("2509.00217", 1, "cs.LG")


@pytest.mark.parametrize("change, message", [
    (lambda r: r["outbound"][4]["citation"].pop("reference_index"), "outbound[4].citation.reference_index: missing"),
    (lambda r: r["inbound"][0]["resolution"].update(status=3), "inbound[0].resolution.status: expected str"),
    (lambda r: r.update(outbound={}), "outbound: expected list"),
    (lambda r: r.update(schema="other"), "schema: not a Pith record"),
])
def test_bad_input_is_one_error_naming_the_member(change, message):
    record = citation_record()
    change(record)
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        pith_reader.read_pith(record)


def test_pairs_put_both_sides_of_a_reference_together():
    theirs = pith_reader.read_pith(citation_record()).rows
    ours = [{"citing_paper": "arXiv:2501.00254v1", "reference_index": 5, "status": "verified_exact",
             "arxiv_id": "2309.16609", "doi": None},
            {"citing_paper": "2501.00254", "reference_index": 99, "status": "unresolved"}]
    pairs = {(p["citing_paper"], p["reference_index"]): p for p in pith_reader.pair_rows(ours, theirs)}
    assert len(pairs) == 31
    five = pairs[("2501.00254", 5)]
    assert (five["same_state"], five["same_work"]) == (False, True)
    assert pairs[("2501.00254", 99)]["theirs"] is None and pairs[("2501.00254", 1)]["ours"] is None
