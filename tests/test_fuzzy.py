"""Golden cases of the fuzzy path (tests/golden/fuzzy/*.jsonl) and the Parquet-backed retriever."""
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeledger.evaluation.links import evaluate
from citeledger.index.blocking import INDEX_FILE, ParquetRetriever, build_index
from citeledger.index.index_upgrade import ensure_index
from resolvers.candidates.fuzzy import FuzzyResolver
from resolvers.candidates.retrieval import InMemoryRetriever, index_tokens
from resolvers.errors import ConfigError
from resolvers.model import Reason, Status, Work
from resolvers.parsing.fields import parse_reference
from resolvers.parsing.quality import parse_uncertain_reason
from resolvers.resolution import fuzzy_verdicts

GOLDEN = Path(__file__).parent / "golden/fuzzy"


def _load(name):
    return [json.loads(line) for line in (GOLDEN / name).open() if line.strip()]


def _work(d):
    return Work(work_id=f"doi:{d['doi']}", doi=d["doi"], title=d.get("title"), authors=tuple(d.get("authors", ())),
                year=d.get("year"), venue=d.get("venue"), volume=d.get("volume"), first_page=d.get("first_page"))


UNCERTAIN = _load("uncertain_cases.jsonl")
MATCH = _load("match_cases.jsonl")


@pytest.mark.parametrize("case", UNCERTAIN, ids=[c["raw"][:30] or "empty" for c in UNCERTAIN])
def test_parse_uncertain_golden(case):
    reason = parse_uncertain_reason(case["raw"], parse_reference(case["raw"]), False)
    assert (reason.value if reason else None) == case["reason"]
    # a well-formed identifier overrides every rule
    assert parse_uncertain_reason(case["raw"], None, True) is None


@pytest.mark.parametrize("case", MATCH, ids=[c["name"] for c in MATCH])
def test_match_golden(case):
    works = [_work(d) for d in case["catalog"]]
    [v] = fuzzy_verdicts(FuzzyResolver(InMemoryRetriever(works)), [case["raw"]])
    assert v.status.value == case["status"], v.evidence
    if "reason" in case:
        assert v.reason.value == case["reason"]
    if "work_id" in case:
        assert v.work.work_id == case["work_id"]
        assert v.resolver_source == "raw_fallback" and 0.0 <= v.score <= 1.0
    else:
        assert v.work is None
    json.dumps(v.evidence)  # evidence must be JSON-serialisable
    if v.status == Status.VERIFIED_FUZZY or v.reason == Reason.TOO_CLOSE_TO_CALL:
        assert "runner_up" in v.evidence and "thresholds" in v.evidence


def test_parquet_retriever_matches_in_memory(tmp_path):
    cases = [c for c in MATCH if c["status"] == "verified_fuzzy"]
    works = {w.work_id: w for c in cases for w in map(_work, c["catalog"])}
    rows = [{"work_id": w.work_id, "doi": w.doi, "arxiv_id": None, "title": w.title, "authors": list(w.authors),
             "year": w.year, "venue": w.venue, "volume": w.volume, "first_page": w.first_page, "pmid": None,
             "type": None, "alt_dois": [], "withdrawn": False} for w in works.values()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "works.parquet")
    stats = build_index(tmp_path)
    assert (tmp_path / INDEX_FILE).exists() and stats["works"] == len(rows)
    retriever = ParquetRetriever(tmp_path)
    memory = InMemoryRetriever(list(works.values()))
    from resolvers.candidates.retrieval import locator_tokens

    parsed = [parse_reference(c["raw"]) for c in cases]
    queries = [index_tokens(p.title) + locator_tokens(p.text) for p in parsed]  # as the resolver asks
    got = [[x.work.work_id for x in cands] for cands in retriever.candidates_batch(queries, k=5)]
    want = [[x.work.work_id for x in cands] for cands in memory.candidates_batch(queries, k=5)]
    assert got == want and all(got)
    verdicts = fuzzy_verdicts(FuzzyResolver(retriever), [c["raw"] for c in cases])
    assert [v.work.work_id for v in verdicts] == [c["work_id"] for c in cases]
    # a rewritten works.parquet makes the index stale: opening refuses it (a reader never writes),
    # and the upgrade a run's plan makes rebuilds it
    pq.write_table(pa.Table.from_pylist(rows[:1]), tmp_path / "works.parquet")
    with pytest.raises(ConfigError, match="older format"):
        ParquetRetriever(tmp_path)
    ensure_index(tmp_path)
    assert ParquetRetriever(tmp_path).n_works == 1


def test_evaluate_counts_wrong_links_and_gold_nulls():
    w = Work("doi:10.1/a", doi="10.1/a")
    from resolvers.model import Verdict
    link = Verdict(Status.VERIFIED_FUZZY, Reason.FUZZY_MATCH, w, "raw_fallback", 0.99)
    none = Verdict(Status.UNRESOLVED, Reason.BELOW_THRESHOLD)
    rows = [{"raw": "a", "gold_doi": "10.1/A"}, {"raw": "b", "gold_doi": None}, {"raw": "c", "gold_doi": "10.1/c"}]
    m = evaluate(rows, [link, link, none])
    assert m["links"] == 2 and m["correct_links"] == 1 and m["precision"] == 0.5 and m["recall"] == 0.5
    assert m["states"] == {"verified_fuzzy": 2, "unresolved": 1} and len(m["worst_errors"]) == 1


