"""Notices and citation records through the ledger: Retraction Watch via the catalog, A cites B."""
import json
import shutil

import pytest

from citeledger.ledger.query import run_query
from citeledger.records import record_files
from citeledger.records.record_json import validate_record
from citeledger.records.render import record_pages
from citeledger.run import batches, finishing, planning


def resolve(tmp_path, catalog, rows, run_id="r1"):
    path = tmp_path / f"{run_id}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plan = planning.plan_run([path], catalog, tmp_path / "ledger", run_id=run_id)
    for job in plan.pending:
        batches.run_batch(job)
    return finishing.finish_run(plan)


RETRACTED = [
    {"citing_paper": "paper-x", "reference_index": 1,
     "raw": "Some authors. A study later retracted. J Clin Anesth. 2006. doi:10.1016/j.jclinane.2006.02.005"},
    {"citing_paper": "paper-x", "reference_index": 2, "raw": "Authors. A JBC paper. J Biol Chem 2005. https://doi.org/10.1074/jbc.M503111200"},
    {"citing_paper": "paper-x", "reference_index": 3, "raw": "Authors. A PLoS Biol paper. 2006. doi:10.1371/journal.pbio.0040031"},
    {"citing_paper": "paper-x", "reference_index": 4, "raw": "Nobody. Not in any catalog. J Nowhere 1999;1:1."},
]


@pytest.fixture(scope="module")
def resolved_copy(tmp_path_factory, default_catalog):
    """``resolved_copy(rows, tmp_path)``: the ledger of ``rows`` (run r1) at ``tmp_path / "ledger"``,
    a copy of one resolved once for the module per row set."""
    made: dict[str, object] = {}

    def copy_of(rows: list[dict], tmp_path) -> None:
        key = json.dumps(rows, sort_keys=True)
        if key not in made:
            base = tmp_path_factory.mktemp("resolved")
            resolve(base, default_catalog, rows)
            made[key] = base / "ledger"
        shutil.copytree(made[key], tmp_path / "ledger")

    return copy_of


def test_notices_come_from_the_catalogs_retraction_watch_sources(tmp_path, default_catalog, resolved_copy):
    resolved_copy(RETRACTED, tmp_path)
    rows = run_query("select doi, state, standing, sources_checked from notices order by doi",
                     tmp_path / "ledger", default_catalog).fetchall()
    got = {doi: (state, standing) for doi, state, standing, _ in rows}
    assert got == {"10.1016/j.jclinane.2006.02.005": ("measured", "retracted"),
                   "10.1074/jbc.m503111200": ("measured", "retracted"),
                   "10.1371/journal.pbio.0040031": ("measured", "corrected")}
    assert all("retraction_watch_doi_nature" in sources for *_, sources in rows)


def test_record_of_a_paper_citing_retracted_works(tmp_path, default_catalog, resolved_copy):
    resolved_copy(RETRACTED, tmp_path)
    record = record_files.citation_record("paper-x", tmp_path / "ledger", default_catalog)
    validate_record(record)
    assert record["counts"]["cited_works_by_standing"]["retracted"] == 2
    assert record["counts"]["cited_works_by_standing"]["corrected"] == 1
    by_index = {i["reference_index"]: i for i in record["outbound"]["items"]}
    assert by_index[1]["notice"]["standing"] == "retracted"
    assert by_index[4]["notice"]["state"] == "unavailable"
    text = record_pages.render_ledger_text(record)
    assert text.count("RETRACTED") >= 2
    again = record_files.citation_record("paper-x", tmp_path / "ledger", default_catalog)
    assert again["content_digest"] == record["content_digest"]


