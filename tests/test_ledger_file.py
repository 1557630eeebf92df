"""``ledger.duckdb`` opened by its path from any working directory, in the duckdb shell and the
library, and still right after the ledger folder is moved or copied: alone (its parts; the works view
after ``citeledger ledger relink``), or together with its catalog (everything)."""
from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

cli = importlib.import_module("citeledger.cli.entry")
SHELL = Path(sys.executable).parent / "duckdb"
SAMPLE = Path(__file__).parent.parent / "data" / "sample_references.jsonl"
QUERIES = ["select status, count(*) as n from current group by 1 order by 1",
           "select count(*) as n from current c join works w using (work_id)",
           "select citing_paper, reference_index, round(score, 3) as score, work_id from current "
           "where status = 'verified_fuzzy' order by score, citing_paper, reference_index limit 5",
           "select count(*) as n from runs"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, default_catalog) -> Path:
    """data/ as a user has it: a catalog and a ledger side by side."""
    root = tmp_path_factory.mktemp("corpus") / "data"
    shutil.copytree(default_catalog, root / "catalog")
    assert cli.main(["resolve", str(SAMPLE), "--catalog", str(root / "catalog"), "--ledger", str(root / "ledger")]) == 0
    return root


def shell(database: Path, sql: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SHELL), str(database), "-csv", "-c", sql], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def expected(corpus: Path) -> list[str]:
    """Each query's answer as ``citeledger query`` gives it (its own views, not the file's)."""
    out = []
    for sql in QUERIES:
        done = subprocess.run([sys.executable, "-m", "citeledger.cli", "query", sql, "--format", "csv", "--ledger",
                               str(corpus / "ledger"), "--catalog", str(corpus / "catalog")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        out.append(done.stdout)
    return out


def answers(database: Path, cwd: Path) -> list[str]:
    got = []
    for sql in QUERIES:
        done = shell(database, sql, cwd)
        assert done.returncode == 0 and not done.stderr, (sql, done.stderr)
        got.append(done.stdout)
    return got


def test_opened_by_path_from_any_directory(corpus, tmp_path):
    want = expected(corpus)
    assert json.loads(json.dumps(want))[1].splitlines()[1] != "0"  # links joined to works: not empty
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    assert answers(corpus / "ledger" / "ledger.duckdb", elsewhere) == want
    assert answers(Path("ledger.duckdb"), corpus / "ledger") == want  # from inside, by its name
    con = duckdb.connect(str(corpus / "ledger" / "ledger.duckdb"), read_only=True)  # a notebook, anywhere
    try:
        assert con.execute(QUERIES[1]).fetchone()[0] == int(want[1].splitlines()[1])
    finally:
        con.close()


def test_a_ledger_copied_with_its_catalog_keeps_every_view(corpus, tmp_path):
    want = expected(corpus)
    copy = tmp_path / "other-machine" / "data"
    shutil.copytree(corpus, copy)
    hidden = corpus.parent / "hidden"
    corpus.rename(hidden)  # the written paths are gone while the copy is read
    try:
        assert answers(copy / "ledger" / "ledger.duckdb", tmp_path) == want
    finally:
        hidden.rename(corpus)


def test_a_ledger_moved_alone_keeps_its_parts_and_relink_finds_the_catalog(corpus, tmp_path, capsys):
    want = expected(corpus)
    moved = tmp_path / "moved" / "ledger"
    shutil.copytree(corpus / "ledger", moved)
    hidden = corpus.parent / "hidden-ledger"
    (corpus / "ledger").rename(hidden)
    try:
        database = moved / "ledger.duckdb"
        assert shell(database, QUERIES[0], tmp_path).stdout == want[0]  # the parts: found beside the file
        assert shell(database, QUERIES[3], tmp_path).stdout == want[3]
        broken = shell(database, QUERIES[1], tmp_path)
        assert broken.returncode != 0 and "works.parquet" in broken.stderr  # the catalog is not beside it
        assert cli.main(["ledger", "relink", "--ledger", str(moved), "--catalog", str(corpus / "catalog")]) == 0
        assert str(corpus / "catalog") in capsys.readouterr().out
        assert answers(database, tmp_path) == want
        named = shell(database, "select catalog, generation from ledger_catalog", tmp_path).stdout
        assert named.splitlines()[1] == f"{corpus / 'catalog'},gen-000001"
    finally:
        hidden.rename(corpus / "ledger")


def test_relink_to_a_missing_catalog_is_one_line(corpus, tmp_path, capsys):
    assert cli.main(["ledger", "relink", "--ledger", str(corpus / "ledger"), "--catalog", str(tmp_path / "gone")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"no catalog in {tmp_path / 'gone'}" in err
