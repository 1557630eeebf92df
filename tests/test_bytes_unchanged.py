"""A guard for restructuring: the embedded catalog and the sample references, run through the
command line, must give byte for byte the catalog files, observations, rejects, notices, runs,
citation records and ledger views recorded in ``tests/golden/bytes_unchanged.json`` (times and
generated run ids masked; see ``benchmarks/ledger_digests.py``).

A change that is meant to change results (a verdict, a record field) updates the golden file in
the same commit, with the reason in the message:
    python tests/test_bytes_unchanged.py --update
"""
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
GOLDEN = REPO / "tests" / "golden" / "bytes_unchanged.json"
sys.path.insert(0, str(REPO / "benchmarks"))

from ledger_digests import all_digests  # noqa: E402


def run_sample(work: Path) -> dict[str, str]:
    from citeledger.cli.entry import main

    catalog, ledger = work / "catalog", work / "ledger"
    sources = [str(p) for p in sorted((REPO / "data" / "sources").glob("*"))]
    assert main(["catalog", "build", "--catalog", str(catalog), *sources]) == 0
    assert main(["resolve", str(REPO / "data" / "sample_references.jsonl"), "--catalog", str(catalog),
                 "--ledger", str(ledger), "--run-id", "bytes-unchanged"]) == 0
    return all_digests(catalog, ledger)


@pytest.mark.flow
def test_sample_run_writes_the_recorded_bytes(tmp_path):
    expected = json.loads(GOLDEN.read_text())
    got = run_sample(tmp_path)
    assert sorted(k for k in expected.keys() | got.keys() if expected.get(k) != got.get(k)) == []


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    import os
    import tempfile

    os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="citeledger-prefect-"))
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    GOLDEN.write_text(json.dumps(run_sample(Path(tempfile.mkdtemp())), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