def test_evaluate_reads_a_gold_doi_as_the_catalog_reads_a_doi_field():
    """glutton_dev's gold ``10.3389/ neuro.01.002.2008`` (a line break kept after the prefix) names the
    work the catalog keeps as 10.3389/neuro.01.002.2008; a gold that is no DOI stays as given."""
    from resolvers.model import Verdict
    w = Work("doi:10.3389/neuro.01.002.2008", doi="10.3389/neuro.01.002.2008")
    link = Verdict(Status.VERIFIED_EXACT, Reason.DOI_MATCH, w, "doi", 1.0)
    m = evaluate([{"raw": "a", "gold_doi": "10.3389/ neuro.01.002.2008"}, {"raw": "b", "gold_doi": "not a doi"}],
                 [link, link])
    assert m["correct_links"] == 1 and m["links"] == 2


def test_locator_keys_retrieve_a_work_whose_title_the_string_lacks(tmp_path):
    from resolvers.candidates.retrieval import locator_token, locator_tokens

    assert "46:1535" in locator_tokens("Maggiora GM (2006) J Chem Inf Model 46:1535")
    assert "74:34503" in locator_tokens("Phys. Rev. D 74, 034503 (2006)")
    assert "28:620" in locator_tokens("Eur J Nucl Med. 2001;28(4):620-4.")
    assert locator_token("74", "034503") == "74:34503" and locator_token("vol. 3", "12") is None
    works = [Work("doi:10.1/a", doi="10.1/a", title="Molecular similarity in medicinal chemistry", volume="46",
                  first_page="1535"),
             Work("doi:10.1/b", doi="10.1/b", title="Similarity searching", volume="45", first_page="1535")]
    query = locator_tokens("Maggiora GM (2006) J Chem Inf Model 46:1535")
    [cands] = InMemoryRetriever(works).candidates_batch([query], k=5)
    assert [c.work.work_id for c in cands] == ["doi:10.1/a"]
    rows = [{"work_id": w.work_id, "doi": w.doi, "arxiv_id": None, "title": w.title, "authors": [], "year": None,
             "venue": None, "volume": w.volume, "first_page": w.first_page, "pmid": None, "type": None,
             "alt_dois": [], "withdrawn": False} for w in works]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "works.parquet")
    ensure_index(tmp_path)
    [cands] = ParquetRetriever(tmp_path).candidates_batch([query], k=5)
    assert [c.work.work_id for c in cands] == ["doi:10.1/a"]


def test_batch_forms_equal_one_by_one():
    from resolvers.verification import verify

    titles = ["Über eine hyperkinetische Erkrankung", "The histamine H", "Courtship behavior in ",
              "Correction to: Genetic structure", "Barking foxes,", "Plain complete title"]
    works = [Work(f"w{i}", title=t, authors=("Müller",), venue="J. Exp. Bot.", volume="3", first_page="12")
             for i, t in enumerate(titles * 12)]
    one = [verify.work_forms(w) for w in works]
    verify._FORMS.clear()
    verify.prepare_forms(works)
    assert [verify.work_forms(w) for w in works] == one


def test_stored_forms_equal_forms_made_one_by_one(default_catalog):
    """The comparison forms the catalog stores for every work (built with Arrow kernels at index
    time) are exactly those ``work_forms`` makes from the work itself: cut-short titles, notices,
    non-ASCII names and venues included."""
    from resolvers.verification import verify

    gen = next(p for p in Path(default_catalog).iterdir() if p.name.startswith("gen-"))
    retriever = ParquetRetriever(gen)
    rows = list(range(0, retriever.n_works, 7))
    works, stored = retriever._works_forms(rows)
    verify._FORMS.clear()
    assert all(stored[r] == verify.work_forms(works[r]) for r in rows)
    assert sum(f.truncated for f in stored.values()) and sum(f.notice for f in stored.values())
    [cands] = retriever.candidates_batch([["kinematics", "cerebellar", "throw"]], k=3)
    assert cands and all(c.forms == verify.work_forms(c.work) for c in cands)


