"""The nightly run: inbox -> ledger, a catalog refresh that turns unresolved references into links,
and a run with nothing new that changes nothing. Driven through the plain functions the flow
calls (no Prefect), plus one run of the real flow through Prefect."""
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from citeledger.catalog import sharding
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.ledger.query import run_query
from citeledger.nightly import steps as nightly
from citeledger.run import batches, planning
from citeledger.storage.places import CatalogPlaces

FIXTURES = Path(__file__).parent / "fixtures" / "catalog"

NEW_DOI = "10.9999/nightly.2024.001"
FUZZY_TITLE = "Adaptive spectral sparsification of streaming hypergraphs under vertex arrivals"
REFS = [
    # settled by an identifier already in the catalog: must never be touched again
    {"citing_paper": "paper-a", "reference_index": 1,
     "raw": "Kawai K. Endoscopic sphincterotomy of the ampulla of Vater. Gastrointest Endosc 1974;20:148. "
            "doi:10.1016/S0016-5107(74)73914-1"},
    # cites by DOI a work the catalog learns only the second night
    {"citing_paper": "paper-a", "reference_index": 2,
     "raw": f"Quist R, Berg M. Ledger-based citation auditing at scale. J Sci Audit 2024;3:1-19. doi:{NEW_DOI}"},
    # cites by title a work the catalog learns only the second night
    {"citing_paper": "paper-a", "reference_index": 3,
     "raw": f"Kowalczyk A, Nakamura T. {FUZZY_TITLE}. Journal of Graph Algorithms and Applications. "
            "2019;23(4):611-640."},
    # cites a work no catalog will ever hold
    {"citing_paper": "paper-a", "reference_index": 4,
     "raw": "Doe J. Nothing to see in this volume. Proceedings of Nowhere. 1999;1:1-2."},
]
BIB = """@article{k, author={Kawai, K.}, title={Endoscopic sphincterotomy of the ampulla of Vater},
  journal={Gastrointest Endosc}, year={1974}, volume={20}, pages={148}, doi={10.1016/S0016-5107(74)73914-1}}
"""
NEW_WORKS = [
    {"doi": NEW_DOI, "arxiv_id": None, "title": "Ledger-based citation auditing at scale",
     "authors": ["Quist, R", "Berg, M"], "year": 2024, "venue": "J Sci Audit", "volume": "3", "first_page": "1"},
    {"doi": "10.9999/jgaa.2019.611", "arxiv_id": None, "title": FUZZY_TITLE,
     "authors": ["Kowalczyk, A", "Nakamura, T"], "year": 2019, "venue": "Journal of Graph Algorithms and Applications",
     "volume": "23", "first_page": "611"},
]


@pytest.fixture(scope="module")
def built_catalog(tmp_path_factory) -> Path:
    """The fixture works' catalog, built once for the module; each test's site gets a copy."""
    catalog = tmp_path_factory.mktemp("nightly-catalog") / "catalog"
    CatalogStore(catalog).build(sorted(FIXTURES.glob("*.jsonl")))
    return catalog


@pytest.fixture
def site(tmp_path, built_catalog):
    """A catalog, an inbox with a JSONL file and a .bib file, an empty catalog inbox."""
    dirs = {k: tmp_path / k for k in ("catalog", "ledger", "inbox", "processed", "catalog-inbox")}
    shutil.copytree(built_catalog, dirs["catalog"])  # a night changes its catalog
    dirs["inbox"].mkdir()
    dirs["catalog-inbox"].mkdir()
    (dirs["inbox"] / "refs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in REFS))
    (dirs["inbox"] / "2101.00001.bib").write_text(BIB)
    (dirs["inbox"] / ".half-copied.jsonl").write_text("{")
    return dirs


def night(site) -> dict:
    """Exactly what the nightly flow does, without Prefect."""
    refresh = nightly.ingest_new_sources(site["catalog"], site["catalog-inbox"])
    work = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=2)
    if work.plan is None:
        return nightly.idle_nightly(work, site["ledger"], site["catalog"], site["processed"], bool(refresh.files)).as_dict()
    for job in work.plan.pending:
        batches.run_batch(job)
    return nightly.complete_nightly(work, site["processed"]).as_dict()


def q(site, sql):
    return run_query(sql, site["ledger"], site["catalog"]).fetchall()


def ledger_files(ledger: Path) -> dict[str, int]:
    return {str(p.relative_to(ledger)): p.stat().st_mtime_ns for p in ledger.rglob("*") if p.is_file()}


