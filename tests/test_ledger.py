"""The ledger: contract columns, deterministic ids, resumable runs, views, read-only queries."""
import json
from pathlib import Path

import duckdb
import pytest

from citeledger.app_errors import QueryRefused
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.ledger.query import run_query
from citeledger.run import batches, finishing, planning
from resolvers.errors import ConfigError

CONTRACT_COLUMNS = {"observation_id", "observation_digest", "run_id", "observed_at", "citing_paper",
                    "reference_index", "raw", "source", "status", "resolver_source", "work_id", "doi", "arxiv_id",
                    "extracted_dois", "extracted_arxiv_ids", "score", "evidence"}
REPO = Path(__file__).parent.parent


def refs_file(tmp_path: Path, n: int = 30) -> Path:
    raws = ["Devlin J et al. BERT: Pre-training of deep bidirectional transformers for language understanding. arXiv:1810.04805",
            "Hamlin A et al. Sleep apnea in fragile X premutation carriers with and without FXTAS. doi:10.1002/ajmg.b.31237",
            "Smith J. Deep nets for everything. arXiv:1501.1234, 2015.",
            "add.period write newline",
            "Nobody N. A work that is in no catalog at all. J Nowhere. 1999;1:1-2."]
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps({"citing_paper": f"paper-{i // 10}", "reference_index": i % 10 + 1,
                                        "raw": raws[i % len(raws)], "source": "test"}) + "\n" for i in range(n))
                    + "{broken line\n")
    return path


def run_all(inputs, catalog, ledger, run_id=None, batch_size=7):
    plan = planning.plan_run(inputs, catalog, ledger, run_id=run_id, batch_size=batch_size)
    for job in plan.pending:
        batches.run_batch(job)
    return plan, finishing.finish_run(plan)


def observations(ledger: Path) -> list[dict]:
    return duckdb.sql(f"select * from read_parquet('{ledger}/observations/**/*.parquet', union_by_name=true) "
                      "order by citing_paper, reference_index").to_arrow_table().to_pylist()


def test_one_observation_per_row_with_contract_columns(tmp_path, fixture_catalog):
    plan, summary = run_all([refs_file(tmp_path)], fixture_catalog, tmp_path / "ledger")
    rows = observations(tmp_path / "ledger")
    assert len(rows) == 30 and summary.references == 30 and summary.rejects == 1
    assert CONTRACT_COLUMNS <= set(rows[0])
    assert len({r["observation_id"] for r in rows}) == 30
    assert all(r["observation_digest"].startswith("sha256:") and len(r["observation_digest"]) == 71 for r in rows)
    assert {r["status"] for r in rows} >= {"verified_exact", "malformed_identifier", "parse_uncertain", "unresolved"}
    bert = next(r for r in rows if "1810.04805" in r["raw"])
    assert (bert["work_id"], bert["arxiv_id"], bert["extracted_arxiv_ids"]) == ("arxiv:1810.04805", "1810.04805", ["1810.04805"])
    assert json.loads(bert["evidence"])["identifier"] == "1810.04805"
    assert sum(summary.states.values()) == 30


def test_the_run_row_and_summary_count_reasons_beside_states(tmp_path, fixture_catalog):
    """Issue 11: the run row holds a histogram of the rules' reasons (``reason_counts``), the same
    the typed RunSummary reports, and every observation is counted once."""
    _, summary = run_all([refs_file(tmp_path)], fixture_catalog, tmp_path / "ledger")
    rows = observations(tmp_path / "ledger")
    expected: dict[str, int] = {}
    for row in rows:
        expected[row["reason"]] = expected.get(row["reason"], 0) + 1
    assert summary.reasons == expected and sum(summary.reasons.values()) == 30
    (run_row,) = duckdb.sql(f"select reason_counts from read_parquet('{tmp_path}/ledger/runs/**/*.parquet')").fetchall()
    assert json.loads(run_row[0]) == summary.reasons
    as_json = json.loads(json.dumps(summary.as_dict()))
    assert as_json["reasons"] == summary.reasons and as_json["links"] == summary.links
    assert type(summary).from_dict(as_json) == summary


