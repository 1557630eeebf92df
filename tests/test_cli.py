"""The command line: the direct path and the flow write the same ledger, errors come
before work as one line, inspection commands, progress, and eval's gold-null rule."""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from citeledger import progress
from citeledger.cli import entry as cli
from citeledger.records.record_json import validate_record
from citeledger.storage.places import LedgerPlaces

REPO = Path(__file__).parent.parent
BERT = ("J. Devlin, M. Chang, K. Lee, K. Toutanova. BERT: Pre-training of deep bidirectional transformers "
        "for language understanding. arXiv:1810.04805, 2018.")
NOVEMBRE = ("Novembre J, Johnson T, Bryc K, Kutalik Z, Boyko AR, Auton A, Indap A, King KS, Bergmann S, "
            "Nelson MR, Stephens M, Bustamante CD (2008) Genes mirror geography within Europe. Nature 456:98-101")


@pytest.fixture
def refs(tmp_path) -> Path:
    path = tmp_path / "refs.jsonl"
    lines = (REPO / "data" / "sample_references.jsonl").read_text().splitlines()[:40]
    path.write_text("\n".join(lines) + "\n")
    return path


def observations(ledger: Path) -> list[tuple]:
    return duckdb.sql(f"select citing_paper, reference_index, observation_id, observation_digest, status, work_id, "
                      f"evidence from read_parquet('{ledger}/observations/**/*.parquet', union_by_name=true) "
                      f"order by 1, 2").fetchall()


def python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True)


@pytest.mark.flow
def test_direct_and_flow_runs_write_identical_observations(tmp_path, refs, default_catalog, capsys):
    """Without PREFECT_API_URL the CLI resolves directly; --flow makes a flow run: same rows."""
    common = [str(refs), "--catalog", str(default_catalog), "--run-id", "r", "--batch-size", "15"]
    assert cli.main(["resolve", *common, "--ledger", str(tmp_path / "direct")]) == 0
    assert cli.main(["resolve", *common, "--ledger", str(tmp_path / "flow"), "--flow"]) == 0
    assert cli.main(["resolve", *common, "--ledger", str(tmp_path / "pool"), "--task-runner", "processes"]) == 0
    direct, flow = observations(tmp_path / "direct"), observations(tmp_path / "flow")
    assert len(direct) == 40 and direct == flow
    assert observations(tmp_path / "pool") == direct  # the direct path's own process pool
    assert sorted(p.name for p in (tmp_path / "direct" / "records").glob("*.json")) == \
        sorted(p.name for p in (tmp_path / "flow" / "records").glob("*.json"))


