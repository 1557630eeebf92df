"""A site build is whole or nothing: ``citeledger site`` killed with SIGKILL at several points of a
build (its staging folder just made, half the papers' pages written, the cited works' pages being
written, the spare being brought up to date) leaves ``OUT`` exactly as the previous build left it
(or, killed after the swap, as the new one made it), takes its second process and the resource
tracker with it, and the next build removes what it staged. Two builds started at once into one
folder, or one while another stages in the spare, take turns and leave one whole site.
Every wait is bounded, and whatever a test started is killed after it."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from link_check import broken_links
from test_worker_lifetime import MAIN, alive, children, wait_for

from citeledger.records import record_files
from citeledger.records.ledger_reads import citing_papers
from citeledger.site.folder import SiteFolder
from citeledger.site.site_files import build_site

REPO = Path(__file__).parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_records_ledger import make_ledger  # noqa: E402
from bench_site import change_papers  # noqa: E402

PAPERS, REFS = 240, 12


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> tuple[Path, Path]:
    """A synthetic ledger of 300 papers citing catalog works (signed records written): (catalog, ledger)."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to see the build's processes")
    work = tmp_path_factory.mktemp("site-kill")
    catalog, ledger = make_ledger(work, PAPERS, REFS)
    record_files.write_records(citing_papers(ledger, catalog, None), ledger, catalog)
    return catalog, ledger


def pages(out: Path) -> dict[str, bytes]:
    """The site's files (its bookkeeping under .citeledger-site/ apart), by name, with their bytes."""
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*")
            if p.is_file() and ".citeledger-site" not in p.parts}