def test_ids_and_digests_are_stable_across_runs_and_ledgers(tmp_path, fixture_catalog):
    src = refs_file(tmp_path)
    run_all([src], fixture_catalog, tmp_path / "a", batch_size=7)
    run_all([src], fixture_catalog, tmp_path / "b", batch_size=11)
    a, b = observations(tmp_path / "a"), observations(tmp_path / "b")
    assert [(r["observation_id"], r["observation_digest"]) for r in a] == \
        [(r["observation_id"], r["observation_digest"]) for r in b]
    assert a[0]["run_id"] != b[0]["run_id"]


def test_rerun_of_a_finished_run_writes_nothing_new(tmp_path, fixture_catalog):
    src = refs_file(tmp_path)
    run_all([src], fixture_catalog, tmp_path / "l", run_id="r1")
    files = sorted((tmp_path / "l").rglob("*.parquet"))
    plan, _ = run_all([src], fixture_catalog, tmp_path / "l", run_id="r1")
    assert plan.resumed and not plan.pending
    assert sorted((tmp_path / "l").rglob("*.parquet")) == files
    assert len(observations(tmp_path / "l")) == 30


def test_interrupted_run_completes_to_the_uninterrupted_ledger(tmp_path, fixture_catalog):
    src = refs_file(tmp_path)
    run_all([src], fixture_catalog, tmp_path / "whole", run_id="same")
    plan = planning.plan_run([src], fixture_catalog, tmp_path / "cut", run_id="same", batch_size=7)
    batches.run_batch(plan.pending[0])
    batches.run_batch(plan.pending[2])  # a crash after two batches
    plan2, summary = run_all([src], fixture_catalog, tmp_path / "cut", run_id="same")
    assert plan2.resumed and len(plan2.pending) == len(plan2.jobs) - 2
    whole, cut = observations(tmp_path / "whole"), observations(tmp_path / "cut")
    strip = lambda rows: [{k: v for k, v in r.items() if k != "observed_at"} for r in rows]  # noqa: E731
    assert strip(whole) == strip(cut)
    # the resumed run keeps its first start time, so the late batches carry the same time
    assert {r["observed_at"] for r in cut} == {plan.observed_at}
    assert sum(summary.states.values()) == 30


def test_resume_with_other_inputs_is_refused(tmp_path, fixture_catalog):
    run_all([refs_file(tmp_path)], fixture_catalog, tmp_path / "l", run_id="r1")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "x"}) + "\n")
    with pytest.raises(ConfigError, match="other input files"):
        planning.plan_run([other], fixture_catalog, tmp_path / "l", run_id="r1")


@pytest.mark.parametrize("run_id", ["../escape", "a/b", "", "x" * 200, "run id"])
def test_unsafe_run_ids_are_refused(tmp_path, fixture_catalog, run_id):
    with pytest.raises(ConfigError):
        planning.plan_run([refs_file(tmp_path)], fixture_catalog, tmp_path / "l", run_id=run_id)


def test_views_and_rejects(tmp_path, fixture_catalog):
    src = refs_file(tmp_path)
    run_all([src], fixture_catalog, tmp_path / "l", run_id="r1")
    run_all([src], fixture_catalog, tmp_path / "l", run_id="r2")
    q = lambda sql: run_query(sql, tmp_path / "l", fixture_catalog).fetchall()  # noqa: E731
    assert q("select count(*) from observations") == [(60,)]
    assert q("select count(*), count(distinct run_id) from current") == [(30, 1)]
    assert q("select run_id from current limit 1") == [("r2",)]
    assert q("select file, line, field from rejects where run_id = 'r1'") == [(str(src), 31, None)]
    assert q("select count(*) from runs") == [(2,)]
    assert q("select count(*) > 0 from works where work_id = 'arxiv:1810.04805'") == [(True,)]
    # one notice per linked work, measured against the catalog's sources
    assert q("select count(*) from notices") == q("select count(distinct work_id) from current where work_id is not null")
    assert q("select count(*) from notices_history") == [(2 * q("select count(*) from notices")[0][0],)]


