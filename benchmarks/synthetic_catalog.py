"""Deterministic synthetic catalog of N works built from real title and author vocabulary.

Why synthetic works look the way they do: a catalog of millions of real works is full of
*distractors* for any one reference: titles that share most words with it, the same surname, the
same journal. So each synthetic work is one of
- a recombination: a title stitched from word bigrams of real titles (Markov chain), or
- a near-duplicate of a real title with one or two words replaced, dropped, or a subtitle added
  (the hard case for precision: same topic, different work),
with a real surname, a real journal abbreviation, a random year, volume and first page, and about
one token in 40 made unique (a new compound or number), so the vocabulary keeps growing with N
as real catalogs do (Heaps' law). Seeded: the same N and seed give the same works.

Also holds ``load_shared_works``: the shared catalog files as ``Work`` records (works JSONL,
arXiv snapshot, Crossref messages), for benchmarks that run before/without the catalog store.

Usage: python benchmarks/synthetic_catalog.py N OUT.(jsonl|parquet) [--seed S]
       python benchmarks/synthetic_catalog.py N OUT --shape openalex|crossref|arxiv|dblp [--seed S]
(``--shape``: the same works written as that catalog source's files, see ``catalog_shapes.py``.)
"""
from __future__ import annotations

import gzip
import json
import random
import re
import sys
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from resolvers.model import Work  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared/data"
CATALOG_FILES = ["glutton_works.jsonl.gz", "arxiv_metadata_sample.jsonl.gz", "crossref_works_sample.jsonl.gz"]


def _open(path: Path):
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)


def _surname(name: str) -> str:
    name = re.sub(r"\\['`\"^~]|[{}]", "", name).strip()
    if "," in name:
        return name.split(",")[0].strip()
    parts = name.split()
    return parts[-1] if parts else name


def _work_from_record(d: dict) -> Work | None:
    """Works JSONL, arXiv snapshot or Crossref message -> Work (None when it has no id)."""
    if "versions" in d and "id" in d:  # arXiv OAI/Kaggle shape
        authors = [a for a in re.split(r",\s*|\s+and\s+", d.get("authors") or "") if a.strip()]
        year = None
        if d.get("versions"):
            m = re.search(r"\b(19|20)\d\d\b", d["versions"][0].get("created", ""))
            year = int(m.group(0)) if m else None
        doi = (d.get("doi") or "").split()[0].lower() if d.get("doi") else None
        return Work(work_id=f"arxiv:{d['id']}", arxiv_id=d["id"], title=re.sub(r"\s+", " ", d.get("title") or ""),
                    authors=tuple(_surname(a) for a in authors), year=year, venue=d.get("journal-ref"),
                    alt_dois=(doi,) if doi else (), type="preprint",
                    withdrawn="withdrawn" in (d.get("comments") or "").lower())
    if "DOI" in d:  # Crossref message
        issued = (d.get("issued") or {}).get("date-parts") or [[None]]
        venue = (d.get("short-container-title") or d.get("container-title") or [None])[0]
        page = d.get("page")
        return Work(work_id=f"doi:{d['DOI'].lower()}", doi=d["DOI"].lower(),
                    title=(d.get("title") or [None])[0],
                    authors=tuple(a.get("family") or a.get("name") or "" for a in d.get("author") or []),
                    year=issued[0][0] if issued and issued[0] else None, venue=venue, volume=d.get("volume"),
                    first_page=page.split("-")[0] if page else None, type=d.get("type"))
    doi = (d.get("doi") or "").lower() or None
    arxiv = d.get("arxiv_id")
    if not doi and not arxiv:
        return None
    return Work(work_id=f"doi:{doi}" if doi else f"arxiv:{arxiv}", doi=doi, arxiv_id=arxiv, title=d.get("title"),
                authors=tuple(d.get("authors") or ()), year=d.get("year"), venue=d.get("venue"),
                volume=d.get("volume"), first_page=d.get("first_page"), pmid=d.get("pmid"), type=d.get("type"))


def load_shared_works(folder: Path = SHARED / "catalog", files=CATALOG_FILES) -> list[Work]:
    works: dict[str, Work] = {}
    for name in files:
        with _open(folder / name) as fh:
            for line in fh:
                w = _work_from_record(json.loads(line))
                if w is not None and w.title:
                    works.setdefault(w.work_id, w)
    return list(works.values())


def work_to_row(w: Work) -> dict:
    return {"work_id": w.work_id, "doi": w.doi, "arxiv_id": w.arxiv_id, "title": w.title, "authors": list(w.authors),
            "year": w.year, "venue": w.venue, "volume": w.volume, "first_page": w.first_page, "pmid": w.pmid,
            "type": w.type, "alt_dois": list(w.alt_dois), "withdrawn": w.withdrawn}


