"""A directory of papers is resumable after SIGKILL like any run: killed while
resolving, the same run id completes it and the ledger equals an uninterrupted run's, every
paper accounted for. Follows tests/test_crash.py (its driver and helpers)."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from test_crash import DRIVER, assert_no_partial_files, ledger_rows, run_driver

from papers.reader import read_paper

FIXTURES = Path(__file__).parent / "fixtures" / "papers"
BATCH = 40


def paper_directory(root: Path, count: int) -> tuple[Path, int]:
    """``count`` papers named 2601.00001... made from the fixtures (each a real e-print's bytes
    under a new id), plus one truncated archive; returns the folder and its reference count."""
    folder = root / "papers"
    folder.mkdir()
    sources = sorted(p for p in FIXTURES.iterdir() if p.name[0].isdigit())
    total = 0
    for n in range(count):
        source = sources[n % len(sources)]
        target = folder / f"2601.{n + 1:05d}{source.name[source.name.index('.', 5):]}"
        shutil.copy(source, target)
        total += len(read_paper(target.name, target.read_bytes()).references)
    broken = (FIXTURES / "1911.13021.tar.gz").read_bytes()
    (folder / "2601.99999.tar.gz").write_bytes(broken[:4000])
    return folder, total


@pytest.fixture(scope="module")
def papers(tmp_path_factory):
    return paper_directory(tmp_path_factory.mktemp("paper-crash"), 8)


def test_a_killed_run_over_a_directory_of_papers_resumes_to_the_uninterrupted_ledger(papers, default_catalog,
                                                                                    tmp_path):
    folder, total = papers
    args = [str(folder), str(default_catalog), str(tmp_path / "ledger"), "paper-crash", str(BATCH)]
    run_driver(DRIVER, args, point="mid_batch", tmp=tmp_path, timeout=600)
    after_crash = ledger_rows(tmp_path / "ledger", "paper-crash")
    assert len(after_crash) == 2 * BATCH  # two whole batches, nothing partial
    assert run_driver(DRIVER, args, timeout=600).startswith("DONE True")
    resumed = ledger_rows(tmp_path / "ledger", "paper-crash")
    run_driver(DRIVER, [str(folder), str(default_catalog), str(tmp_path / "clean"), "paper-crash", str(BATCH)],
               timeout=600)
    assert resumed == ledger_rows(tmp_path / "clean", "paper-crash") and len(resumed) == total
    assert set(after_crash) <= set(resumed)
    assert_no_partial_files(tmp_path / "ledger")
    papers_seen = {row[0] for row in resumed}
    rejected = duckdb.sql(f"select file, reason from read_parquet('{tmp_path}/ledger/rejects/**/*.parquet')").fetchall()
    assert papers_seen == {f"2601.{n:05d}" for n in range(1, 9)}
    assert [(Path(f).name, r.split(":")[0]) for f, r in rejected] == [("2601.99999.tar.gz", "corrupt_archive")]
