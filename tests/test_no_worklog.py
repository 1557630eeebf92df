"""The project speaks of itself only: no issue or session numbers, probe items or work-log headings
in any tracked file (README, docs, docstrings, comments, test names, data files). What the code does
and why is said where it is; the story of how it got there is in the version history.

Third-party material (``tests/fixtures/``: real papers, payloads and catalogs as published) is left
as its authors wrote it, and this file's own examples of what the scan catches are not scanned."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# (case matters: a capitalised issue with its number is a journal's issue in a reference string)
WORKLOG = re.compile(
    r"\b[Ii]ssues? #\d+|\(issues? \d+|\bissues? \d+(?:'s|[:;,)])|\b[Ss]essions? \d+\b|\(#\d+\)"
    r"|\bprobe items? \d+|\bgh-\d+\b")
HEADING = re.compile(r"^#{1,6} .*(\bsession\b|\bwork ?log\b|\bbranch\b|\bcommit [0-9a-f]{7,40}\b|\bsprint\b)", re.I | re.M)
THIRD_PARTY = ("tests/fixtures/",)


def tracked_text_files() -> list[Path]:
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for name in names.splitlines():
        path = ROOT / name
        if name.startswith(THIRD_PARTY) or not path.is_file() or path.stat().st_size > 5_000_000:
            continue
        files.append(path)
    return files


def offenders(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    found = [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for m in WORKLOG.finditer(text)]
    if path.suffix == ".md":
        found += [f"{path.relative_to(ROOT)}: heading {m.group(0)!r}" for m in HEADING.finditer(text)]
    return found


def test_no_tracked_file_tells_the_work_log():
    assert [o for path in tracked_text_files() for o in offenders(path)] == []


def offenders_of(tmp_path: Path, text: str) -> list[str]:
    global ROOT
    path = tmp_path / "x.md"
    path.write_text(f"intro\n{text}\n")
    saved, ROOT = ROOT, tmp_path
    try:
        return offenders(path)
    finally:
        ROOT = saved


# the mentions the scan catches, spelt in pieces so this file holds none of them itself
ISSUE, SESSION, PROBE = "issue", "session", "probe item"
CAUGHT = [f"({ISSUE} 14)", f"see {ISSUE} #3", f"{ISSUE} 12's benchmark", f"in {SESSION} 9", "(#" + "16)",
          f"{PROBE} 4", f"## {SESSION.title()} 11: the index"]


@pytest.mark.parametrize("text", CAUGHT)
def test_the_scan_catches_a_work_log_mention(tmp_path, text):
    assert offenders_of(tmp_path, text)


@pytest.mark.parametrize("text", [f"Phys. Lett. B 716, {ISSUE.title()} 2 (2012)", f"Volume 86, {ISSUE.title()} 9, 2007",
                                  "## Sessions of the nightly flow", "#include <x.h>"])
def test_the_scan_leaves_journal_issues_alone(tmp_path, text):
    assert offenders_of(tmp_path, text) == []