def test_three_nights(site):
    # night 1: the inbox is resolved, the files move only after, the dot-file stays
    first = night(site)
    assert first["changed"] and first["run_id"].startswith("nightly-")
    assert sorted(os.listdir(site["inbox"])) == [".half-copied.jsonl"]
    assert sorted(os.listdir(site["processed"] / first["run_id"])) == ["2101.00001.bib", "refs.jsonl"]
    state = dict(((p, i), s) for p, i, s in q(site, "select citing_paper, reference_index, status from current"))
    assert state == {("paper-a", 1): "verified_exact", ("paper-a", 2): "unresolved",
                     ("paper-a", 3): "unresolved", ("paper-a", 4): "unresolved",
                     ("2101.00001", 1): "verified_exact"}  # the .bib file's citing paper is its name
    assert q(site, "select count(*) from transitions") == [(0,)]
    row = q(site, "select trigger, transitions, catalog_seq, timings from runs")[0]
    assert row[0] == "nightly" and row[1] == 0 and row[2] > 0

    # the catalog learns two works; night 2 re-resolves only the references they could settle
    (site["catalog-inbox"] / "new-works.jsonl").write_text("".join(json.dumps(w) + "\n" for w in NEW_WORKS))
    second = night(site)
    assert second["changed"] and second["run_id"] != first["run_id"]
    assert second["rerun"] == {"unresolved_new_works": 2}
    assert not list(site["catalog-inbox"].glob("*.jsonl"))  # moved to catalog-inbox/processed/
    assert sorted(q(site, "select reference_index, from_status, to_status, to_work_id, from_run, to_run "
                          "from transitions order by 1")) == [
        (2, "unresolved", "verified_exact", f"doi:{NEW_DOI}", first["run_id"], second["run_id"]),
        (3, "unresolved", "verified_fuzzy", "doi:10.9999/jgaa.2019.611", first["run_id"], second["run_id"]),
    ]
    # everything else untouched: one observation each, from night 1
    assert q(site, "select citing_paper, reference_index, count(*), arg_max(run_id, observed_at) from observations "
                   "group by 1, 2 having count(*) > 1 or arg_max(run_id, observed_at) <> "
                   f"'{first['run_id']}' order by 1, 2") == [
        ("paper-a", 2, 2, second["run_id"]), ("paper-a", 3, 2, second["run_id"])]
    assert q(site, f"select transitions, \"references\", state_counts from runs where run_id = '{second['run_id']}'") == [
        (2, 2, json.dumps({"parse_uncertain": 0, "verified_exact": 1, "metadata_mismatch": 0, "verified_fuzzy": 1,
                           "malformed_identifier": 0, "unavailable": 0, "unresolved": 0}))]
    assert "paper-a" in second["papers"]

    # night 3: nothing new; not a single ledger file is written, no run row
    before = ledger_files(site["ledger"])
    third = night(site)
    assert third["changed"] is False and third["run_id"] is None
    assert ledger_files(site["ledger"]) == before
    assert q(site, "select count(*) from runs") == [(2,)]

    # the DuckDB file holds the views and opens read-only from any directory, the ledger folder on
    # DuckDB's search path (its views' paths are relative to the ledger)
    con = duckdb.connect(str(site["ledger"] / "ledger.duckdb"), read_only=True)
    con.execute(f"SET file_search_path = '{site['ledger']}'")
    try:
        assert dict(con.sql("select status, count(*) from current group by 1").fetchall()) == {
            "verified_exact": 3, "verified_fuzzy": 1, "unresolved": 1}
        assert con.execute("select count(*) from transitions").fetchall() == [(2,)]
        assert con.execute("select count(*) from works").fetchall()[0][0] >= 17
    finally:
        con.close()


def test_an_identical_file_dropped_again_is_not_read_again(site):
    first = night(site)
    shutil.copy(site["processed"] / first["run_id"] / "refs.jsonl", site["inbox"] / "refs-again.jsonl")
    before = ledger_files(site["ledger"])
    again = night(site)
    assert again["changed"] is False and again["already_processed"] == {
        str(site["inbox"] / "refs-again.jsonl"): first["run_id"]}
    assert (site["processed"] / first["run_id"] / "refs-again.jsonl").exists()
    assert ledger_files(site["ledger"]) == before


def test_an_interrupted_night_is_resumed_and_its_files_stay_until_then(site):
    work = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=2)
    batches.run_batch(work.plan.pending[0])  # then the machine stops
    assert (site["inbox"] / "refs.jsonl").exists()
    resumed = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=2)
    assert resumed.plan.run_id == work.plan.run_id and resumed.plan.resumed
    assert len(resumed.plan.pending) == len(work.plan.pending) - 1
    for job in resumed.plan.pending:
        batches.run_batch(job)
    summary = nightly.complete_nightly(resumed, site["processed"])
    assert summary.run is not None and summary.run.references == 5 and not (site["inbox"] / "refs.jsonl").exists()
    assert q(site, "select count(*), count(distinct observation_id) from observations") == [(5, 5)]


