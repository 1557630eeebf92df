"""The project speaks of itself only: no issue or session numbers, probe items or work-log headings
in any tracked file (README, docs, docstrings, comments, test names, data files), and no narrative of
who edited what. What the code does and why is said where it is; the story of how it got there is in
the version history, and a release's changes for users in CHANGELOG.md.

Dates belong to measurements and releases: a figure is given with its command, date and machine in
``benchmarks/RESULTS*.md``, a release its date in ``CHANGELOG.md``, a fixture where it came from and
when in its ``PROVENANCE.md``. Elsewhere no Markdown heading carries a date, the prose of the README,
CONTRIBUTING.md and ``docs/`` none (code blocks and `code` may: they show values), and no docstring or
comment says when something was measured.

Third-party material (``tests/fixtures/``: real papers, payloads and catalogs as published) is left
as its authors wrote it, and this file, whose examples are what the scan catches, is not scanned."""
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
# who edited what: people or programs at work on the files
NARRATIVE = re.compile(
    r"\b(?:an?other|one other|the other|other)\s+(?:engineer|agent|developer|helper|contributor)s?\b"
    r"|(?<![-\w])engineers?\b|\b(?:was|were|while|half-way through|nothing else) editing\b", re.I)
DATE = r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b"
DATED_HEADING = re.compile(rf"^#{{1,6}} .*{DATE}.*$", re.M)
PROSE_DATE = re.compile(DATE)
MEASURED_ON = re.compile(rf"\b[Mm]easured (?:on )?{DATE}")
# where dates belong: measurements, releases, provenance
DATED_FILES = re.compile(r"^benchmarks/RESULTS[\w-]*\.md$|^CHANGELOG\.md$|(?:^|/)PROVENANCE\.md$")
# pages whose prose is the project's own description of itself
PROSE = re.compile(r"^(?:README\.md|CONTRIBUTING\.md|docs/.*\.md)$")
CODE = re.compile(r"^(```|~~~).*?^\1[^\n]*$|`[^`\n]*`", re.S | re.M)


def tracked_text_files() -> list[Path]:
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for name in names.splitlines():
        path = ROOT / name
        if (name.startswith(THIRD_PARTY) or not path.is_file() or path.stat().st_size > 5_000_000
                or path.resolve() == Path(__file__).resolve()):
            continue
        files.append(path)
    return files


def offenders(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    name = path.relative_to(ROOT).as_posix()

    def at(m: re.Match[str], what: str = "") -> str:
        return f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {what}{m.group(0)!r}"

    found = [at(m) for pattern in (WORKLOG, NARRATIVE) for m in pattern.finditer(text)]
    if path.suffix == ".md":
        found += [at(m, "heading ") for m in HEADING.finditer(text)]
    if not DATED_FILES.search(name):
        found += [at(m, "measured on a date (benchmarks/RESULTS.md) ") for m in MEASURED_ON.finditer(text)]
        if path.suffix == ".md":
            found += [at(m, "dated heading ") for m in DATED_HEADING.finditer(text)]
        if PROSE.match(name):
            prose = CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)  # same offsets, code blanked
            found += [at(m, "dated prose ") for m in PROSE_DATE.finditer(prose)]
    return found


def test_no_tracked_file_tells_the_work_log():
    assert [o for path in tracked_text_files() for o in offenders(path)] == []


def offenders_of(tmp_path: Path, text: str, name: str = "x.md") -> list[str]:
    global ROOT
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"intro\n{text}\n")
    saved, ROOT = ROOT, tmp_path
    try:
        return offenders(path)
    finally:
        ROOT = saved


# the mentions the scan catches, spelt in pieces so this file holds none of them itself
ISSUE, SESSION, PROBE, ENGINEER, DAY = "issue", "session", "probe item", "engineer", "2026-" + "12-01"
CAUGHT = [f"({ISSUE} 14)", f"see {ISSUE} #3", f"{ISSUE} 12's benchmark", f"in {SESSION} 9", "(#" + "16)",
          f"{PROBE} 4", f"## {SESSION.title()} 11: the index", f"### The nightly deployment ({DAY})",
          f"while another {ENGINEER} was half-way through editing it", "one other agent's edits beside it",
          "on a clean worktree (nothing else editing it)", f"built by the code of {DAY}: 462 s",
          f"Measured on {DAY} (10M in 4 shards)"]


@pytest.mark.parametrize("text", CAUGHT)
def test_the_scan_catches_a_work_log_mention(tmp_path, text):
    assert offenders_of(tmp_path, text, "docs/x.md")


@pytest.mark.parametrize("text", [f"Phys. Lett. B 716, {ISSUE.title()} 2 (2012)", f"Volume 86, {ISSUE.title()} 9, 2007",
                                  "## Sessions of the nightly flow", "#include <x.h>"])
def test_the_scan_leaves_journal_issues_alone(tmp_path, text):
    assert offenders_of(tmp_path, text) == []


@pytest.mark.parametrize("text", [f"the time pattern refuses `{DAY} 00:50:29+00:00`", f"```\nstarted {DAY}\n```",
                                  "a reverse-engineered format", "the User-Agent names citeledger"])
def test_the_scan_leaves_values_in_code_alone(tmp_path, text):
    assert offenders_of(tmp_path, text, "docs/x.md") == []


@pytest.mark.parametrize("name", ["benchmarks/RESULTS.md", "CHANGELOG.md", "tests/golden/PROVENANCE.md"])
def test_dates_stay_with_measurements_releases_and_provenance(tmp_path, name):
    assert offenders_of(tmp_path, f"## Catalog builds ({DAY})\nMeasured {DAY} on EPYC-2: 4 min", name) == []
