"""Run integrity and one-line errors."""
from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from citeledger import cli, config, options
from citeledger.app_errors import DiskFull, LedgerPathError
from citeledger.catalog import catalog_store as catalog_module
from citeledger.catalog import generation_pins as pins_module
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.cli import arguments as cli_arguments
from citeledger.ledger import ledger_store as ledger_module
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.records import record_files
from citeledger.run import batches, finishing, planning
from citeledger.storage import atomic, locking
from citeledger.storage.places import CatalogPlaces
from resolvers.errors import CiteledgerError, ConfigError

ROWS = [{"citing_paper": "paper-a", "reference_index": i,
         "raw": f"Nobody {i}. Not in any catalog. J Nowhere 1999;{i}:1."} for i in range(1, 5)]


def write_input(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def resolve(inp: Path, catalog: Path, ledger: Path, run_id: str, **kw) -> dict:
    plan = planning.plan_run([inp], catalog, ledger, run_id=run_id, **kw)
    for job in plan.pending:
        batches.run_batch(job)
    return finishing.finish_run(plan)


def one_line_error(capsys, argv: list[str]) -> str:
    """Run the CLI in this process; it must exit 2 with one line on stderr."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


# --- numeric options ----------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["resolve", "x.jsonl", "--batch-size", "-5"], ["resolve", "x.jsonl", "--batch-size", "0"],
    ["resolve", "x.jsonl", "--dask-workers", "0"], ["nightly", "--batch-size", "-1"],
    ["query", "select 1", "--max-rows", "-3"], ["record", "x", "--page-cap", "0"],
    ["eval", "g.jsonl", "--worst", "-1"], ["resolve", "x.jsonl", "--batch-size", "ten"]])
def test_numeric_options_below_their_minimum_are_refused(capsys, argv):
    line = one_line_error(capsys, argv)
    assert "must be >=" in line or "whole number" in line


def test_plan_run_refuses_a_batch_size_below_one(tmp_path, fixture_catalog):
    inp = write_input(tmp_path / "in.jsonl", ROWS)
    with pytest.raises(ConfigError, match="batch_size: must be >= 1"):
        planning.plan_run([inp], fixture_catalog, tmp_path / "ledger", run_id="r1", batch_size=-5)
    assert not locking.holds_ledger(tmp_path / "ledger")
    with pytest.raises(ConfigError, match="page_cap: must be >= 1"):
        record_files.citation_record("paper-a", tmp_path / "ledger", fixture_catalog, page_cap=-1)


def test_config_limits_and_the_command_line_share_one_check(tmp_path):
    with pytest.raises(ConfigError, match="limits.batch_size: must be >= 1"):
        config.load_config(env={"CITELEDGER_BATCH_SIZE": "0"}, cwd=tmp_path)
    assert options.positive_int("7") == 7 and options.non_negative_int("0") == 0


# --- record file names --------------------------------------------------------------

TRICKY_IDS = [".hidden", "..hidden", "hidden", "...", ".", "..", "", " ", "_", "%2E", "%2Ehidden", "Hidden",
              "HIDDEN", "hep-th/9901001", "hep-th%2F9901001", "hep-th_9901001", "2301.00001", "2301.00001v2",
              "10.1103/PhysRevLett.116.061102", "10.1103/physrevlett.116.061102", "é", "e\u0301", "É",
              "a/b", "a%2Fb", "a+b", "a b", "x" * 200, "x" * 201, "x" * 120, "x" * 121, "hidden+0000000000000000",
              "CON", "con", "\u202eevil", "tab\there", "nul\x00l", "~", "-", "--"]


def test_record_file_names_are_injective_even_on_case_blind_file_systems():
    stems = [record_files.record_file_stem(i) for i in TRICKY_IDS]
    assert len({s.lower() for s in stems}) == len(TRICKY_IDS)
    for paper_id in ("2301.00001", "hep-th/9901001", "10.1000/xyz.123"):  # ordinary ids stay readable
        assert "+" not in record_files.record_file_stem(paper_id)


def test_hidden_citing_papers_get_one_record_file_each(tmp_path, fixture_catalog):
    papers = [".hidden", "..hidden", "hidden"]
    inp = write_input(tmp_path / "in.jsonl", [dict(ROWS[0], citing_paper=p) for p in papers])
    resolve(inp, fixture_catalog, tmp_path / "ledger", "r1")
    written = record_files.write_records(papers, tmp_path / "ledger", fixture_catalog)
    assert len(set(written)) == 3
    assert sorted(json.loads(p.read_text())["paper"]["id"] for p in written) == sorted(papers)


# --- a run keeps its catalog generation ---------------------------------------------

def test_a_planned_run_survives_two_catalog_builds_and_resumes(tmp_path):
    catalog = tmp_path / "catalog"
    CatalogStore(catalog).build([FIXTURES / "catalog" / "works.jsonl"])
    inp = write_input(tmp_path / "in.jsonl", ROWS)
    plan = planning.plan_run([inp], catalog, tmp_path / "ledger", run_id="r1", batch_size=2)
    finishing.abandon_run(plan)  # interrupted after planning
    for name in ("arxiv_snapshot.jsonl", "crossref_messages.jsonl"):  # two builds: new fingerprints
        CatalogStore(catalog).build([FIXTURES / "catalog" / name])
    assert (catalog / plan.jobs[0].catalog_generation / "manifest.json").exists()
    batches.run_batch(plan.pending[0])  # the planned batches still resolve
    resumed = planning.plan_run([inp], catalog, tmp_path / "ledger", run_id="r1")
    assert resumed.resumed and [j.part for j in resumed.pending] == [plan.jobs[1].part]
    for job in resumed.pending:
        batches.run_batch(job)
    summary = finishing.finish_run(resumed)
    assert summary.references == 4 and sum(summary.states.values()) == 4
    assert not list(CatalogPlaces(catalog).pins.glob("*.json"))  # the finished run lets go
    CatalogStore(catalog).build([FIXTURES / "catalog" / "works.jsonl"])
    assert not (catalog / plan.jobs[0].catalog_generation).exists()  # and the next build removes it


def test_stale_pins_of_dead_processes_are_dropped(tmp_path):
    catalog, ledger = tmp_path / "catalog", tmp_path / "ledger"
    CatalogPlaces(catalog).pins.mkdir(parents=True)
    dead = {"generation": "gen-000001", "ledger": str(ledger), "run_id": "gone", "pid": 2 ** 22 + 12345}
    (CatalogPlaces(catalog).pins / "x-gone.json").write_text(json.dumps(dead))
    unfinished = dict(dead, run_id="open", generation="gen-000002")
    (CatalogPlaces(catalog).pins / "x-open.json").write_text(json.dumps(unfinished))
    (ledger / "_runs" / "open").mkdir(parents=True)
    (ledger / "_runs" / "open" / "manifest.json").write_text("{}")
    assert pins_module.pinned_generations(catalog) == {"gen-000002"}  # the unfinished run keeps its pin
    assert not (CatalogPlaces(catalog).pins / "x-gone.json").exists()


# --- finishing steps are re-run on resume ---------------------------------------------

def test_disk_full_writing_the_ledger_database_is_finished_by_the_resumed_run(tmp_path, fixture_catalog,
                                                                               monkeypatch):
    inp = write_input(tmp_path / "in.jsonl", ROWS)
    ledger = tmp_path / "ledger"

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(ledger_module, "_write_database_file", full)
        with pytest.raises(DiskFull, match="ledger.duckdb"):
            resolve(inp, fixture_catalog, ledger, "r1")
    assert not LedgerStore(ledger).run_finished("r1") and not (ledger / "ledger.duckdb").exists()
    assert not list(ledger.glob(".*.tmp"))
    summary = resolve(inp, fixture_catalog, ledger, "r1")
    assert summary.resumed and (ledger / "ledger.duckdb").exists()
    assert LedgerStore(ledger).run_finished("r1")


def test_enospc_in_a_staged_write_is_one_error_and_leaves_nothing(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(DiskFull, match="out.json"):
        atomic.atomic_write_bytes(tmp_path / "out.json", b"x" * 100)
    assert list(tmp_path.iterdir()) == []


# --- an unknown run -------------------------------------------------------------------

def test_records_of_an_unknown_run_is_an_error_naming_the_latest_runs(tmp_path, fixture_catalog, capsys):
    resolve(write_input(tmp_path / "in.jsonl", ROWS), fixture_catalog, tmp_path / "ledger", "r1")
    line = one_line_error(capsys, ["records", "--ledger", str(tmp_path / "ledger"),
                                   "--catalog", str(fixture_catalog), "--run-id", "nosuchrun"])
    assert "nosuchrun" in line and "r1" in line


# --- leftovers of killed record writers ------------------------------------------------

def test_leftover_staged_record_files_are_removed_by_the_next_records(tmp_path, fixture_catalog):
    resolve(write_input(tmp_path / "in.jsonl", ROWS), fixture_catalog, tmp_path / "ledger", "r1")
    records_dir = tmp_path / "ledger" / "records"
    records_dir.mkdir(parents=True, exist_ok=True)
    leftover = records_dir / ".paper-a.json.k2j3h4.tmp"
    leftover.write_text("half a record")
    record_files.write_records(["paper-a"], tmp_path / "ledger", fixture_catalog)
    assert not leftover.exists() and (records_dir / "paper-a.json").exists()
    assert not locking.holds_ledger(tmp_path / "ledger")
    leftovers = [records_dir / ".paper-a.html.x1.tmp", tmp_path / "ledger" / ".ledger.duckdb.y2.tmp",
                 tmp_path / "ledger" / ".ledger.duckdb.y2.tmp.wal"]
    for path in leftovers:
        path.write_text("killed mid-write")
    resolve(write_input(tmp_path / "in2.jsonl", ROWS), fixture_catalog, tmp_path / "ledger", "r2")
    assert not any(p.exists() for p in leftovers)  # the next run removes them too


# --- one line instead of a traceback -------------------------------------------------

def test_a_file_given_as_the_ledger_is_one_error(tmp_path, fixture_catalog, capsys):
    inp = write_input(tmp_path / "in.jsonl", ROWS)
    (tmp_path / "afile").write_text("")
    with pytest.raises(LedgerPathError, match="is a file"):
        planning.plan_run([inp], fixture_catalog, tmp_path / "afile", run_id="r1")
    with pytest.raises(LedgerPathError):
        record_files.write_records(["x"], tmp_path / "afile" / "sub", fixture_catalog)
    with pytest.raises(CiteledgerError, match="afile"):  # a file as the catalog folder of a build
        CatalogStore(tmp_path / "afile").build([FIXTURES / "catalog" / "works.jsonl"])
    line = one_line_error(capsys, ["resolve", str(inp), "--ledger", str(tmp_path / "afile"),
                                   "--catalog", str(fixture_catalog)])
    assert "afile" in line


def test_a_read_only_ledger_is_one_error(tmp_path, fixture_catalog, monkeypatch):
    # this machine's tests run as root, which writes anywhere: stand in for the kernel's answer
    inp = write_input(tmp_path / "in.jsonl", ROWS)
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    monkeypatch.setattr(ledger_module.os, "access", lambda path, mode: Path(path) != ledger)
    with pytest.raises(LedgerPathError, match="not writable"):
        planning.plan_run([inp], fixture_catalog, ledger, run_id="r1")

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(locking, "open", denied, raising=False)
    with pytest.raises(LedgerPathError, match="not writable"):
        locking.acquire_ledger(ledger)


def test_catalog_build_reads_a_folder_recursively(tmp_path):
    folder = tmp_path / "sources"
    (folder / "deeper").mkdir(parents=True)
    shutil.copy(FIXTURES / "catalog" / "works.jsonl", folder)
    shutil.copy(FIXTURES / "catalog" / "arxiv_snapshot.jsonl", folder / "deeper")
    (folder / ".DS_Store").write_text("junk")
    from_folder = CatalogStore(tmp_path / "c1").build([folder])
    in_name_order = [folder / "deeper" / "arxiv_snapshot.jsonl", folder / "works.jsonl"]
    from_files = CatalogStore(tmp_path / "c2").build(in_name_order)
    assert (from_folder.works, from_folder.fingerprint) == (from_files.works, from_files.fingerprint)
    (folder / "notes.txt").write_text("not a catalog\n")
    with pytest.raises(CiteledgerError, match="notes.txt"):
        CatalogStore(tmp_path / "c3").build([folder])


def test_eval_of_a_missing_file_and_record_of_an_empty_id_are_one_line(tmp_path, fixture_catalog, capsys):
    line = one_line_error(capsys, ["eval", str(tmp_path / "missing.jsonl"), "--catalog", str(fixture_catalog)])
    assert "missing.jsonl" in line and "does not exist" in line
    (tmp_path / "ledger" / "_runs").mkdir(parents=True)  # a ledger, so the empty id is what fails
    assert "empty" in one_line_error(capsys, ["record", "", "--ledger", str(tmp_path / "ledger"),
                                              "--catalog", str(fixture_catalog)])


def test_ctrl_c_names_the_run_to_finish(tmp_path, fixture_catalog, capsys, monkeypatch):
    inp = write_input(tmp_path / "in.jsonl", ROWS)

    def interrupted_resolve(args):  # the flow, stopped by Ctrl-C after planning
        planning.plan_run([inp], fixture_catalog, tmp_path / "ledger", run_id="r-ctrl-c")
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_arguments, "cmd_resolve", interrupted_resolve)  # the function resolve runs
    assert cli.main(["resolve", str(inp)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["citeledger: interrupted; re-run with --run-id r-ctrl-c to finish"]
    locking.release_ledger(tmp_path / "ledger")


# --- no Prefect server outlives a stopped command ------------------------------------

import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from conftest import REPO  # noqa: E402
from prefect_homes import copy_of_session_home  # noqa: E402

GLUTTON = REPO.parent / "shared" / "data" / "refs" / "glutton_dev.jsonl.gz"


def children_serving_prefect(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` and that serve Prefect's API (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"prefect.server.api.server:create_app" in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


SIGNALS = (signal.SIGTERM, signal.SIGKILL)


@pytest.fixture(scope="module")
def server_homes(tmp_path_factory) -> dict[signal.Signals, Path]:
    """A PREFECT_HOME for each stopped resolve, not the session's (a server killed there must not
    share a database with the servers of other tests), each a copy of the session's migrated one."""
    return {sig: copy_of_session_home(tmp_path_factory.mktemp(f"prefect-home-{sig.name}")) for sig in SIGNALS}


