"""The README's shown outputs come from the real commands: each line of its first run's output
blocks is a line the commands print (in order; the README leaves lines out, never changes one),
the `make run` counts are the sample's, and its query 2 lists the sample's links to works with a
notice. A change of wording or counts fails here until the README says the same."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
README = (REPO / "README.md").read_text()
PAPER = "tests/fixtures/papers/1911.13021.tar.gz"


def citeledger(*argv: str, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "citeledger.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def shown_blocks(section: str) -> list[list[str]]:
    """The ```text blocks of a README section, as lines ("..." lines are left out by the README)."""
    body = README.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return [[line for line in block.splitlines() if line.strip() and line.strip() != "..."]
            for block in re.findall(r"```text\n(.*?)```", body, re.S)]


def in_order(shown: list[str], printed: str) -> list[str]:
    """The shown lines the printed output lacks, or prints in another order."""
    lines, at, missing = printed.splitlines(), 0, []
    for line in shown:
        if line in lines[at:]:
            at = lines.index(line, at) + 1
        else:
            missing.append(line)
    return missing


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, default_catalog) -> Path:
    """A folder laid out as the repository for the README's commands: data/catalog and the paper."""
    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(default_catalog, root / "data" / "catalog")
    (root / PAPER).parent.mkdir(parents=True)
    shutil.copy(REPO / PAPER, root / PAPER)
    shutil.copy(REPO / "data" / "sample_references.jsonl", root / "data" / "sample_references.jsonl")
    return root


def test_the_first_run_prints_what_the_readme_shows(workdir):
    resolve, record = shown_blocks("A first real run")
    assert len(resolve) >= 4 and len(record) >= 3
    printed = citeledger("resolve", PAPER, cwd=workdir)
    assert in_order(resolve, printed) == []
    assert in_order(record, citeledger("record", "1911.13021", cwd=workdir)) == []


def test_make_run_counts_and_query_two_are_the_sample_s(workdir):
    said = re.search(r"`make run` resolves `data/sample_references.jsonl` \((\d+) references(.*?)\n\n", README, re.S)
    assert said, "the README says what make run resolves"
    counts = {state: int(n) for n, state in re.findall(r"(\d+)\s+`([a-z_]+)`", said.group(2))}
    ledger = ["--ledger", "data/sample-ledger", "--catalog", "data/catalog"]
    printed = citeledger("resolve", "data/sample_references.jsonl", *ledger, cwd=workdir)
    assert f": {said.group(1)} references, 0 rejected rows" in printed
    got = {m.group(1): int(m.group(2)) for m in re.finditer(r"^  ([a-z_]+) +(\d+)$", printed, re.M)}
    assert {s: n for s, n in got.items() if n and s != "links"} == counts
    query_two = re.search(r"-- 2\..*?\n(SELECT.*?;)", README, re.S)
    assert query_two
    rows = citeledger("query", query_two.group(1), "--format", "json", *ledger, cwd=workdir).splitlines()
    noticed = re.search(r"three links are to works with a notice", said.group(2))
    assert noticed and len(rows) == 3 and {json.loads(r)["standing"] for r in rows} == {"retracted", "corrected"}