def test_views_exist_on_an_empty_ledger(tmp_path, fixture_catalog):
    """A ledger whose first run has begun (``_runs/``) and written nothing yet: every view is empty."""
    (tmp_path / "empty" / "_runs").mkdir(parents=True)
    for view in ("observations", "current", "works", "notices", "rejects", "runs", "transitions", "notices_history"):
        run_query(f"select * from {view} limit 1", tmp_path / "empty", fixture_catalog).fetchall()


@pytest.mark.parametrize("sql", [
    "delete from observations", "drop view observations", "copy observations to '/tmp/x.csv'",
    "attach 'x.db'", "create table t as select 1", "select 1; delete from observations",
    "set threads = 1", "install httpfs",
])
def test_query_refuses_anything_but_reading(tmp_path, fixture_catalog, sql):
    run_all([refs_file(tmp_path)], fixture_catalog, tmp_path / "l")
    before = sorted((tmp_path / "l").rglob("*"))
    with pytest.raises(QueryRefused):
        run_query(sql, tmp_path / "l", fixture_catalog)
    assert sorted((tmp_path / "l").rglob("*")) == before


def test_ledger_files_are_never_left_half_written(tmp_path, fixture_catalog, monkeypatch):
    """A write that dies mid-way leaves no part file and no staging debris that a reader sees."""
    src = refs_file(tmp_path)
    plan = planning.plan_run([src], fixture_catalog, tmp_path / "l", run_id="r", batch_size=7)
    import citeledger.storage.atomic as atomic

    real_replace = atomic.os.replace

    def dying_replace(a, b):
        if "observations" in str(b):
            raise KeyboardInterrupt("killed during the rename")
        return real_replace(a, b)

    monkeypatch.setattr(atomic.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        batches.run_batch(plan.pending[0])
    monkeypatch.setattr(atomic.os, "replace", real_replace)
    assert not list((tmp_path / "l").glob("observations/**/*.parquet"))
    assert not list((tmp_path / "l" / ".staging").glob("*"))
    assert not LedgerStore(tmp_path / "l").batch_done("r", plan.pending[0].part)


def test_resume_keeps_the_options_the_run_started_with(tmp_path, fixture_catalog):
    """A different max_raw_chars on resume would move rows between rejects and batches (and
    duplicate them): the resumed run reads its inputs with the limits it started with."""
    from citeledger.inputs.rows import InputLimits

    src = refs_file(tmp_path)
    plan = planning.plan_run([src], fixture_catalog, tmp_path / "l", run_id="r", batch_size=7,
                             limits=InputLimits(max_raw_chars=10_000))
    batches.run_batch(plan.pending[0])
    finishing.abandon_run(plan)
    plan2, _ = run_all([src], fixture_catalog, tmp_path / "l", run_id="r", batch_size=7)
    assert plan2.rejects == plan.rejects and [j.part for j in plan2.jobs] == [j.part for j in plan.jobs]
    rows = observations(tmp_path / "l")
    assert len(rows) == 30 and len({(r["citing_paper"], r["reference_index"]) for r in rows}) == 30


def test_a_run_resolves_against_the_generation_it_was_planned_on(tmp_path, fixture_catalog):
    """A catalog refresh that lands mid-run does not change what the run's batches see: the rows
    would otherwise carry the planned catalog's fingerprint but another catalog's answers."""
    import shutil

    from citeledger.catalog.catalog_store import CatalogStore

    catalog = tmp_path / "catalog"
    shutil.copytree(fixture_catalog, catalog)
    src = tmp_path / "refs.jsonl"
    src.write_text(json.dumps({"citing_paper": "p", "reference_index": 1,
                               "raw": "Doe J. A new work on old things. J New. 2020. doi:10.1000/new"}) + "\n")
    plan = planning.plan_run([src], catalog, tmp_path / "l", run_id="r")
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"doi": "10.1000/new", "arxiv_id": None, "title": "A new work on old things"}) + "\n")
    CatalogStore(catalog).build([extra])  # the refresh lands after planning
    for job in plan.pending:
        batches.run_batch(job)
    finishing.finish_run(plan)
    (row,) = observations(tmp_path / "l")
    assert (row["status"], row["reason"]) == ("unresolved", "identifier_not_in_catalog")
    _, later = run_all([src], catalog, tmp_path / "l", run_id="r2")  # the next run sees the new work
    assert later.states["verified_exact"] == 1
