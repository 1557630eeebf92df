"""Rebuild the embedded default data of ``data/`` from ``../shared/data`` (deterministic).

Run from the repository root: ``python data/make_sample.py [SHARED_DATA_DIR]``. See
``data/PROVENANCE.md`` for what each output is, where it comes from and its licence.
"""
from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

SHARED = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
OUT = Path("data")
CROSSREF_FIELDS = ("DOI", "title", "author", "issued", "published", "published-print", "published-online",
                   "container-title", "short-container-title", "volume", "page", "article-number", "type",
                   "update-to", "updated-by", "relation")


def jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_gz(path: Path, rows: list[dict]) -> None:
    with gzip.GzipFile(path, "wb", mtime=0) as fh:  # mtime 0: the same rows give the same bytes
        for row in rows:
            fh.write((json.dumps(row, ensure_ascii=False) + "\n").encode())


def main() -> None:
    rng = random.Random(20261130)
    (OUT / "sources").mkdir(parents=True, exist_ok=True)
    glutton_works = jsonl(SHARED / "catalog/glutton_works.jsonl.gz")
    arxiv = jsonl(SHARED / "catalog/arxiv_metadata_sample.jsonl.gz")
    crossref = jsonl(SHARED / "catalog/crossref_works_sample.jsonl.gz")
    write_gz(OUT / "sources/glutton_works.jsonl.gz", glutton_works)
    write_gz(OUT / "sources/arxiv_metadata_sample.jsonl.gz",
             [{k: v for k, v in a.items() if k != "abstract"} for a in arxiv])
    write_gz(OUT / "sources/crossref_works_sample.jsonl.gz",
             [{k: c[k] for k in CROSSREF_FIELDS if k in c} for c in crossref])

    # Retraction Watch: the doi,retractionwatch rows about works of this catalog, and the
    # database-export sample (its source note stripped: the payload bytes are kept exactly)
    catalog_dois = {w["doi"].lower() for w in glutton_works if w.get("doi")}
    catalog_dois |= {a["doi"].lower() for a in arxiv if a.get("doi")}
    catalog_dois |= {c["DOI"].lower() for c in crossref}
    nature = (SHARED / "notices/retraction_watch_doi_nature.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [nature[0]] + [line for line in nature[1:] if line.split(",", 1)[0].strip().lower() in catalog_dois]
    (OUT / "sources/retraction_watch_doi_nature_excerpt.csv").write_text("".join(kept), encoding="utf-8")
    sample = (SHARED / "http/retraction_watch/retraction_watch_2026-09_sample.csv").read_text(encoding="utf-8")
    (OUT / "sources/retraction_watch_2026-09_sample.csv").write_text(
        sample.split("#---8<--- payload below ---8<---\n", 1)[1], encoding="utf-8")

    refs: list[dict] = []

    def add(paper: str, raw: str, source: str, **gold) -> None:
        refs.append({"citing_paper": paper, "reference_index": sum(r["citing_paper"] == paper for r in refs) + 1,
                     "raw": raw, "source": source, **gold})

    # 1. glutton PMC strings as extracted from PDFs: 150 (about one in seven has no work in the catalog)
    dev = jsonl(SHARED / "refs/glutton_dev.jsonl.gz")
    # under an id of the sample's own: the shared dev set calls all its rows "pmc-sample-1943-dev",
    # and a ledger holding both must not take the sample's indexes for the dev set's
    for r in rng.sample(dev, 150):
        add("citeledger-sample-glutton", r["raw"], "pdf_text", gold_doi=r["gold_doi"])
    # 2. unarXive strings from LaTeX sources of three arXiv papers
    unarxive = jsonl(SHARED / "refs/unarxive_sample.jsonl.gz")
    papers = sorted({r["citing_paper"] for r in unarxive})[:3]
    for r in unarxive:
        if r["citing_paper"] in papers:
            add(r["citing_paper"], r["raw"], r["source"], silver_doi=r["silver_doi"],
                silver_arxiv_id=r["silver_arxiv_id"])
    # 3. identifier-bearing strings: glutton strings with their gold DOI written in the forms seen
    #    in real reference lists, and arXiv-sample works cited by arXiv id in real spellings
    doi_forms = ["{raw} doi:{doi}", "{raw} https://doi.org/{doi}", "{raw} DOI: {DOI}.", "{raw} (doi:{doi})"]
    with_gold = [r for r in dev if r["gold_doi"]]
    for i, r in enumerate(rng.sample(with_gold, 40)):
        raw = doi_forms[i % len(doi_forms)].format(raw=r["raw"], doi=r["gold_doi"], DOI=r["gold_doi"].upper())
        add("citeledger-identifier-sample", raw, "derived", gold_doi=r["gold_doi"].lower())
    arxiv_forms = ["{authors}. {title}. arXiv:{id}v1, {year}.", "{authors}, \u201c{title},\u201d arXiv preprint arXiv:{id}, {year}.",
                   "{authors}. {title}. {year}. URL https://arxiv.org/abs/{id}.", "{authors}. {title}. CoRR, abs/{id}, {year}."]
    candidates = [a for a in arxiv if a.get("title") and "/" not in a["id"] and a["id"][:4] in ("0704",)]
    for i, a in enumerate(rng.sample(candidates, 40)):
        authors = a["authors"].split(",")[0].strip()
        title = " ".join(a["title"].split())
        year = "20" + a["id"][:2]
        raw = arxiv_forms[i % len(arxiv_forms)].format(authors=authors, title=title, id=a["id"], year=year)
        add("citeledger-identifier-sample", raw, "derived", gold_arxiv_id=a["id"])
    old_style = [a for a in arxiv if "/" in a["id"] and a.get("title")]
    for a in rng.sample(old_style, 10):
        add("citeledger-identifier-sample", f"{a['authors'].split(',')[0].strip()}, {' '.join(a['title'].split())}, "
            f"[arXiv:{a['id']}].", "derived", gold_arxiv_id=a["id"])
    # 4. traps: a DOI pasted onto another work's string (metadata_mismatch), malformed ids, bst garbage
    for r, other in zip(rng.sample(with_gold, 5), rng.sample(glutton_works, 5)):
        add("citeledger-identifier-sample", f"{r['raw']} doi:{other['doi']}", "derived", gold_doi=None)
    for raw in ["Smith J. Deep nets for everything. arXiv:1501.1234, 2015.",
                "A. Author. Some results on graphs. arXiv:1313.01234 [math.CO].",
                "Doe J. A study of things. J Things. 2001;3:1-9. doi:10.1016/",
                "add.period write newline", "E., and Stoica, I.", "G.; Smola, A", "write newline"]:
        add("citeledger-identifier-sample", raw, "derived")
    # 5. the dev strings whose gold DOI has a Retraction Watch notice in the excerpt above (two retracted
    #    works, one corrected): the sample's links to works with a notice (README, query 2)
    noticed = {line.split(",", 1)[0].strip().lower() for line in kept[1:]}
    for r in dev:
        if (r["gold_doi"] or "").lower() in noticed and not any(x["raw"] == r["raw"] for x in refs):
            add("citeledger-sample-glutton", r["raw"], "pdf_text", gold_doi=r["gold_doi"])
    with open(OUT / "sample_references.jsonl", "w", encoding="utf-8") as fh:
        for r in refs:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(refs)} sample references; catalog sources in {OUT / 'sources'}")


if __name__ == "__main__":
    main()