def test_a_failed_night_shows_in_runs_until_the_next_night_finishes_it(site):
    """A night that failed midway (what the flow's failure hook writes): ``runs`` shows it with
    ``finished_at`` null and the message, ``citeledger runs`` calls it failed; the next night
    resumes it, and the finished row replaces the failed one."""
    from citeledger.ledger.inspect import ledger_runs
    from citeledger.run import batches, finishing

    work = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=2)
    batches.run_batch(work.plan.pending[0])
    finishing.abandon_run(work.plan)  # what complete_run does when a step fails
    run_id = work.plan.run_id
    finishing.record_failure(site["ledger"], run_id, "TimeoutError: Flow run exceeded timeout", "nightly", "fr-1")
    assert q(site, "select run_id, finished_at, errors, flow_run_id, trigger from runs") == [
        (run_id, None, '["failed: TimeoutError: Flow run exceeded timeout"]', "fr-1", "nightly")]
    assert [(r["run_id"], r["state"]) for r in ledger_runs(site["ledger"])] == [(run_id, "failed")]

    resumed = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=2)
    assert resumed.plan.run_id == run_id and resumed.plan.resumed
    for job in resumed.plan.pending:
        batches.run_batch(job)
    notices = nightly.nightly_notices(resumed)
    nightly.finish_nightly(resumed, site["processed"], notices, flow_run_id="fr-2")
    ((finished_at, errors, flow_run_id),) = q(site, "select finished_at, errors, flow_run_id from runs")
    assert finished_at is not None and errors == "[]" and flow_run_id == "fr-2"
    assert [(r["run_id"], r["state"]) for r in ledger_runs(site["ledger"])] == [(run_id, "finished")]
    finishing.record_failure(site["ledger"], run_id, "late", "nightly")  # a finished run stays finished
    assert q(site, "select count(*) from runs where finished_at is null") == [(0,)]


def test_a_night_stopped_while_writing_its_records_is_not_finished_and_is_resumed(site):
    """The records come before the run row: a night stopped while writing them leaves ``runs``
    without a finished row and its inbox files in place; the next night resumes it and writes both."""
    from citeledger.records import record_files

    work = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=2)
    for job in work.plan.pending:
        batches.run_batch(job)
    asked: list[list[str]] = []

    def dying_writer(papers: list[str]) -> int:
        asked.append(papers)
        raise OSError("the machine stops while the records are written")

    with pytest.raises(OSError):
        nightly.finish_nightly(work, site["processed"], nightly.nightly_notices(work), records=dying_writer)
    assert asked and asked[0]
    assert q(site, "select count(*) from runs where finished_at is not null") == [(0,)]
    assert (site["inbox"] / "refs.jsonl").exists()
    planning.forget_interrupted_runs()

    resumed = nightly.prepare_nightly(site["inbox"], site["catalog"], site["ledger"], batch_size=2)
    assert resumed.plan.run_id == work.plan.run_id and not resumed.plan.pending

    def writer(papers: list[str]) -> int:
        return len(record_files.write_records(papers, site["ledger"], site["catalog"]))

    summary = nightly.finish_nightly(resumed, site["processed"], nightly.nightly_notices(resumed), records=writer)
    assert summary.run is not None and summary.run.records == len(summary.papers) == len(asked[0])
    assert q(site, "select count(*) from runs where finished_at is not null") == [(1,)]
    assert not (site["inbox"] / "refs.jsonl").exists()


def test_fuzzy_links_are_rechecked_only_when_a_new_work_shares_their_tokens(site):
    night(site)
    (site["catalog-inbox"] / "unrelated.jsonl").write_text(json.dumps(
        {"doi": "10.9999/other", "title": "Photosynthesis in deep sea vents", "authors": ["Lee, K"],
         "year": 2001}) + "\n")
    second = night(site)
    assert second["changed"] is False  # no reference shares two tokens or an identifier with it
    (site["catalog-inbox"] / "close.jsonl").write_text(json.dumps(NEW_WORKS[1]) + "\n")
    third = night(site)
    assert third["rerun"] == {"unresolved_new_works": 1}
    (site["catalog-inbox"] / "closer.jsonl").write_text(json.dumps(
        {**NEW_WORKS[1], "doi": "10.9999/jgaa-preprint", "title": FUZZY_TITLE + " (preprint)"}) + "\n")
    fourth = night(site)
    assert fourth["rerun"] == {"fuzzy_new_candidates": 1}


