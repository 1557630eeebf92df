"""An incremental site build is byte for byte a full one, after each kind of change a night makes to
the ledger: papers observed again (other states, other works: the works they cited and cite now,
the ledger papers whose inbound citations change), a paper that no longer cites a work another paper
cites, a cited work that joins the ledger as a paper
(every page linking to it now links to the paper's page), a notice that appears for a cited work,
a catalog that grows, a record file damaged and then written again. After each, the site of ``OUT``
is built again (incrementally: the published build's state and pages, staged in the spare) and a
full build of the same ledger into a new folder; every file of the two, the papers' JSON records
included, has the same bytes, and the incremental build made again only the pages of the papers
the change reached."""
from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.ledger.ledger_store import LedgerStore
from citeledger.ledger.query import run_query
from citeledger.records import record_files
from citeledger.records.ledger_reads import citing_papers
from citeledger.run import notice_check
from citeledger.site.site_files import build_site

REPO = Path(__file__).parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_records_ledger import RUN, WHEN, catalog_works, make_ledger, observation_rows  # noqa: E402
from bench_site import change_papers  # noqa: E402

PAPERS, REFS = 80, 10


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path]:
    """A synthetic ledger of 80 papers citing catalog works, about a tenth of them catalog papers
    citing each other, its signed records written: (catalog, ledger)."""
    work = tmp_path_factory.mktemp("site-incremental")
    catalog, ledger = make_ledger(work, PAPERS, REFS)
    record_files.write_records(citing_papers(ledger, catalog, None), ledger, catalog)
    return catalog, ledger


def site_files(folder: Path) -> dict[str, bytes]:
    """The site's files (its bookkeeping under .citeledger-site/ apart), by name, with their bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".citeledger-site" not in p.parts}


def citing(ledger: Path, catalog: Path, work_id: str) -> list[str]:
    """The ledger papers whose current references name ``work_id``."""
    rows = run_query(f"SELECT DISTINCT citing_paper FROM current WHERE work_id = '{work_id}' ORDER BY 1",
                     ledger, catalog).fetchall()
    return [r[0] for r in rows]


def a_paper_joins(ledger: Path, catalog: Path) -> list[str]:
    """A catalog arXiv paper that ledger papers cite, not a ledger paper yet, read into the ledger (its
    references observed, citing works other papers cite), and the records it changes written (its
    own, and those of the ledger papers it cites), as a night writes them. The pages of the works it
    cites change, and every paper citing it links to its page now, though their records are as they
    were: the papers whose pages are made again."""
    works, arxiv = catalog_works(catalog)
    papers = set(citing_papers(ledger, catalog, None))
    joining = next(a for a in arxiv if a not in papers and citing(ledger, catalog, f"arxiv:{a}"))
    cited = {r[0] for r in run_query("SELECT DISTINCT work_id FROM current WHERE work_id IS NOT NULL", ledger,
                                     catalog).fetchall()}
    rows = observation_rows([joining], REFS, [w for w in works if w[0] in cited])  # works with pages already
    for row in rows:
        row.update(observation_id=f"{row['observation_id']}-joined", observed_at=WHEN + timedelta(days=30))
    LedgerStore(ledger).write_observations(RUN, "joined", rows)
    papers_of = record_files.ledger_work_pages(ledger, catalog)
    written = sorted({joining, *(papers_of[r["work_id"]] for r in rows if r["work_id"] in papers_of)})
    record_files.write_records(written, ledger, catalog)
    return sorted({*written, *citing(ledger, catalog, f"arxiv:{joining}")})


def a_paper_cites_elsewhere(ledger: Path, catalog: Path) -> list[str]:
    """A paper citing a work another paper cites too is observed again citing other works only, and
    its record (and those of the ledger papers it cites now) written, as a night writes them: that
    work's page no longer lists it."""
    works, _ = catalog_works(catalog)
    shared = run_query("SELECT work_id FROM current WHERE work_id IS NOT NULL GROUP BY 1 "
                       "HAVING count(DISTINCT citing_paper) > 1 ORDER BY 1 LIMIT 1", ledger, catalog).fetchall()[0][0]
    paper = citing(ledger, catalog, shared)[0]
    rows = observation_rows([paper], REFS, [w for w in works[::3] if w[0] != shared])
    for row in rows:
        row.update(observation_id=f"{row['observation_id']}-elsewhere", observed_at=WHEN + timedelta(days=40))
    LedgerStore(ledger).write_observations(RUN, "elsewhere", rows)
    papers_of = record_files.ledger_work_pages(ledger, catalog)
    written = sorted({paper, *(papers_of[r["work_id"]] for r in rows if r["work_id"] in papers_of)})
    record_files.write_records(written, ledger, catalog)
    assert paper not in citing(ledger, catalog, shared)
    return written