def launch_resolve(tmp_path: Path, catalog: Path, home: Path) -> subprocess.Popen:
    """A CLI resolve of the glutton set as a flow run (about 10 s of work; ``--flow``: without it
    a CLI run starts no server at all)."""
    tmp_path.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), PREFECT_HOME=str(home),
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="240")
    env.pop("PREFECT_API_URL", None)
    # files, not pipes: a server that outlives the command would hold a pipe open
    return subprocess.Popen([sys.executable, "-m", "citeledger.cli", "resolve", str(GLUTTON), "--catalog",
                             str(catalog), "--ledger", str(tmp_path / "ledger"), "--run-id", "r-sig",
                             "--task-runner", "threads", "--flow"], cwd=REPO, env=env,
                            stdout=open(tmp_path / "stdout", "w"), stderr=open(tmp_path / "stderr", "w"))


def ready_server(proc: subprocess.Popen, tmp_path: Path) -> int | None:
    """The command's temporary server, once it is up and the run has begun."""
    servers = children_serving_prefect(proc.pid)
    return servers[0] if servers and (tmp_path / "ledger" / "_runs" / "r-sig").exists() else None


def gone_by(pid: int, deadline: float) -> bool:
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def stop_when_ready(runs: dict, tmp_path: Path, servers: dict) -> dict:
    """Send each command its signal as soon as its server is up and its run begun (within 300 s
    of the launch: start-up is slow on a busy 2-core machine), noting its server in ``servers``;
    the moment each command was seen to end (within 120 s of its signal)."""
    sent: dict[signal.Signals, float] = {}
    ended: dict[signal.Signals, float] = {}
    launched = time.monotonic()
    while len(ended) < len(runs):
        for sig, proc in runs.items():
            if sig not in servers:
                if proc.poll() is not None or time.monotonic() > launched + 300:
                    pytest.fail(f"{sig.name}: no temporary server seen (exit {proc.poll()}): "
                                f"{(tmp_path / sig.name / 'stderr').read_text()[-2000:]}")
                server = ready_server(proc, tmp_path / sig.name)
                if server is not None:
                    proc.send_signal(sig)
                    servers[sig], sent[sig] = server, time.monotonic()
            elif sig not in ended:
                if proc.poll() is not None:
                    ended[sig] = time.monotonic()
                assert time.monotonic() < sent[sig] + 120, f"{sig.name}: the command did not end"
        time.sleep(0.2)
    return ended


