"""The hostile-world soak: the remote clients' hostile answers (``soak_remote.py``), the circuit
breakers against runs of thousands of references and stopped runs (``soak_breaker.py``) and a
directory of papers resolved, killed and resumed (``soak_papers.py``, again and again) run side by
side for a set time, with the whole process tree watched.

    .venv/bin/python benchmarks/soak_hostile.py --seconds 600

Prints each child's verdict (its own checks: no row lost or duplicated, every hostile answer an
``unavailable``), the process tree's peak resident memory (every descendant, sampled each 0.5 s,
against ``--max-tree-mb``), the processes left behind when it ends, and the files written outside
its work folder and what is left in the work folder itself (the children's TMPDIR: every run
removes its own folder, so nothing should be). As root with ``unshare`` (util-linux), the soak
runs in a mount namespace of its own with a fresh tmpfs on /tmp, so "written outside" is exact
even while other programs use the machine's /tmp (``--shared-tmp``: the machine's /tmp, where only
``citeledger*`` entries are counted, and other citeledger processes' entries can be counted too).
Exit status 1 when any of these fails.
Outside the test suite; servers on 127.0.0.1 only, every loop bounded by ``--seconds``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = os.sysconf("SC_PAGE_SIZE")


def descendants(root: int) -> set[int]:
    """Every process whose ancestry reaches ``root`` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def tree_rss(pids: set[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


def run(seconds: float, max_tree_mb: float, papers: int, references: int, private_tmp: bool = False) -> int:
    work = Path(tempfile.mkdtemp(prefix="citeledger-soak-"))
    temp_before = set(os.listdir(tempfile.gettempdir()))
    python = sys.executable
    env = {**os.environ, "TMPDIR": str(work)}  # every temp file of the children inside the work folder
    remote = subprocess.Popen([python, str(REPO / "benchmarks/soak_remote.py"), "--seconds", str(seconds)],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    breaker = subprocess.Popen([python, str(REPO / "benchmarks/soak_breaker.py"), "--seconds", str(seconds),
                                "--references", str(references)],
                               cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline, peak, paper_runs, failures = time.monotonic() + seconds, 0, 0, []
    while time.monotonic() < deadline:
        papers_run = subprocess.Popen([python, str(REPO / "benchmarks/soak_papers.py"), "--papers", str(papers)],
                                      cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        while papers_run.poll() is None:
            peak = max(peak, tree_rss(descendants(os.getpid())))
            time.sleep(0.5)
        paper_runs += 1
        out = papers_run.stdout.read() if papers_run.stdout else ""
        if papers_run.returncode != 0:
            failures.append(f"papers run {paper_runs}: exit {papers_run.returncode}: {out[-400:]}")
    remote_out, _ = remote.communicate(timeout=seconds + 300)
    if remote.returncode != 0:
        failures.append(f"remote soak: exit {remote.returncode}: {remote_out[-400:]}")
    breaker_out, _ = breaker.communicate(timeout=seconds + 900)  # (a run begun before the end is waited for)
    if breaker.returncode != 0:
        failures.append(f"breaker soak: exit {breaker.returncode}: {breaker_out[-400:]}")
    time.sleep(2)
    left = descendants(os.getpid())
    outside = sorted(n for n in set(os.listdir(tempfile.gettempdir())) - temp_before - {work.name}
                     if private_tmp or n.startswith("citeledger"))  # a shared /tmp: other programs write there too
    outside += [f"{work.name}/{n}" for n in sorted(os.listdir(work))]
    print(remote_out.strip().splitlines()[-12:] and "\n".join(remote_out.strip().splitlines()[-12:]))
    print("\n".join(breaker_out.strip().splitlines()[-10:]))
    print(f"papers runs (each resolved, killed, resumed, checked): {paper_runs}, failed: {len(failures)}")
    print(f"process tree peak RSS: {peak / 2**20:.0f} MB (bound {max_tree_mb:.0f} MB)")
    print(f"processes left behind: {sorted(left) or 'none'}; files left outside the ledgers "
          f"({'a private' if private_tmp else 'the shared'} /tmp, the work folder): {outside or 'none'}")
    for line in failures:
        print("FAILED", line)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures or left or outside or peak > max_tree_mb * 2**20 else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--max-tree-mb", type=float, default=1536.0)
    parser.add_argument("--papers", type=int, default=300, help="papers in each soak_papers.py run")
    parser.add_argument("--references", type=int, default=2000, help="references in each soak_breaker.py run")
    parser.add_argument("--shared-tmp", action="store_true", help="use the machine's /tmp (no mount namespace)")
    parser.add_argument("--in-private-tmp", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (args.shared_tmp or args.in_private_tmp) and os.geteuid() == 0 and shutil.which("unshare"):
        inner = [sys.executable, *sys.argv, "--in-private-tmp"]
        script = 'mount -t tmpfs -o size=4g citeledger-soak /tmp && exec "$@"'
        return subprocess.call(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *inner])
    return run(args.seconds, args.max_tree_mb, args.papers, args.references, private_tmp=args.in_private_tmp)


if __name__ == "__main__":
    sys.exit(main())
