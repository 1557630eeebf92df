"""A cited DOI that Retraction Watch lists shows its notice even when the works table lacks it
through the command line, from catalog build to the citation record."""
import json
from pathlib import Path

from citeledger import cli

FIXTURES = Path(__file__).parent / "fixtures"
RETRACTED_DOI = "10.1016/j.micpro.2020.103053"  # Retraction Watch: expression of concern, then retraction
PAPER = "2401.00001"
REFERENCES = [
    f"Placeholder P. Placeholder title zeta. Microprocess Microsyst. 2020;75:103053. doi:{RETRACTED_DOI}",
    "Gerke H, Baillie J. To cut or stretch? Am J Gastroenterol. 2004;99:1461-3. doi:10.1111/j.1572-0241.2004.40358.x",
    "Nobody N. A paper no catalog and no notice source knows. J Nowhere. 1999;1:1-2. doi:10.9999/nowhere.1",
]


def _json_out(capsys, argv: list[str]) -> list:
    """What a command printed as JSON: ``query`` prints one object a line, ``record`` one object."""
    capsys.readouterr()
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    try:
        return [json.loads(out)]
    except ValueError:
        return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_retracted_doi_missing_from_the_works_table_gets_its_notice(tmp_path, capsys):
    catalog, ledger = tmp_path / "catalog", tmp_path / "ledger"
    # the Retraction Watch export as the fixture holds it, its source note aside
    fixture = (FIXTURES / "notices" / "retraction_watch_2026-09_sample.csv").read_text(encoding="utf-8")
    export = tmp_path / "retraction_watch.csv"
    export.write_text(fixture.split("#---8<--- payload below ---8<---\n", 1)[1], encoding="utf-8")
    assert cli.main(["catalog", "build", "--catalog", str(catalog), str(FIXTURES / "catalog" / "works.jsonl"),
                     str(export)]) == 0
    works = _json_out(capsys, ["query", f"select count(*) as n from works where doi = '{RETRACTED_DOI}'",
                               "--catalog", str(catalog), "--format", "json"])
    assert works == [{"n": 0}]  # the works table lacks the retracted paper
    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps({"citing_paper": PAPER, "reference_index": i + 1, "raw": raw}) + "\n"
                            for i, raw in enumerate(REFERENCES)))
    assert cli.main(["resolve", str(refs), "--catalog", str(catalog), "--ledger", str(ledger)]) == 0

    notices = _json_out(capsys, ["query", "select work_id, doi, state, standing from notices order by work_id",
                                 "--ledger", str(ledger), "--catalog", str(catalog), "--format", "json"])
    by_doi = {n["doi"]: n for n in notices}
    assert by_doi[RETRACTED_DOI] == {"work_id": f"doi:{RETRACTED_DOI}", "doi": RETRACTED_DOI,
                                     "state": "measured", "standing": "retracted"}
    assert by_doi["10.1111/j.1572-0241.2004.40358.x"]["standing"] == "none"  # a linked work, as before
    assert "10.9999/nowhere.1" not in by_doi  # listed by no source: no row

    (record,) = _json_out(capsys, ["record", PAPER, "--ledger", str(ledger), "--catalog", str(catalog),
                                "--format", "json"])
    items = {i["reference_index"]: i for i in record["outbound"]["items"]}
    assert items[1]["status"] == "unresolved" and items[1]["resolved"] is None
    assert items[1]["notice"]["standing"] == "retracted"
    assert [e["type"] for e in items[1]["notice"]["events"]] == ["expression_of_concern", "retraction"]
    assert [i["reference_index"] for i in record["with_notices"]] == [1]
    assert items[2]["status"] == "verified_exact" and items[2]["notice"]["standing"] == "none"
    assert items[3]["notice"]["state"] == "unavailable"  # no work and no listed DOI: not checked