@pytest.mark.flow  # server_homes starts this process's temporary server
@pytest.mark.skipif(not GLUTTON.exists(), reason="needs the shared glutton set")
def test_a_stopped_resolve_leaves_no_prefect_server(tmp_path, default_catalog, server_homes):
    """SIGTERM and SIGKILL, each sent to its own CLI resolve once that command's temporary server
    is up and its run begun: the two commands run side by side (their start-ups, some 20 s each on
    a 2-core machine, overlap), each with its own PREFECT_HOME."""
    runs = {sig: launch_resolve(tmp_path / sig.name, default_catalog, server_homes[sig]) for sig in SIGNALS}
    servers: dict[signal.Signals, int] = {}
    try:
        ended = stop_when_ready(runs, tmp_path, servers)
        for sig in SIGNALS:
            assert gone_by(servers[sig], ended[sig] + 30), f"{sig.name}: temporary server {servers[sig]} " \
                                                           "outlived its command"
        err = (tmp_path / "SIGTERM" / "stderr").read_text()
        assert runs[signal.SIGTERM].returncode == 128 + signal.SIGTERM
        assert err.strip().splitlines()[-1] == "citeledger: interrupted; re-run with --run-id r-sig to finish"
    finally:
        for proc in runs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for server in servers.values():
            if alive(server):
                os.kill(server, signal.SIGKILL)


def test_disk_full_during_a_catalog_build_keeps_the_catalog_and_leaves_no_staging(tmp_path, monkeypatch):
    catalog = tmp_path / "catalog"
    first = CatalogStore(catalog).build([FIXTURES / "catalog" / "works.jsonl"])

    def full(gen_dir):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(catalog_module, "index", full)
    with pytest.raises(DiskFull, match=str(catalog)):
        CatalogStore(catalog).build([FIXTURES / "catalog" / "arxiv_snapshot.jsonl"])
    assert (catalog / "CURRENT").read_text() == first.generation
    assert not [p for p in catalog.iterdir() if p.name.startswith(".building")]


def test_records_of_a_folder_that_holds_no_ledger_is_one_error(tmp_path, fixture_catalog, capsys):
    (tmp_path / "not-a-ledger").mkdir()  # a mistyped --ledger that happens to exist
    line = one_line_error(capsys, ["records", "--ledger", str(tmp_path / "not-a-ledger"),
                                   "--catalog", str(fixture_catalog)])
    assert "holds no ledger" in line