def test_a_cites_b_shows_on_both_records(tmp_path, default_catalog):
    resolve(tmp_path, default_catalog, [
        {"citing_paper": "0704.0001", "reference_index": 1,
         "raw": "I. Streinu and L. Theran. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
        {"citing_paper": "0704.0002", "reference_index": 1, "raw": "Nobody. Not in any catalog. J Nowhere 1999;1:1."},
    ])
    a = record_files.citation_record("arXiv:0704.0001", tmp_path / "ledger", default_catalog)
    b = record_files.citation_record("0704.0002", tmp_path / "ledger", default_catalog)
    assert [i["resolved"]["work_id"] for i in a["outbound"]["items"]] == ["arxiv:0704.0002"]
    assert [(i["citing_paper"], i["reference_index"]) for i in b["inbound"]["items"]] == [("0704.0001", 1)]
    assert a["paper"]["in_catalog"] and a["paper"]["work"]["title"].startswith("Calculation of prompt diphoton")
    assert record_files.papers_touched("r1", tmp_path / "ledger", default_catalog) == ["0704.0001", "0704.0002"]


# Two arXiv papers of the embedded catalog citing each other (one also a retracted work, one a work
# in no catalog) beside the retracted-works paper: the ledger of the one-pass tests below.
PAPERS_CITING_EACH_OTHER = RETRACTED + [
    {"citing_paper": "0704.0001", "reference_index": 1,
     "raw": "I. Streinu and L. Theran. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
    {"citing_paper": "0704.0002", "reference_index": 1,
     "raw": "Some authors. A study later retracted. J Clin Anesth. 2006. doi:10.1016/j.jclinane.2006.02.005"},
    {"citing_paper": "0704.0002", "reference_index": 2, "raw": "Nobody. Not in any catalog. J Nowhere 1999;1:1."},
]


def test_records_of_many_papers_in_one_pass_equal_one_by_one(tmp_path, default_catalog, resolved_copy):
    """Records gathered in one pass over the ledger (the shared table holds every paper's rows)
    are those made paper by paper: no row of one paper leaks into another's record."""
    resolved_copy(PAPERS_CITING_EACH_OTHER, tmp_path)
    papers = ["0704.0002", "paper-x", "0704.0001", "no-such-paper"]  # ledger ids (`record` maps aliases to them)
    together = list(record_files.citation_records(papers, tmp_path / "ledger", default_catalog))
    alone = [record_files.citation_record(p, tmp_path / "ledger", default_catalog) for p in papers]
    assert [r.pop("receipt")["state"] for r in alone] == ["unsigned"] * 4  # one paper's record comes with its receipt
    assert together == alone
    assert [len(r["outbound"]["items"]) for r in together] == [2, 4, 1, 0]
    assert [(i["citing_paper"], i["reference_index"]) for i in together[0]["inbound"]["items"]] == [("0704.0001", 1)]


@pytest.mark.parametrize("per_pass, at_once", [(1, 1), (2, 1), (3, 2)])
def test_records_equal_whatever_the_pass_and_row_groups(tmp_path, default_catalog, resolved_copy, monkeypatch,
                                                        per_pass, at_once):
    """Papers' rows are made into dicts a group at a time (``PassRows.observed``) and passes hold a
    few papers each here: the records are those of one pass with every row made at once."""
    resolved_copy(PAPERS_CITING_EACH_OTHER, tmp_path)
    papers = ["0704.0002", "paper-x", "0704.0001", "no-such-paper", "0704.0001"]
    whole = list(record_files.citation_records(papers, tmp_path / "ledger", default_catalog))
    monkeypatch.setattr(record_files, "RECORDS_PER_PASS", per_pass)
    monkeypatch.setattr(record_files, "ROWS_AT_ONCE", at_once)
    assert list(record_files.citation_records(papers, tmp_path / "ledger", default_catalog)) == whole
    assert [len(r["inbound"]["items"]) for r in whole] == [1, 0, 0, 0, 0]


@pytest.mark.parametrize("paper_id", ["hep-th/9901001", "../../etc/passwd", "x" * 500, "Ünïcode/論文", ".hidden"])
def test_record_files_are_safe_for_any_id(tmp_path, default_catalog, paper_id):
    resolve(tmp_path, default_catalog, [{"citing_paper": paper_id, "reference_index": 1,
                                         "raw": "Sparsity-certifying graph decompositions. arXiv:0704.0002"}])
    (written,) = record_files.write_records([paper_id], tmp_path / "ledger", default_catalog)
    assert written.parent == tmp_path / "ledger" / "records"
    assert len(written.name) < 200 and not written.name.startswith(".")
    assert json.loads(written.read_text())["paper"]["id"] == paper_id
    assert written.with_suffix(".html").exists() and written.with_suffix(".txt").exists()


def test_glutton_strings_citing_retracted_works(tmp_path, default_catalog):
    """The real PDF strings of the glutton set that cite works Retraction Watch lists: linked by
    the fuzzy matcher, their notices show in the citing paper's record, never hidden by a cap."""
    from pathlib import Path

    rows = [json.loads(line) for line in
            (Path(__file__).parent / "golden" / "glutton_cites_notice_works.jsonl").read_text().splitlines()]
    resolve(tmp_path, default_catalog, [{k: r[k] for k in ("citing_paper", "reference_index", "raw")} for r in rows])
    record = record_files.citation_record(rows[0]["citing_paper"], tmp_path / "ledger", default_catalog, page_cap=1)
    validate_record(record)
    got = {i["resolved"]["doi"]: (i["status"], i["notice"]["standing"]) for i in record["with_notices"]}
    # what data/sources/retraction_watch_doi_nature_excerpt.csv says of these three works
    assert got == {"10.1016/j.jclinane.2006.02.005": ("verified_fuzzy", "retracted"),
                   "10.1074/jbc.m503111200": ("verified_fuzzy", "retracted"),
                   "10.1371/journal.pbio.0040031": ("verified_fuzzy", "corrected")}
    assert {r["gold_doi"].lower() for r in rows} == set(got)  # each string linked to its gold work
    assert record["counts"]["cited_works_by_standing"]["retracted"] == 2


def test_a_paper_whose_record_cannot_be_built_leaves_the_others_recorded(tmp_path, default_catalog, monkeypatch):
    """A ledger holding an index a record's JSON cannot carry (read before intake limited it):
    every records build failed, and the good papers of the run got no record either."""
    from citeledger.app_errors import RecordsIncomplete
    from citeledger.inputs import rows as input_rows
    from citeledger.run import finishing

    monkeypatch.setattr(input_rows, "MAX_REFERENCE_INDEX", 2**63 - 1)  # the intake as it was
    bad = {"citing_paper": "paper-bad", "reference_index": 2**53 + 1, "raw": "Nobody. Nothing. 1999."}
    resolve(tmp_path, default_catalog, RETRACTED + [bad])
    ledger = tmp_path / "ledger"
    with pytest.raises(RecordsIncomplete) as caught:
        finishing.rebuild_records(str(ledger), str(default_catalog), "r1")
    message = str(caught.value)
    assert "1 of 2 records written" in message and "'paper-bad'" in message and "\n" not in message
    assert (ledger / "records" / "paper-x.json").exists() and not list((ledger / "records").glob("paper-bad*"))
    from citeledger.cli.entry import main

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    assert main(["records", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 2
