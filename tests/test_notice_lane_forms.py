"""The notice lane gives one answer in the four forms of a record (citeledger's JSON, Pith's JSON,
the text page, the HTML page): the references naming a catalog work whose notice sources answered,
out of all of them, the sources that answered with their times, measured or not. Checked on the
fixture ledger (tests/fixtures/pith/README.md) with the notice sources answering (arXiv's records,
the Retraction Watch excerpt) and with none to ask (a catalog of plain works JSONL); the inbound
citation carries the notice citeledger has of the paper's own work in both."""
from __future__ import annotations

import contextlib
import html
import io
import json
from pathlib import Path

import pytest
from pith_fixtures import PITH

from citeledger.cli import main
from citeledger.pith import consistency, schema
from citeledger.pith.states import pith_source

REPO = Path(__file__).parent.parent
LEDGER = PITH / "ledger"
CATALOGS = {
    "answered": [LEDGER / "arxiv.jsonl", REPO / "data" / "sources" / "retraction_watch_doi_nature_excerpt.csv"],
    "unavailable": [LEDGER / "works.jsonl"],
}


@pytest.fixture(scope="module", params=sorted(CATALOGS))
def forms(request, tmp_path_factory) -> tuple[str, dict]:
    """The record of 2101.00001 in the four forms, from a ledger whose catalog is ``request.param``'s."""
    work = tmp_path_factory.mktemp(f"lane-{request.param}")
    catalog, ledger = work / "catalog", work / "ledger"
    assert main(["catalog", "build", "--catalog", str(catalog), *map(str, CATALOGS[request.param])]) == 0
    assert main(["resolve", str(LEDGER / "refs.jsonl"), "--catalog", str(catalog), "--ledger", str(ledger)]) == 0
    out = {}
    for form in ("json", "pith", "ledger", "html"):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert main(["record", "2101.00001", "--format", form, "--ledger", str(ledger),
                         "--catalog", str(catalog)]) == 0
        out[form] = buffer.getvalue()
    return request.param, out


def test_the_notice_lane_agrees_across_json_pith_text_and_html(forms):
    case, out = forms
    lane = json.loads(out["json"])["coverage"]["notices"]
    pith = json.loads(out["pith"])
    assert schema.schema_errors(pith) == [] and consistency.problems(pith) == []
    theirs = next(lane for lane in pith["coverage"] if lane["lane"] == "standing_notices")
    if case == "answered":
        assert (lane["state"], lane["observed"], lane["denominator"]) == ("measured", 2, 2)
        assert lane["sources"] == ["arxiv", "retraction_watch_doi_nature"] and lane["as_of"]
        assert set(lane["source_times"]) == set(lane["sources"])
    else:
        assert (lane["state"], lane["observed"], lane["denominator"]) == ("not_measured", 0, 2)
        assert (lane["sources"], lane["as_of"], lane["source_times"]) == ([], None, {})
    # Pith: the same counts, the same sources in Pith's names, the same time; unavailable when none
    assert (theirs["records_observed"], theirs["denominator"]) == (lane["observed"], lane["denominator"])
    assert theirs["state"] == ("unavailable" if lane["state"] == "not_measured" else "measured")
    named = sorted({pith_source(s) for s in lane["sources"]})
    assert theirs["source"] == (", ".join(named) or None) and theirs["source_observed_at"] == lane["as_of"]
    assert {s["source"] for s in pith["standing_sources"]} >= set(named)
    # text and HTML: the same figure, the same sources with their times
    words = "measured" if lane["state"] == "measured" else "not measured"
    figure = f"{words}, {lane['observed']} of {lane['denominator']} references naming a catalog work"
    source = ", ".join(f"{s} ({t})" for s, t in lane["source_times"].items()) or "no notice source answered"
    [line] = [line for line in out["ledger"].splitlines() if "Retraction and correction notices checked:" in line]
    assert f"{figure}; from {source}" in line
    [row] = [r for r in out["html"].split("<tr>") if "Retraction and correction notices checked" in r]
    cells = [html.unescape(c.split("</td>")[0]) for c in row.split("<td>")[1:]]
    assert cells[1:4] == [words, figure.split(", ", 1)[1], source]
    opening = out["ledger"].splitlines()[0]
    assert ("the notices of the cited works of 2 of 2" in opening) == (case == "answered")
    assert ("nor the notices of the cited works (no notice source answered)" in opening) == (case != "answered")


def test_the_inbound_citation_carries_the_notice_citeledger_has_of_the_paper(forms):
    case, out = forms
    [inbound] = json.loads(out["pith"])["inbound"]
    notice = inbound["standing_notice"]
    if case == "answered":
        assert notice["state"] == "measured"
        assert [r["source"] for r in notice["source_receipts"]] == ["arxiv", "retraction_watch"]
        assert notice["observation"].startswith("No event found in the named queried sources as of ")
    else:
        assert (notice["state"], notice["reason"]) == ("unavailable", "notice_sources_unavailable")
        assert inbound["citeledger"]["notice"]["reason"] == "not_checked"