def test_direct_resolve_never_imports_prefect(tmp_path, refs, default_catalog):
    """A CLI resolve without a Prefect API starts no Prefect (no temporary server); --help loads
    none of prefect, duckdb, pyarrow."""
    code = ("import sys; from citeledger import cli; rc = cli.main(sys.argv[1:]); "
            "print(rc, 'prefect' in sys.modules)")
    done = python(code, "resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(tmp_path / "l"))
    assert done.stdout.split()[-2:] == ["0", "False"], done.stderr
    code = ("import sys\nfrom citeledger import cli\ntry:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('prefect', 'duckdb', 'pyarrow') if m in sys.modules])")
    assert python(code).stdout.strip().endswith("[]")


def one_line_error(capsys, argv: list[str], code: int = 2) -> str:
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_user_errors_come_before_any_work_as_one_line(tmp_path, refs, default_catalog, capsys):
    ledger = tmp_path / "ledger"
    err = one_line_error(capsys, ["resolve", str(refs), "--catalog", str(tmp_path / "none"), "--ledger", str(ledger)])
    assert "catalog build" in err
    err = one_line_error(capsys, ["resolve", str(tmp_path / "missing.jsonl"), "--catalog", str(default_catalog),
                                  "--ledger", str(ledger)])
    assert "missing.jsonl does not exist" in err
    (tmp_path / "afile").write_text("x")
    err = one_line_error(capsys, ["resolve", str(refs), "--catalog", str(default_catalog),
                                  "--ledger", str(tmp_path / "afile")])
    assert "is a file" in err
    assert not ledger.exists()  # nothing started
    one_line_error(capsys, ["runs", "--ledger", str(tmp_path / "nowhere")])
    one_line_error(capsys, ["eval", str(tmp_path / "nogold.jsonl"), "--catalog", str(default_catalog)])


def test_a_held_ledger_is_reported_before_the_run(tmp_path, refs, default_catalog, capsys, monkeypatch):
    from citeledger.storage import locking

    monkeypatch.setattr(locking, "DEFAULT_TIMEOUT", 0.2)
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    with open(LedgerPlaces(ledger).lock, "a+b") as other:  # another writer's lock (another descriptor)
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert cli.main(["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert "in use by another run; waiting" in err and "gave up" in err
    assert not (ledger / "_runs").exists()


def test_internal_error_is_one_line_unless_debug(tmp_path, refs, default_catalog, capsys, monkeypatch):
    from citeledger.run import orchestrate

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(orchestrate, "resolve_run", broken)
    argv = ["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(tmp_path / "l")]
    err = one_line_error(capsys, argv, code=1)
    assert "internal error" in err and "--debug" in err
    with pytest.raises(KeyError):
        cli.main(["--debug", *argv])
    with pytest.raises(KeyError):
        cli.main([*argv, "--debug"])


def test_every_option_shows_its_default_and_positionals_have_help():
    parser = cli.build_parser()
    subparsers = [parser]
    while subparsers:
        p = subparsers.pop()
        for action in p._actions:
            if hasattr(action, "choices") and isinstance(action.choices, dict):
                subparsers += list(action.choices.values())
                continue
            if action.dest in ("help", "debug", "version") or isinstance(action, argparse_subparsers()):
                continue
            text = p.formatter_class(p.prog)._get_help_string(action) or ""
            assert action.help, f"{p.prog} {action.dest} has no help"
            if action.option_strings and action.default not in (None, False):
                assert "default" in text, f"{p.prog} {action.dest}: default not shown"


def argparse_subparsers():
    import argparse

    return argparse._SubParsersAction


def test_catalog_info_runs_and_unknown_record(tmp_path, refs, default_catalog, capsys):
    from citeledger.run import finishing, planning

    ledger = tmp_path / "ledger"
    assert cli.main(["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(ledger)]) == 0
    plan = planning.plan_run([str(refs)], default_catalog, ledger, run_id="left-unfinished")
    finishing.abandon_run(plan)
    capsys.readouterr()

    assert cli.main(["catalog", "info", "--catalog", str(default_catalog), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    manifest = json.loads((default_catalog / info["generation"] / "manifest.json").read_text())
    assert info["works"] == manifest["works"] and info["notice_events"] == manifest["notice_events"]
    assert set(info["works_per_source"]) >= {"arxiv_snapshot", "crossref", "works_jsonl"}
    assert info["identifiers"]["doi"] > 0 and info["identifiers"]["arxiv"] > 0 and info["bytes_on_disk"] > 0
    assert cli.main(["catalog", "info", "--catalog", str(default_catalog)]) == 0
    assert "index format" in capsys.readouterr().out

    assert cli.main(["runs", "--ledger", str(ledger), "--format", "json"]) == 0
    runs = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert runs["left-unfinished"]["state"] == "unfinished" and runs["left-unfinished"]["finished_at"] is None
    (done,) = [r for r in runs.values() if r["state"] == "finished"]
    assert done["references"] == 40 and sum(done["states"].values()) == 40
    assert cli.main(["runs", "--ledger", str(ledger)]) == 0
    assert "unfinished" in capsys.readouterr().out

    assert cli.main(["records", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    assert capsys.readouterr().out.startswith(f"{len(list((ledger / 'records').glob('*.json')))} citation records")

    known = "citeledger-sample-glutton"
    assert cli.main(["record", known, "--ledger", str(ledger), "--catalog", str(default_catalog),
                     "--format", "json"]) == 0
    validate_record(json.loads(capsys.readouterr().out))  # what it prints fits the schema (it validates nothing)
    err = one_line_error(capsys, ["record", known[:-1] + "x", "--ledger", str(ledger), "--catalog",
                                  str(default_catalog)], code=1)
    assert "does not know" in err and known in err


def test_progress_is_plain_periodic_lines_off_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    lines: list[str] = []
    assert not progress.use_bar()  # pytest's stderr is not a terminal
    with progress.track(3, "references", lines.append) as advance:
        for _ in range(3):
            advance(1)
    assert lines[-1].startswith("3/3 references") and "references/s" in lines[-1]
    assert len(lines) == 3  # the two periodic lines and the last


def test_progress_bar_on_a_terminal(monkeypatch, capsys):
    progress.set_bar(True)
    try:
        with progress.track(2, "records") as advance:
            advance(2)
    finally:
        progress.set_bar(None)
    assert "2/2" in capsys.readouterr().out + capsys.readouterr().err


def test_eval_counts_a_gold_null_link_wrong_only_inside_the_golds_universe(tmp_path, default_catalog, capsys):
    """BERT linked where the gold says null, and the gold never names BERT: unjudged, not wrong.
    The Novembre paper linked where the gold says null, while another row's gold is that paper: wrong."""
    gold = tmp_path / "gold.jsonl"
    rows = [{"raw": BERT, "gold_doi": None}, {"raw": NOVEMBRE, "gold_doi": "10.1038/nature07331"},
            {"raw": NOVEMBRE, "gold_doi": None}]
    gold.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert cli.main(["eval", str(gold), "--catalog", str(default_catalog), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert (m["links"], m["correct_links"], m["wrong_links"], m["unjudged_links"]) == (3, 1, 1, 1)
    assert m["precision"] == 0.5 and m["precision_all_links"] == pytest.approx(1 / 3)
    assert m["worst_errors"][0]["raw"] == NOVEMBRE and m["worst_errors"][0]["evidence"]
    assert cli.main(["eval", str(gold), "--catalog", str(default_catalog)]) == 0
    out = capsys.readouterr().out
    assert "unjudged 1" in out and "WRONG" in out and "verified_" in out


def test_catalog_build_reports_progress_per_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    files = sorted(str(p) for p in (Path(__file__).parent / "fixtures" / "catalog").glob("*.jsonl"))
    assert cli.main(["catalog", "build", "--catalog", str(tmp_path / "cat"), *files]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.endswith("left")]
    total = sum(Path(f).stat().st_size for f in files)
    assert len(lines) == len(files) and lines[-1].startswith(f"{total:,}/{total:,} bytes")


def test_the_shipped_record_schema_is_a_valid_schema():
    """``record_json._validator`` no longer checks the schema in every process (0.3 s of a one-reference
    run); this test does instead."""
    import jsonschema

    from citeledger.records.record_json import load_schema

    jsonschema.Draft202012Validator.check_schema(load_schema())
