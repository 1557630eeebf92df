"""Pith's digest rules reproduce the published records' digests byte for byte."""
import hashlib

from pith_fixtures import citation_record, number_record

from citeledger.pith import digests


def test_every_observation_digest_is_sha256_of_the_observation_without_it():
    record = citation_record()
    observations = record["outbound"] + record["inbound"]
    assert len(observations) == 30
    for obs in observations:
        assert digests.observation_digest(obs) == obs["observation_digest"], obs["observation_id"]


def test_the_context_digest_covers_the_record_without_itself_and_as_of():
    record = citation_record()
    assert digests.context_digest(record) == record["context_digest"] == \
        "sha256:d946b6dd56e2009de1483ed98a6f6b8a0204880e768e2d129c2ffe758c975338"
    assert digests.context_digest(dict(record, as_of="2030-01-01T00:00:00Z")) == record["context_digest"]
    for member in ("thesis", "caps", "standing_sources"):  # everything else is inside
        changed = dict(record, **{member: None})
        assert digests.context_digest(changed) != record["context_digest"], member


def test_with_digests_recomputes_what_the_record_states():
    record = citation_record()
    blanked = dict(record, context_digest="sha256:" + "0" * 64,
                   outbound=[dict(o, observation_digest="x") for o in record["outbound"]])
    assert digests.with_digests(blanked) == record


def test_a_number_record_digest_pith_number_and_title_hash():
    record = number_record()
    assert digests.canonical_sha256(record["canonical_record"]) == record["canonical_sha256"] == \
        "a1c17cc904450c07f702cead79d98ad05aecc67543904ed5ba6c3307e8e994aa"
    assert record["receipt"]["canonical_sha256"] == record["canonical_sha256"]
    assert digests.pith_number(record["canonical_sha256"], 2025) == record["pith_number"]
    assert digests.title_canon_sha256(record["paper"]["title"]) == \
        record["canonical_record"]["metadata"]["title_canon_sha256"]
    assert hashlib.sha256(record["paper"]["title"].encode()).hexdigest() != \
        record["canonical_record"]["metadata"]["title_canon_sha256"]  # the case is folded


def test_digest_bytes_takes_hex_with_or_without_the_prefix_and_nothing_else():
    hexa = "ab" * 32
    assert digests.digest_bytes(hexa) == digests.digest_bytes("sha256:" + hexa) == bytes.fromhex(hexa)
    for bad in ("ab" * 31, "AB" * 32, "zz" * 32, "sha256:"):
        try:
            digests.digest_bytes(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