def test_planning_a_run_brings_an_older_index_up_to_date_once(tmp_path):
    """A catalog whose index predates the stored forms (or lost a file) is rebuilt when a run is
    planned, before any batch or worker process needs it; a current one is left as it is."""
    import json as _json

    from citeledger.catalog.catalog_store import CatalogStore
    from citeledger.index.blocking import FORMS_FILE
    from citeledger.index.index_upgrade import ensure_index
    from citeledger.run import finishing, planning

    catalog = tmp_path / "catalog"
    CatalogStore(catalog).build(sorted((Path(__file__).parent / "fixtures" / "catalog").glob("*.jsonl")))
    gen = CatalogStore(catalog).current()
    (gen / FORMS_FILE).unlink()
    refs = tmp_path / "refs.jsonl"
    refs.write_text(_json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "Doe J. A title. 1999."}) + "\n")
    plan = planning.plan_run([refs], catalog, tmp_path / "ledger", run_id="r")
    finishing.abandon_run(plan)
    assert (gen / FORMS_FILE).exists()
    before = {p.name: p.stat().st_mtime_ns for p in gen.iterdir()}
    assert ensure_index(gen) is None
    assert {p.name: p.stat().st_mtime_ns for p in gen.iterdir()} == before


def test_the_matcher_returns_outcomes_and_decides_no_state():
    """Only the rule chain decides states: fuzzy.py builds no Verdict and names no Status."""
    import ast
    from pathlib import Path

    import resolvers.candidates.fuzzy as fuzzy_module
    from resolvers.candidates.fuzzy import FuzzyOutcome

    tree = ast.parse(Path(fuzzy_module.__file__).read_text(encoding="utf-8"))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not names & {"Verdict", "Status", "parse_uncertain_reason"}
    case = next(c for c in MATCH if c["status"] == "verified_fuzzy")
    [outcome] = FuzzyResolver(InMemoryRetriever([_work(d) for d in case["catalog"]])).match_batch(
        [parse_reference(case["raw"])])
    assert isinstance(outcome, FuzzyOutcome) and outcome.clear and outcome.best.work_id == case["work_id"]
    assert outcome.score is not None and "runner_up" in outcome.evidence


def test_stored_index_is_memory_mapped_not_copied(tmp_path):
    """A worker's private memory must not grow with the catalog: the postings, the term
    lookup and the work columns are the catalog files' pages, not heap copies."""
    import numpy as np

    works = [_work(d) for c in MATCH for d in c["catalog"]]
    rows = [{"work_id": f"w{i}", "doi": w.doi, "title": w.title, "authors": list(w.authors), "year": w.year,
             "venue": w.venue, "volume": w.volume, "first_page": w.first_page} for i, w in enumerate(works)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "works.parquet")
    build_index(tmp_path)
    before = pa.total_allocated_bytes()
    retriever = ParquetRetriever(tmp_path)
    index = retriever.index
    for array in (index.offsets, index.postings, index.df, index.idf, index.terms.hashes):
        base = array  # (a plain ndarray view of the map, or the map itself: the file's pages either way)
        while base is not None and not isinstance(base, np.memmap):
            base = base.base
        assert base is not None and not array.flags.writeable and not array.flags.owndata
    assert pa.total_allocated_bytes() == before  # the Arrow tables allocated nothing: mapped pages
    works_table, forms_table = retriever.reader.tables()
    assert works_table.num_rows == len(rows) and forms_table.num_rows == len(rows)
    cands = retriever.candidates_batch([index_tokens(works[0].title)], k=3)[0]
    assert cands and cands[0].work.title == works[0].title


def test_term_hashes_are_the_same_in_every_process():
    """The build stores term hashes that other processes search: Python's salted ``hash`` would
    find nothing in a worker started with another seed."""
    import os
    import subprocess
    import sys

    from resolvers.candidates.retrieval import term_hashes

    code = "from resolvers.candidates.retrieval import term_hashes; print(term_hashes(['quantum', 'été', '74:034503']).tolist())"
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(Path(__file__).parent.parent)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == term_hashes(["quantum", "été", "74:034503"]).tolist()
    # FNV-1a 64 of b"a" (the published test vector 0xaf63dc4c8601ec8c)
    assert term_hashes(["a"]).view("uint64")[0] == 0xAF63DC4C8601EC8C


def test_external_build_in_small_chunks_equals_one_chunk(tmp_path):
    """The build's runs on disk, merged part by part, give the same index files as one chunk
    holding every work; the run folder is gone afterwards, and a killed build's is removed."""
    import numpy as np

    from citeledger.index.blocking import ARRAYS

    works = [_work(d) for c in MATCH for d in c["catalog"]]
    rows = [{"work_id": f"w{i}", "doi": w.doi, "title": w.title, "authors": list(w.authors), "year": w.year,
             "venue": w.venue, "volume": w.volume, "first_page": w.first_page} for i, w in enumerate(works)]
    arrays = {}
    for chunk_rows, folder in ((3, tmp_path / "small"), (10**6, tmp_path / "one")):
        folder.mkdir()
        pq.write_table(pa.Table.from_pylist(rows), folder / "works.parquet")
        (folder / ".index-runs-999999999").mkdir()  # a build killed mid-way (no such process)
        build_index(folder, chunk_rows=chunk_rows)
        assert not list(folder.glob(".index-runs-*"))
        arrays[chunk_rows] = {name: np.load(folder / f"index_{name}.npy") for name in ARRAYS}
    assert len(arrays[3]["postings"]) > len(rows)
    for name in ARRAYS:
        assert np.array_equal(arrays[3][name], arrays[10**6][name]), name