@pytest.mark.flow
def test_a_refresh_shards_the_new_generation_as_the_catalog_was(site, monkeypatch):
    """A sharded catalog stays sharded across refreshes (as many shards, made for the new works
    table), an unsharded one stays unsharded; a sharding that fails is a refresh error that loses
    nothing (the inbox file is built in and moved), and the next refresh shards the generation."""
    from citeledger.app_errors import DiskFull
    from citeledger.index import shards

    def drop(name: str, title: str) -> None:
        work = {**NEW_WORKS[0], "doi": f"10.9999/{name}", "title": title}
        (site["catalog-inbox"] / f"{name}.jsonl").write_text(json.dumps(work) + "\n")

    store = CatalogStore(site["catalog"])
    drop("one", "Sharding a ledger catalog by work")
    plain = nightly.ingest_new_sources(site["catalog"], site["catalog-inbox"])
    assert plain.changed and plain.shards is None and shards.stamp_of(store.current()) is None
    assert not plain.errors and not CatalogPlaces(site["catalog"]).sharding.exists()
    clusters = []  # the shard tasks' cluster, as `catalog build --shards 2 --task-runner dask` names it

    @contextmanager
    def cluster(workers, address):
        clusters.append((workers, address))
        yield lambda fn, items: [fn(item) for item in items]
    monkeypatch.setattr(sharding, "dask_mapper", cluster)
    sharding.shard_with(site["catalog"], 2, "dask", 3, "tcp://scheduler:8786")
    assert sharding.sharding_of(site["catalog"]) == {"n_shards": 2, "task_runner": "dask", "dask_workers": 3,
                                                   "dask_address": "tcp://scheduler:8786"}
    before = store.current()
    drop("two", "Refreshing a sharded catalog every night")
    report = nightly.ingest_new_sources(site["catalog"], site["catalog-inbox"])
    after = store.current()
    assert report.generation == after.name != before.name and report.as_dict()["shards"] == 2
    assert clusters == [(3, "tcp://scheduler:8786")] * 2  # the refresh's shard tasks went where the first ones did
    stamp = shards.stamp_of(after)
    assert stamp is not None and stamp["n_shards"] == 2 and stamp["n_works"] == report.works_after

    def full(gen_dir, n_shards, mapper=None):
        raise DiskFull(f"{gen_dir}: no space left on device")
    monkeypatch.undo()
    sharding.shard_with(site["catalog"], 2)  # (in this process from here on)
    monkeypatch.setattr(sharding, "build_shards", full)
    drop("three", "When the disk fills during sharding")
    failed = nightly.ingest_new_sources(site["catalog"], site["catalog-inbox"])
    assert failed.changed and failed.shards is None and shards.stamp_of(store.current()) is None
    assert [e for e in failed.errors if "no space left" in e] and not list(site["catalog-inbox"].glob("*.jsonl"))
    assert failed.works_after == report.works_after + 1
    monkeypatch.undo()
    again = nightly.ingest_new_sources(site["catalog"], site["catalog-inbox"])  # nothing new: the shards only
    assert not again.changed and again.shards == 2 and not again.errors
    assert shards.stamp_of(store.current())["n_shards"] == 2

    CatalogPlaces(site["catalog"]).sharding.unlink()  # a catalog sharded before the count was kept: its live generation's
    drop("four", "Catalogs sharded before the count was kept")
    old_style = nightly.ingest_new_sources(site["catalog"], site["catalog-inbox"])
    assert old_style.changed and old_style.shards == 2 and shards.stamp_of(store.current())["n_shards"] == 2

    CatalogPlaces(site["catalog"]).sharding.write_text('{"n_shards": 0}')  # (a hand-edited file: said, not guessed)
    drop("five", "A sharding file edited by hand")
    broken = nightly.ingest_new_sources(site["catalog"], site["catalog-inbox"])
    assert broken.changed and broken.shards is None and [e for e in broken.errors if "not a shard count" in e]


def test_nightly_flow_through_prefect(site, monkeypatch):
    from flows.nightly import nightly as nightly_flow

    monkeypatch.setenv("CITELEDGER_NIGHTLY_ROOTS", str(site["inbox"].parent))  # the night's folders' root

    kwargs = {k.replace("-", "_"): str(v) for k, v in site.items()}
    summary = nightly_flow(inbox=kwargs["inbox"], processed=kwargs["processed"], catalog=kwargs["catalog"],
                           ledger=kwargs["ledger"], catalog_inbox=kwargs["catalog_inbox"], batch_size=2)
    assert summary["changed"] and summary["states"]["verified_exact"] == 2
    assert summary["records"] == len(summary["papers"]) >= 2
    assert (site["ledger"] / "ledger.duckdb").exists()
    assert not (site["inbox"] / "refs.jsonl").exists()


