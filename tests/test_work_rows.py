"""The works' row files (``work_rows``) and the release of mapped pages (``mapped_files``): a
resolving process reads the rows it needs by positional reads and hands back the mapped pages it
touched, so the catalog's pages live in the OS page cache, not in each process's resident set
(the target: a process tree under 4 GB at 10M works)."""
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from citeledger.app_errors import LedgerPathError
from citeledger.index import blocking, index_upgrade
from citeledger.index.blocking import ParquetRetriever
from citeledger.storage import mapped_files as mapped_pages
from citeledger.works import work_rows
from citeledger.works.work_rows import WorkReader
from resolvers.verification.verify import FORM_COLUMNS


def _generation(catalog: Path, tmp_path: Path) -> Path:
    """A copy of the catalog's generation (a test may drop or break files in it)."""
    gen = next(p for p in catalog.iterdir() if p.name.startswith("gen-"))
    return Path(shutil.copytree(gen, tmp_path / gen.name))


def _mapped_answers(gen: Path, rows: list[int]) -> tuple[dict, dict]:
    """What the mapped Arrow files hold at these rows (the reader without row files)."""
    reader = WorkReader(gen, {"no": "stamp"})
    assert reader.row_file is None
    return reader.works_and_forms(rows)


def test_rows_read_by_position_equal_the_mapped_columns(default_catalog, tmp_path):
    """Every work and stored form read from the row file equals what the Arrow files hold, for
    rows in any order and repeated (non-ASCII titles, empty author lists and nulls included)."""
    gen = _generation(default_catalog, tmp_path)
    reader = WorkReader(gen, blocking.index_stamp(gen))
    assert reader.row_file is not None
    n = blocking.index_stamp(gen)["n_works"]
    rows = list(range(n))
    assert reader.works_and_forms(rows) == _mapped_answers(gen, rows)
    shuffled = random.Random(3).choices(rows, k=200)
    works, forms = reader.works_and_forms(shuffled)
    assert (works, forms) == _mapped_answers(gen, shuffled) and list(forms) == list(FORM_COLUMNS)
    assert any(not w.authors for w in works.values()) and any(w.venue is None for w in works.values())
    assert any(not w.title.isascii() for w in reader.works(rows).values() if w.title)
    assert reader.works_and_forms([]) == ({}, {name: [] for name in FORM_COLUMNS})


def test_a_batch_announces_each_row_it_reads_before_the_first_read(default_catalog, tmp_path, monkeypatch):
    """Rows not in the page cache are fetched together: every row's byte range is handed to the
    kernel (``posix_fadvise`` WILLNEED) before any row is read, and the rows read are the same."""
    if work_rows._WILLNEED is None:
        pytest.skip("no posix_fadvise on this platform")
    gen = _generation(default_catalog, tmp_path)
    reader = WorkReader(gen, blocking.index_stamp(gen))
    rows = sorted(random.Random(5).sample(range(blocking.index_stamp(gen)["n_works"]), 50))
    expected = reader.works(rows)
    calls: list[tuple] = []
    advise, pread = work_rows.os.posix_fadvise, work_rows.os.pread
    monkeypatch.setattr(work_rows.os, "posix_fadvise", lambda *a: (calls.append(("advise", *a)), advise(*a))[1])
    monkeypatch.setattr(work_rows.os, "pread", lambda *a: (calls.append(("read", *a)), pread(*a))[1])
    assert reader.works(rows) == expected
    offsets = reader.row_file.offsets
    ranges = [(int(offsets[r]), int(offsets[r + 1] - offsets[r])) for r in rows]
    advised = [(c[2], c[3]) for c in calls if c[0] == "advise"]
    assert advised == ranges and all(c[4] == work_rows._WILLNEED for c in calls if c[0] == "advise")
    assert [(c[3], c[2]) for c in calls if c[0] == "read"] == ranges
    assert [c[0] for c in calls] == ["advise"] * len(rows) + ["read"] * len(rows)


