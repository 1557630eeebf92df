"""The pith.paper-citation-record.v1 schema: the published record fits it, wrong shapes do not; a
Pith record and citeledger's first record format (same schema name) are told apart."""
import copy

import jsonschema
import pytest
from pith_fixtures import citation_record, number_record

from citeledger.pith import schema
from citeledger.pith.schema import RecordKind, record_kind
from citeledger.records.record_json import RECORD_SCHEMA_V1, load_schema


def test_the_schema_is_valid_draft_2020_12_and_the_published_record_fits():
    jsonschema.Draft202012Validator.check_schema(schema.load_schema())
    assert schema.schema_errors(citation_record()) == []


def _broken(change):
    record = citation_record()
    change(record)
    return schema.schema_errors(record)


@pytest.mark.parametrize("change, where", [
    (lambda r: r.update(counts={}), "(record)"),
    (lambda r: r.pop("as_of"), "(record)"),
    (lambda r: r["paper"].update(doi="10.1/x"), "paper"),
    (lambda r: r["outbound"][0]["citation"]["cited_work"].update(authors=[]), "outbound/0/citation/cited_work"),
    (lambda r: r["outbound"][0]["resolution"].update(status="linked"), "outbound/0/resolution/status"),
    (lambda r: r["outbound"][0]["standing_notice"].update(observation="No event."), "outbound/0/standing_notice"),
    (lambda r: r["outbound"][2]["standing_notice"].pop("observation"), "outbound/2/standing_notice"),
    (lambda r: r["inbound"][0].update(observation_digest="sha256:00"), "inbound/0/observation_digest"),
    (lambda r: r["coverage"].reverse(), "coverage/0/lane"),
    (lambda r: r["external_citation_measurements"].append(
        {"source": "openalex", "measure": "is-referenced-by-count", "value": 3, "observed_at": "2026-01-01T00:00:00Z",
         "work": "W1"}), "external_citation_measurements/0"),
    (lambda r: r["reference_resolution"]["state_counts"].update(linked=3), "reference_resolution/state_counts"),
])
def test_a_wrong_shape_fails_naming_where(change, where):
    errors = _broken(change)
    assert errors and any(e.startswith(where + ":") for e in errors), errors


def test_a_measurement_names_its_own_source_and_measure():
    record = citation_record()
    record["external_citation_measurements"] = [
        {"source": "openalex", "measure": "cited_by_count", "value": 12, "observed_at": "2026-08-01T00:00:00Z",
         "work": "https://openalex.org/W1"},
        {"source": "crossref", "measure": "is-referenced-by-count", "value": 9, "observed_at": "2026-08-02T00:00:00Z",
         "work": "10.1/x"}]
    assert schema.schema_errors(record) == []


def test_record_kind_tells_pith_from_citeledger_under_the_same_name():
    assert record_kind(citation_record()) is RecordKind.PITH_CITATION_RECORD
    assert record_kind(number_record()) is RecordKind.PITH_NUMBER_RECORD
    legacy = {"schema": "pith.paper-citation-record.v1", "counts": {}, "content_digest": "sha256:00"}
    assert record_kind(legacy) is RecordKind.CITELEDGER_V1
    assert record_kind({"schema": "citeledger.paper-citation-record.v2"}) is RecordKind.CITELEDGER_V2
    for other in ({"schema": "pith.paper-citation-record.v1"}, {"schema": "x"}, [], None):
        assert record_kind(other) is RecordKind.UNKNOWN


def test_citeledger_first_schema_keeps_its_records_readable_under_its_own_title():
    legacy = load_schema(RECORD_SCHEMA_V1)
    assert legacy["title"] == "citeledger.paper-citation-record.v1"
    assert legacy["$id"] == "urn:citeledger:schema:citeledger.paper-citation-record.v1"
    assert legacy["properties"]["schema"]["const"] == "pith.paper-citation-record.v1"  # what those records carry
    errors = list(jsonschema.Draft202012Validator(legacy).iter_errors(copy.deepcopy(citation_record())))
    assert errors  # Pith's record is not citeledger's first format, whatever its schema name says