def start(out: Path, ledger: Path, catalog: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.Popen([sys.executable, "-c", MAIN, "site", str(out), "--ledger", str(ledger), "--catalog",
                             str(catalog), "--workers", "2"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def descendants(pid: int) -> dict[int, str]:
    found = children(pid)
    for child in list(found):
        found.update(descendants(child))
    return found


def staged(out: Path, folder: str) -> int:
    """Files in the staging folder's ``folder`` (0 when there is no staging folder yet)."""
    return sum(len(os.listdir(p / folder)) for p in SiteFolder(out).leftovers()
               if "staging" in p.name and (p / folder).is_dir())


def spare_unfinished(out: Path) -> bool:
    """A build is staging in the spare (the build before last, its manifest removed first)."""
    spare = SiteFolder(out).spare
    return spare.is_dir() and not (spare / ".citeledger-site" / "manifest.json").exists()


POINTS = {  # when the build is killed
    "staged": lambda out: any("staging" in p.name for p in SiteFolder(out).leftovers()),
    "papers": lambda out: staged(out, "papers") >= PAPERS // 3,
    "works": lambda out: staged(out, "works") >= 50,
    "spare": spare_unfinished,
}


def kill_at(point: str, out: Path, ledger_dir: Path, catalog: Path) -> bool:
    """A build into ``out`` killed with SIGKILL once it reaches ``point``; asserts that every process
    it started ends. Whether its second process had started."""
    proc = start(out, ledger_dir, catalog)
    seen: dict[int, str] = {}
    try:
        def at_point() -> bool:
            seen.update(descendants(proc.pid))
            return POINTS[point](out) or proc.poll() is not None
        assert wait_for(at_point, 120), point
        assert proc.poll() is None, f"the build ended before the point {point!r}: {proc.communicate()}"
        seen.update(descendants(proc.pid))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_for(lambda: not any(alive(pid) for pid in seen), 60), \
            (point, {pid: cmd for pid, cmd in seen.items() if alive(pid)})
        return any("spawn_main" in cmd for cmd in seen.values())
    finally:
        for pid in [proc.pid, *seen]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.communicate(timeout=30)


def test_a_killed_build_leaves_the_previous_site_whole_and_no_process(tmp_path, ledger):
    catalog, ledger_dir = ledger
    out = tmp_path / "out"
    build_site(out, ledger_dir, catalog)
    before = pages(out)
    change_papers(ledger_dir, catalog, PAPERS, REFS, step=1)  # every paper changed: every page made again
    build_site(tmp_path / "reference", ledger_dir, catalog)
    after = pages(tmp_path / "reference")
    assert after != before
    workers_seen = 0
    for point in ("staged", "papers", "works"):
        workers_seen += kill_at(point, out, ledger_dir, catalog)
        now = pages(out)
        assert now == before or now == after, point
    assert workers_seen, "no kill point caught the build's second process"
    folder = SiteFolder(out)
    assert folder.leftovers()  # what the killed builds staged, until the next build
    report = build_site(out, ledger_dir, catalog)
    assert folder.leftovers() == [] and pages(out) == after and report.left_out == []
    assert broken_links(out)[0] == [] and folder.spare_is_whole()  # the build before, kept as the spare
    change_papers(ledger_dir, catalog, PAPERS // 2, REFS, step=2)
    build_site(tmp_path / "reference2", ledger_dir, catalog)
    again = pages(tmp_path / "reference2")
    kill_at("spare", out, ledger_dir, catalog)  # killed while staging in the spare
    assert pages(out) in (after, again) and not folder.spare_is_whole()
    build_site(out, ledger_dir, catalog)  # the unfinished spare removed, the build staged afresh
    assert folder.leftovers() == [] and pages(out) == again and folder.spare_is_whole()


def test_two_builds_at_once_leave_one_whole_site(tmp_path, ledger):
    """Builds of two ledgers (one a changed copy of the other) started at once into one folder: both
    finish, and the folder is one of the two sites whole, file for file."""
    catalog, ledger_dir = ledger
    other = tmp_path / "ledger"
    shutil.copytree(ledger_dir, other)
    change_papers(other, catalog, PAPERS // 2, REFS, step=7)
    for name, source in (("one", ledger_dir), ("two", other)):
        build_site(tmp_path / name, source, catalog)
    sites = [pages(tmp_path / "one"), pages(tmp_path / "two")]
    out = tmp_path / "out"
    procs = [start(out, ledger_dir, catalog), start(out, other, catalog)]
    try:
        results = [p.communicate(timeout=600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0], results
    assert pages(out) in sites
    assert SiteFolder(out).leftovers() == [] and broken_links(out)[0] == []


def test_a_build_started_while_another_stages_waits_for_it(tmp_path, ledger):
    """A published site and its spare; a build of a changed ledger is staging in the spare when a
    second build (of the first ledger) starts: the second waits on the lock beside OUT, both finish,
    and OUT is the second one's site whole, with its spare whole and nothing staged left beside it."""
    catalog, ledger_dir = ledger
    other = tmp_path / "ledger"
    shutil.copytree(ledger_dir, other)
    change_papers(other, catalog, PAPERS // 2, REFS, step=9)
    build_site(tmp_path / "reference", ledger_dir, catalog)
    last = pages(tmp_path / "reference")
    out = tmp_path / "out"
    build_site(out, ledger_dir, catalog)
    build_site(out, ledger_dir, catalog)  # the spare is made: the next build stages in it
    first = start(out, other, catalog)
    second = None
    try:
        assert wait_for(lambda: spare_unfinished(out) or first.poll() is not None, 120)
        assert first.poll() is None, f"the first build ended before it staged: {first.communicate()}"
        second = start(out, ledger_dir, catalog)
        results = [p.communicate(timeout=600) for p in (first, second)]
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate(timeout=30)
    assert [first.returncode, second.returncode] == [0, 0], results
    folder = SiteFolder(out)
    assert pages(out) == last and folder.leftovers() == [] and folder.spare_is_whole()
    assert broken_links(out)[0] == []


def test_a_publish_killed_between_its_renames_is_put_back(tmp_path):
    """Where the file system cannot swap two folders, OUT is renamed aside before the new build is
    renamed in: killed between the two, the next build finds no OUT and puts the previous one back."""
    folder = SiteFolder(tmp_path / "out")
    aside = tmp_path / ".out.citeledger-old-123-abcd"
    (aside / "papers").mkdir(parents=True)
    (aside / "index.html").write_text("the previous build")
    staged_build = tmp_path / ".out.citeledger-staging-123-abcd"
    staged_build.mkdir()
    assert folder.clean_leftovers() == 1
    assert (tmp_path / "out" / "index.html").read_text() == "the previous build" and folder.leftovers() == []


def test_a_build_waits_for_the_one_before(tmp_path):
    """While a build holds the lock of OUT, another waits (and gives up, one line, after the lock timeout)."""
    from citeledger.app_errors import LockTimeout
    from citeledger.storage import locking

    folder = SiteFolder(tmp_path / "out")
    with locking.exclusive_file(folder.lock):
        started = time.monotonic()
        with pytest.raises(LockTimeout, match="is in use by pid"):
            locking.exclusive_file(folder.lock, timeout=0.5).__enter__()
        assert time.monotonic() - started >= 0.5
