"""A run is shown finished only once every finishing step is done: its notices, the ledger's
database file, its records, then its row in ``runs/`` (written last). A run stopped among those
steps is shown unfinished (``citeledger runs``, the ``runs`` view, ``unfinished_runs``), and a
re-run with its id completes it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeledger.ledger.inspect import ledger_runs
from citeledger.ledger.ledger_store import LedgerStore, connect_views
from citeledger.records import record_files
from citeledger.run import finishing, orchestrate, planning

ROWS = [{"citing_paper": "paper-a", "reference_index": i,
         "raw": f"Nobody {i}. Not in any catalog. J Nowhere 1999;{i}:1."} for i in range(1, 5)]


class Stop(Exception):
    """A crash in the middle of a finishing step."""


def write_input(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def resolve(inp: Path, catalog: Path, ledger: Path, run_id: str):
    return orchestrate.resolve_run([str(inp)], str(catalog), str(ledger), "threads", run_id=run_id)


def shown(ledger: Path, run_id: str) -> tuple[str, bool, bool]:
    """What ``citeledger runs`` says of the run, whether the ``runs`` view has it, whether a
    nightly would see it as a run to resume."""
    state = next(r["state"] for r in ledger_runs(ledger) if r["run_id"] == run_id)
    con = connect_views(ledger, None)
    try:
        in_view = bool(con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchone()[0])
    finally:
        con.close()
    unfinished = any(m.run_id == run_id for m in LedgerStore(ledger).unfinished_runs())
    return state, in_view, unfinished


@pytest.mark.parametrize("step", ["notices", "database", "records"])
def test_a_run_stopped_in_its_finishing_steps_is_unfinished_and_resumable(tmp_path, fixture_catalog, monkeypatch,
                                                                          step):
    inp, ledger = write_input(tmp_path / "in.jsonl"), tmp_path / "ledger"

    def stop(*args, **kwargs):
        raise Stop(step)

    target = {"notices": (finishing, "write_run_notices"), "database": (finishing, "write_ledger_database"),
              "records": (record_files, "write_records")}[step]
    with monkeypatch.context() as m:
        m.setattr(*target, stop)
        with pytest.raises(Stop):
            resolve(inp, fixture_catalog, ledger, "r1")
    assert shown(ledger, "r1") == ("unfinished", False, True)
    assert planning.interrupted_run() == "r1"  # what the interrupted command names to re-run
    summary = resolve(inp, fixture_catalog, ledger, "r1")
    assert summary.resumed and summary.records == 1
    assert shown(ledger, "r1") == ("finished", True, False)
    assert (ledger / "ledger.duckdb").exists() and len(list((ledger / "records").glob("*.json"))) == 1
    assert planning.interrupted_run() is None


def test_the_run_row_is_written_after_the_records(tmp_path, fixture_catalog, monkeypatch):
    inp, ledger = write_input(tmp_path / "in.jsonl"), tmp_path / "ledger"
    order: list[str] = []
    for module, name in ((finishing, "write_ledger_database"), (record_files, "write_records")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: (order.append(_name), _real(*a, **k))[1])
    real_row = LedgerStore.finish_run
    monkeypatch.setattr(LedgerStore, "finish_run", lambda self, row: (order.append("run row"), real_row(self, row))[1])
    resolve(inp, fixture_catalog, ledger, "r1")
    # the ledger's first run row is followed by ledger.duckdb once more: its runs view binds to a row
    assert order == ["write_ledger_database", "write_records", "run row", "write_ledger_database"]
    order.clear()
    resolve(inp, fixture_catalog, ledger, "r2")
    assert order == ["write_ledger_database", "write_records", "run row"]