class Vocabulary:
    """Title bigrams, surnames and venues of the real catalog."""

    def __init__(self, works: list[Work]):
        self.titles = [w.title.split() for w in works if w.title and len(w.title.split()) >= 3]
        self.next: dict[str, list[str]] = {}
        self.starts: list[str] = []
        for words in self.titles:
            self.starts.append(words[0])
            for a, b in zip(words, words[1:] + ["</s>"]):
                self.next.setdefault(a, []).append(b)
        self.surnames = sorted({w.authors[0] for w in works if w.authors and w.authors[0]})
        self.venues = sorted({w.venue for w in works if w.venue and len(w.venue) < 60})


def _markov_title(rng: random.Random, v: Vocabulary) -> list[str]:
    words = [rng.choice(v.starts)]
    target = rng.randint(5, 16)
    while len(words) < 25:
        nxt = v.next.get(words[-1])
        if not nxt:
            break
        w = rng.choice(nxt)
        if w == "</s>":
            if len(words) >= target:
                break
            w = rng.choice(v.starts).lower()
        words.append(w)
    return words


def _near_duplicate(rng: random.Random, v: Vocabulary) -> list[str]:
    words = list(rng.choice(v.titles))
    edits = rng.randint(1, 2)
    for _ in range(edits):
        op = rng.random()
        i = rng.randrange(len(words))
        if op < 0.5:
            words[i] = rng.choice(rng.choice(v.titles))
        elif op < 0.7 and len(words) > 4:
            del words[i]
        elif op < 0.85:
            words[-1] = words[-1].rstrip(".") + ":"
            words += _markov_title(rng, v)[:rng.randint(2, 6)]
        else:
            words.insert(i, rng.choice(rng.choice(v.titles)))
    return words


def generate(n: int, base: list[Work], seed: int = 20240601) -> Iterator[Work]:
    """N synthetic works (DOIs under the unassigned prefix 10.99999)."""
    rng = random.Random(seed)
    v = Vocabulary(base)
    for i in range(n):
        words = _near_duplicate(rng, v) if rng.random() < 0.3 else _markov_title(rng, v)
        if rng.random() < 0.025 * len(words):
            j = rng.randrange(len(words))
            words[j] = words[j] + rng.choice(["-", ""]) + format(rng.getrandbits(24), "x")
        title = " ".join(words).rstrip(":,;")
        n_auth = rng.randint(1, 4)
        doi = f"10.99999/syn.{seed % 1000}.{i}"
        yield Work(work_id=f"doi:{doi}", doi=doi, title=title,
                   authors=tuple(rng.choice(v.surnames) for _ in range(n_auth)),
                   year=rng.randint(1960, 2024) if rng.random() < 0.8 else None,
                   venue=rng.choice(v.venues), volume=str(rng.randint(1, 400)),
                   first_page=str(rng.randint(1, 3000)), type="journal-article")


def write(works, out: Path, batch: int = 200_000) -> None:
    """Works JSONL (contract format) or Parquet with the catalog's ``works.parquet`` columns."""
    out = Path(out)
    if out.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        schema = pa.schema([("work_id", pa.string()), ("doi", pa.string()), ("arxiv_id", pa.string()),
                            ("title", pa.string()), ("authors", pa.list_(pa.string())), ("year", pa.int32()),
                            ("venue", pa.string()), ("volume", pa.string()), ("first_page", pa.string()),
                            ("pmid", pa.string()), ("type", pa.string()), ("alt_dois", pa.list_(pa.string())),
                            ("withdrawn", pa.bool_())])
        with pq.ParquetWriter(out, schema) as writer:
            rows: list[dict] = []
            for w in works:
                rows.append(work_to_row(w))
                if len(rows) >= batch:
                    writer.write_table(pa.Table.from_pylist(rows, schema)); rows = []
            if rows:
                writer.write_table(pa.Table.from_pylist(rows, schema))
    else:
        with open(out, "w") as fh:
            for w in works:
                row = work_to_row(w)
                fh.write(json.dumps({k: row[k] for k in ("doi", "arxiv_id", "title", "authors", "year", "venue",
                                                         "volume", "first_page", "pmid", "type")}) + "\n")


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    seed = 20240601
    if "--seed" in argv:
        i = argv.index("--seed"); seed = int(argv[i + 1]); del argv[i:i + 2]
    shape = None
    if "--shape" in argv:
        i = argv.index("--shape"); shape = argv[i + 1]; del argv[i:i + 2]
    n, out = int(argv[0]), Path(argv[1])
    if shape:
        from catalog_shapes import WRITERS
        WRITERS[shape](generate(n, load_shared_works(), seed), out, seed)
        return
    write(generate(n, load_shared_works(), seed), out)


if __name__ == "__main__":
    main()