def test_an_index_without_row_files_gets_them_written_not_rebuilt(default_catalog, tmp_path):
    """Row files missing (an index made before them) or made for another index: ``ensure_index``
    writes them and nothing else; the index stays current."""
    gen = _generation(default_catalog, tmp_path)
    (gen / work_rows.ROWS_FILE).unlink()
    stamp = json.loads((gen / blocking.INDEX_FILE).read_text())
    (gen / work_rows.ROWS_STAMP).write_text(json.dumps(work_rows.rows_stamp({**stamp, "n_works": 2})))
    kept = {p.name: p.stat().st_mtime_ns for p in gen.iterdir() if not p.name.startswith("work_rows")}
    assert not work_rows.rows_current(gen, stamp)
    assert index_upgrade.ensure_index(gen) is None
    assert {name: (gen / name).stat().st_mtime_ns for name in kept} == kept
    assert work_rows.rows_current(gen, stamp)
    rows = list(range(stamp["n_works"]))
    assert WorkReader(gen, stamp).works_and_forms(rows) == _mapped_answers(gen, rows)


def test_a_generation_that_cannot_be_written_reads_the_mapped_columns(default_catalog, tmp_path, monkeypatch):
    """A catalog folder this user may not write, without row files, still resolves (the rows then
    come from the mapped Arrow files) with the same candidates."""
    gen = _generation(default_catalog, tmp_path)
    query = [["kinematics", "cerebellar", "throw"]]
    before = ParquetRetriever(gen).candidates_batch(query, k=3)
    for name in (work_rows.ROWS_FILE, work_rows.ROWS_OFFSETS, work_rows.ROWS_STAMP):
        (gen / name).unlink()

    def refused(path):
        raise LedgerPathError(f"cannot write {path}: Permission denied")
    monkeypatch.setattr(blocking, "atomic_stream", refused)
    assert index_upgrade.ensure_index(gen) is None and not index_upgrade.ensure_work_rows(gen)
    retriever = ParquetRetriever(gen)
    assert retriever.reader.row_file is None
    assert retriever.candidates_batch(query, k=3) == before and before[0]


def test_released_pages_leave_the_resident_set_and_read_the_same(tmp_path):
    """Pages of a mapped file that a process read count in its resident set until released; after
    ``release_if_over`` they are gone from it (still in the page cache) and read the same."""
    if not mapped_pages.file_resident_bytes():
        pytest.skip("no /proc/self/statm")
    data = np.arange(8 << 20, dtype=np.int64)  # 64 MB
    np.save(tmp_path / "a.npy", data)
    mapped = mapped_pages.load_array(tmp_path / "a.npy")
    mapped_pages.release()
    assert not mapped_pages.release_if_over(budget=1 << 40)
    before = mapped_pages.file_resident_bytes()
    assert int(mapped.sum()) == int(data.sum())  # touches every page
    touched = mapped_pages.file_resident_bytes()
    assert touched - before > 48 << 20
    assert mapped_pages.release_if_over(budget=16 << 20)
    assert mapped_pages.file_resident_bytes() < touched - (48 << 20)
    assert np.array_equal(mapped, data)
    assert not mapped_pages.release_if_over(budget=1 << 40)


def _mapped_rss_kb(gen: Path) -> int:
    """Resident kB of this process's maps of the generation's files (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1].isalnum() and "-" in line.split(" ", 1)[0]:  # a mapping's header line
            inside = str(gen) in line
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def test_a_retriever_keeps_no_catalog_pages_past_the_budget(default_catalog, tmp_path, monkeypatch):
    """After a retrieval the pages of the index files it mapped are handed back once past the
    budget (here 0 bytes): none stays in the process's resident set; with a budget it does not
    reach, they stay. The works are read by position: their files are not mapped at all."""
    if not Path("/proc/self/smaps").exists():
        pytest.skip("no /proc/self/smaps")
    gen = _generation(default_catalog, tmp_path)
    query = [["kinematics", "cerebellar", "throw"], ["neural", "network"]]
    monkeypatch.setattr(mapped_pages, "PAGE_BUDGET", 1 << 40)
    retriever = ParquetRetriever(gen)
    mapped_pages.release()
    first = retriever.candidates_batch(query, k=3)
    assert _mapped_rss_kb(gen) > 0
    monkeypatch.setattr(mapped_pages, "PAGE_BUDGET", 0)
    assert retriever.candidates_batch(query, k=3) == first and first[0]
    assert _mapped_rss_kb(gen) == 0
    assert not any(str(gen) in line and (work_rows.ROWS_FILE in line or "works.arrow" in line)
                   for line in Path("/proc/self/maps").read_text().splitlines())
