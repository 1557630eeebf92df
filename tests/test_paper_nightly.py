"""The nightly inbox takes papers: an e-print tarball, a paper's folder and a folder of
papers dropped in it are resolved, moved to processed once their observations are written, and
a second night reads none of them again. Driven through the functions the flow calls."""
from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.nightly import steps as nightly
from citeledger.run import batches

CATALOG = Path(__file__).parent / "fixtures" / "catalog"
PAPERS = Path(__file__).parent / "fixtures" / "papers"


def night(dirs: dict[str, Path]) -> dict:
    work = nightly.prepare_nightly(dirs["inbox"], dirs["catalog"], dirs["ledger"], batch_size=20)
    if work.plan is None:
        return nightly.idle_nightly(work, dirs["ledger"], dirs["catalog"], dirs["processed"], False).as_dict()
    for job in work.plan.pending:
        batches.run_batch(job)
    return nightly.complete_nightly(work, dirs["processed"]).as_dict()


def test_the_inbox_takes_a_tarball_a_paper_folder_and_a_folder_of_papers(tmp_path):
    dirs = {k: tmp_path / k for k in ("catalog", "ledger", "inbox", "processed")}
    CatalogStore(dirs["catalog"]).build(sorted(CATALOG.glob("*.jsonl")))
    inbox = dirs["inbox"]
    inbox.mkdir()
    shutil.copy(PAPERS / "1911.13021.tar.gz", inbox)
    with tarfile.open(PAPERS / "1606.03757.tar") as archive:
        (inbox / "1606.03757").mkdir()
        for member in archive.getmembers():
            (inbox / "1606.03757" / member.name).write_bytes(archive.extractfile(member).read())
    (inbox / "batch").mkdir()
    shutil.copy(PAPERS / "1202.3665.gz", inbox / "batch")
    shutil.copy(PAPERS / "2006.02250.tar.gz", inbox / "batch" / "no-id-here.tar.gz")

    first = night(dirs)
    assert first["changed"] and os.listdir(inbox) == []
    assert sorted(os.listdir(dirs["processed"] / first["run_id"])) == ["1606.03757", "1911.13021.tar.gz", "batch"]
    assert sorted(os.listdir(dirs["processed"] / first["run_id"] / "batch")) == ["1202.3665.gz", "no-id-here.tar.gz"]
    import duckdb

    counts = dict(duckdb.sql(f"select citing_paper, count(*) from read_parquet('{dirs['ledger']}/observations/**/*"
                             ".parquet') group by 1").fetchall())
    assert counts == {"1911.13021": 19, "1606.03757": 33, "1202.3665": 34}
    reasons = duckdb.sql(f"select reason from read_parquet('{dirs['ledger']}/rejects/**/*.parquet')").fetchall()
    assert [r[0].split(":")[0] for r in reasons] == ["no_citing_paper"]

    for name in ("1911.13021.tar.gz", "1606.03757", "batch"):  # dropped again: already read
        shutil.move(str(dirs["processed"] / first["run_id"] / name), str(inbox / name))
    second = night(dirs)
    assert not second["changed"] and sorted(second["already_processed"]) == sorted(str(inbox / n) for n in
                                                                                   ("1911.13021.tar.gz", "1606.03757",
                                                                                    "batch"))