def a_notice_appears(ledger: Path, catalog: Path) -> list[str]:
    """A cited work is found retracted (a later notice row, as a night's notice check writes it), and
    the records of the papers citing it written again."""
    works = {w[0]: w for w in catalog_works(catalog)[0]}
    cited = run_query("SELECT work_id, count(DISTINCT citing_paper) AS n FROM current WHERE work_id IS NOT NULL "
                      "AND status IN ('verified_exact', 'verified_fuzzy') GROUP BY 1 ORDER BY n DESC, 1 LIMIT 1",
                      ledger, catalog).fetchall()
    work_id = cited[0][0]
    (row,) = notice_check.work_notice_rows(catalog, [work_id], "run-notices")
    doi = works[work_id][1] or f"10.9999/{work_id}"
    row.update(standing="retracted", checked_at=datetime(2027, 1, 2, tzinfo=timezone.utc), events=json.dumps([{
        "date": "2027-01-01", "nature_raw": "Retraction", "notice_doi": "10.9999/retraction", "original_doi": doi,
        "reasons": ["+Error in Data"], "record_id": "1", "source": "retraction_watch_csv",
        "sources": ["retraction_watch_csv"], "type": "retraction"}]))
    LedgerStore(ledger).write_notices("run-notices", [row], part="retraction")
    touched = citing(ledger, catalog, work_id)
    record_files.write_records(touched, ledger, catalog)
    return touched


def the_catalog_grows(ledger: Path, catalog: Path, tmp_path: Path) -> list[str]:
    """A new catalog source built in, which gives a cited work a year and a volume: a new generation
    (every cited work's page made again from it; no paper's page changes)."""
    cited = run_query("SELECT work_id, doi FROM current WHERE status = 'verified_exact' AND doi IS NOT NULL "
                      "AND arxiv_id IS NULL ORDER BY 1 LIMIT 1", ledger, catalog).fetchall()
    source = tmp_path / "more-works.jsonl"
    source.write_text(json.dumps({"doi": cited[0][1], "title": "A work whose year the catalog learns later",
                                  "authors": ["Later, A"], "year": 2027, "venue": "J Growth", "volume": "9"}) + "\n")
    CatalogStore(catalog).build([source])
    return []


def test_an_incremental_build_after_each_kind_of_change_is_a_full_build(made, tmp_path):
    catalog, ledger = (tmp_path / "catalog", tmp_path / "ledger")
    shutil.copytree(made[0], catalog)
    shutil.copytree(made[1], ledger)
    out = tmp_path / "out"
    build_site(out, ledger, catalog)
    records = ledger / "records"
    victim = sorted(p for p in records.glob("2501.*.json"))[3]
    saved = victim.read_bytes()

    def damage() -> list[str]:
        damaged = saved.replace(b'"as_of":"2', b'"as_of":"1', 1)  # its content digest no longer holds
        assert damaged != saved
        victim.write_bytes(damaged)
        return []

    def restore() -> list[str]:
        victim.write_bytes(saved)
        return [victim.stem]

    changes = [
        ("papers observed again", lambda: change_papers(ledger, catalog, 6, REFS, step=1)),
        ("the same again, staged in the spare", lambda: change_papers(ledger, catalog, 6, REFS, step=2)),
        ("a cited work joins the ledger", lambda: a_paper_joins(ledger, catalog)),
        ("a paper cites other works now", lambda: a_paper_cites_elsewhere(ledger, catalog)),
        ("a notice appears", lambda: a_notice_appears(ledger, catalog)),
        ("the catalog grows", lambda: the_catalog_grows(ledger, catalog, tmp_path)),
        ("a record file damaged", damage),
        ("the record file written again", restore),
    ]
    for number, (what, change) in enumerate(changes):
        before = site_files(out)
        touched = change()
        report = build_site(out, ledger, catalog)
        full = tmp_path / f"full-{number}"
        build_site(full, ledger, catalog)
        incremental, fresh = site_files(out), site_files(full)
        assert incremental.keys() == fresh.keys(), what
        assert [name for name in fresh if incremental[name] != fresh[name]] == [], what
        assert incremental != before, f"{what}: the change changed no page"
        assert report.made == len(touched) < PAPERS // 2, (what, report.made, touched)
        shutil.rmtree(full)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "1 record file" not in index  # the damaged one is back
