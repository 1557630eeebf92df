"""What an operator meets on the command line: --resume and --run-id, folders of mixed files,
a run that reads nothing, paths that cannot be used, and the exit status of each."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

cli = importlib.import_module("citeledger.cli.entry")
commands = importlib.import_module("citeledger.cli.commands")
REPO = Path(__file__).parent.parent
ROWS = [{"citing_paper": "op-paper", "reference_index": i + 1, "raw": raw} for i, raw in enumerate([
    "A. Vaswani et al. Attention is all you need. arXiv:1706.03762, 2017.",
    "J. Devlin, M. Chang, K. Lee, K. Toutanova. BERT. arXiv:1810.04805, 2018.",
    "Smith J. A title of no work in the catalog. Journal of Nothing, 1999.",
])]


@pytest.fixture
def refs(tmp_path) -> Path:
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def resolve(*args: str | Path) -> int:
    return cli.main(["resolve", *map(str, args)])


def leave_unfinished(ledger: Path, refs: Path, catalog: Path, run_id: str) -> None:
    from citeledger.run import finishing, planning

    plan = planning.plan_run([refs], catalog, ledger, run_id=run_id)
    finishing.abandon_run(plan)


def test_resume_completes_a_run_and_refuses_an_unknown_id(tmp_path, refs, default_catalog, capsys):
    ledger = tmp_path / "ledger"
    leave_unfinished(ledger, refs, default_catalog, "night-2026-12-01")
    assert resolve("--resume", "night-2026-12-0l", "--catalog", default_catalog, "--ledger", ledger) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run 'night-2026-12-0l'" in err
    assert "nearest unfinished runs: night-2026-12-01" in err
    assert not (ledger / "_runs" / "night-2026-12-0l").exists()  # nothing was started under the typo
    # no input given: the run's own inputs, read again
    assert resolve("--resume", "night-2026-12-01", "--catalog", default_catalog, "--ledger", ledger) == 0
    out = capsys.readouterr().out
    assert "run night-2026-12-01 (resumed): 3 references" in out
    assert cli.main(["runs", "--ledger", str(ledger), "--format", "json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)
    assert run["state"] == "finished" and run["references"] == 3


def test_a_new_run_id_warns_of_unfinished_runs_it_leaves(tmp_path, refs, default_catalog, capsys):
    ledger = tmp_path / "ledger"
    leave_unfinished(ledger, refs, default_catalog, "left-behind")
    assert resolve(refs, "--catalog", default_catalog, "--ledger", ledger, "--run-id", "left-behnid") == 0
    err = capsys.readouterr().err
    assert "warning: ledger" in err and "1 unfinished run(s) this run does not complete (left-behind)" in err
    assert "--resume ID" in err
    assert resolve(refs, "--catalog", default_catalog, "--ledger", ledger, "--run-id", "left-behind") == 0
    assert "warning" not in capsys.readouterr().err  # it completes the one unfinished run: nothing to say


def test_a_folder_reads_papers_and_tables_and_says_what_it_skipped(tmp_path, refs, default_catalog, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "refs.jsonl").write_text(refs.read_text())
    (folder / "README.md").write_text("# notes\n")
    (folder / "NOTES.md").write_text("more notes\n")
    (folder / "make.py").write_text("print('hello')\n")
    (folder / "sources").mkdir()
    (folder / "sources" / "works.csv").write_text("doi,title\n")
    ledger = folder / "ledger"  # the run's own ledger inside the folder it reads
    assert resolve(folder, "--catalog", default_catalog, "--ledger", ledger) == 0
    assert resolve(folder, "--catalog", default_catalog, "--ledger", ledger) == 0  # the ledger now exists
    out = capsys.readouterr().out.splitlines()
    last = out[out.index(next(line for line in reversed(out) if line.startswith("run "))):]
    assert "skipped 2 entries of the input folders: not a paper or a reference table (.md)" in last
    assert "skipped 1 entry of the input folders: not a paper or a reference table (.py)" in last
    assert "skipped 1 entry of the input folders: a citeledger ledger folder" in last
    assert "skipped 1 entry of the input folders: a folder with no .tex, .bbl or .bib file" in last
    assert any(line.endswith("3 references, 0 rejected rows") for line in last)


def test_a_file_that_is_no_input_is_a_reject_and_a_run_that_reads_nothing_exits_3(tmp_path, default_catalog,
                                                                                    capsys):
    notes = tmp_path / "notes.md"
    notes.write_text("# Meeting notes\n\nnothing here\n")
    assert resolve(notes, "--catalog", default_catalog, "--ledger", tmp_path / "ledger") == commands.NOTHING_READ == 3
    captured = capsys.readouterr()
    assert f"rejected {notes}: not a paper or a reference table (.md)" in captured.out
    # (the last line: a Prefect log handler left by an earlier flow test in this process may write before it)
    assert captured.err.strip().splitlines()[-1].startswith("citeledger: no input row could be read")
    table = tmp_path / "refs.txt"  # no known ending, but a header naming the required columns: a table
    table.write_text("citing_paper,reference_index,raw\np,1,Smith J. A title. 2001.\n")
    assert resolve(table, "--catalog", default_catalog, "--ledger", tmp_path / "ledger") == 0


def test_paths_that_cannot_be_used_are_user_errors(tmp_path, refs, default_catalog, capsys):
    for argv in (["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", "/proc/nope"],
                 ["keys", "init", "--ledger", "/proc/nope/deeper"]):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "/proc/nope" in err and "internal error" not in err


def test_exit_status_of_unknown_ids(tmp_path, refs, default_catalog, capsys):
    """`record` of an id the ledger does not know is exit 1 (the contract says so); `records
    --run-id` and `resolve --resume` of an unknown run are user errors, exit 2."""
    ledger = tmp_path / "ledger"
    assert resolve(refs, "--catalog", default_catalog, "--ledger", ledger, "--run-id", "r1") == 0
    assert cli.main(["record", "nope", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 1
    assert cli.main(["records", "--run-id", "nope", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 2
    assert resolve("--resume", "nope", "--catalog", default_catalog, "--ledger", ledger) == 2
    assert resolve("--catalog", default_catalog, "--ledger", ledger) == 2  # no input, nothing to resume
    capsys.readouterr()


def test_the_readme_exit_table_names_every_status_the_cli_uses():
    readme = (REPO / "README.md").read_text()
    table = readme.split("### Exit status")[1].split("\n\n")[1]
    for status in ("| 0 |", "| 1 |", "| 2 |", f"| {commands.NOTHING_READ} |", "| 130 / 143 |"):
        assert status in table


def test_eval_format_json_and_its_json_alias():
    parser = cli.build_parser()
    assert parser.parse_args(["eval", "g.jsonl", "--format", "json"]).format == "json"
    assert parser.parse_args(["eval", "g.jsonl", "--json"]).format == "json"
    assert parser.parse_args(["eval", "g.jsonl"]).format == "text"