def test_inbox_moves_are_staged_across_file_systems(tmp_path, monkeypatch):
    """Issue 11: a processed inbox file is moved through ``atomic.atomic_move``; where a rename
    cannot cross file systems (EXDEV) it is copied staged, renamed into place, then removed."""
    import errno

    from citeledger.storage import atomic

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    src = inbox / "refs.jsonl"
    src.write_bytes(b'{"citing_paper": "p", "reference_index": 1, "raw": "x"}\n' * 1000)
    real_replace = atomic.os.replace

    def no_cross_rename(a, b):
        if str(a) == str(src):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_replace(a, b)

    synced = []
    real_fsync = atomic.os.fsync
    monkeypatch.setattr(atomic.os, "replace", no_cross_rename)
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    (moved,) = nightly.move_to_processed([src], tmp_path / "processed", "run-1")
    assert moved == tmp_path / "processed" / "run-1" / "refs.jsonl" and not src.exists()
    assert moved.read_bytes().count(b"\n") == 1000
    assert not list((tmp_path / "processed" / "run-1").glob(".*"))
    assert len(synced) >= 3  # the staged copy, then both folders: the move survives a crash


def test_harvest_spools_through_staged_writes(tmp_path, monkeypatch):
    """Issue 11: harvest_remote's spool is written staged (``atomic_write_lines``): the day's file
    holds every record, nothing staged is left, and a failing service is one error line."""
    from types import SimpleNamespace

    class FakeHttp:
        def close(self):
            pass

    class FakeCrossref:
        def __init__(self, *args):
            self.http = FakeHttp()

        def harvest(self, since, until_index_date, checkpoint):
            yield from ({"DOI": f"10.1/{i}", "title": [f"work {i}"]} for i in range(3))

    def broken_download(*args):
        raise OSError("no route")

    monkeypatch.setattr(nightly, "CrossrefClient", FakeCrossref)
    monkeypatch.setattr(nightly, "make_http_client", lambda *a, **k: FakeHttp())
    monkeypatch.setattr(nightly, "refresh_retraction_watch", broken_download)
    config = SimpleNamespace(remote={"crossref"}, remote_settings=lambda: SimpleNamespace(max_run_seconds=60.0),
                             mailto=None,
                             endpoints=SimpleNamespace(crossref_api="x", retraction_watch_csv="y"))
    today = __import__("datetime").date(2026, 1, 2)
    files, counts, errors = nightly.harvest_remote(config, tmp_path, today)
    assert files == [tmp_path / "harvest" / "crossref-2026-01-02.jsonl"] and counts == {"crossref": 3}
    assert files[0].read_text().count("\n") == 3 and not list((tmp_path / "harvest").glob(".*"))
    assert errors == ["retraction watch download: OSError: no route"]
    assert json.loads((tmp_path / "refresh.json").read_text())["crossref_until"] == "2026-01-02"


def test_a_retraction_learnt_later_reaches_a_cited_doi_the_catalog_lacks(site):
    """Night 1 cites a DOI no catalog work carries; night 2's catalog refresh brings a Retraction
    Watch export listing it: the nightly run writes its notice and names the citing paper."""
    retracted = "10.1016/j.micpro.2020.103053"
    (site["inbox"] / "cites-retracted.jsonl").write_text(json.dumps(
        {"citing_paper": "paper-r", "reference_index": 1,
         "raw": f"Placeholder P. Placeholder title zeta. Microprocess Microsyst. 2020;75:103053. doi:{retracted}"}) + "\n")
    night(site)
    assert q(site, f"select count(*) from notices where doi = '{retracted}'") == [(0,)]
    fixture = (FIXTURES.parent / "notices" / "retraction_watch_2026-09_sample.csv").read_text(encoding="utf-8")
    (site["catalog-inbox"] / "retraction_watch.csv").write_text(
        fixture.split("#---8<--- payload below ---8<---\n", 1)[1], encoding="utf-8")
    second = night(site)
    assert q(site, f"select work_id, standing from notices where doi = '{retracted}'") == [
        (f"doi:{retracted}", "retracted")]
    assert "paper-r" in second["papers"] and second["notices_changed"] >= 1
    assert q(site, "select status from current where citing_paper = 'paper-r'") == [("unresolved",)]
