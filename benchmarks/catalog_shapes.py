"""Synthetic works written in the shape of each big catalog source, for the readers' 1M benchmarks
(``python benchmarks/synthetic_catalog.py N OUT --shape openalex|crossref|arxiv|dblp``).

Each shape carries what its real files carry around the fields the reader keeps (OpenAlex's
concepts and counts, Crossref's references count, DBLP's person pages), so a reader pays for
skipping them as it would on the real file:
- openalex: OUT/works/updated_date=*/part_NNN.gz (100,000 works a part), a manifest; 1 % of the
  works appear again in an older partition with another title (the newest must win), 2 % are
  arXiv preprints (10.48550 DOI), 0.1 % retracted;
- crossref: OUT/NNNN.json.gz, each ``{"items": [...]}`` of 5,000 messages; 0.1 % with a
  ``updated-by`` retraction;
- arxiv: OUT (JSON lines, gzip) in the Kaggle snapshot shape, new-style ids, 1-3 versions;
- dblp: OUT (dblp.xml.gz with its DOCTYPE), articles, inproceedings, CoRR entries, named
  entities in names, and one person page (``www``) per ten records (skipped, counted).
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import random
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable, Iterator
from xml.sax.saxutils import escape

from resolvers.model import Work  # noqa: E402  (benchmarks put the repo on sys.path)

PART_ROWS = {"openalex": 100_000, "crossref": 5_000}
GIVEN = ["A.", "B.", "C.", "D.", "E.", "J.", "M.", "Maria", "Jürgen", "Zoltán", "Wei", "Ana"]


def _given(i: int) -> str:
    return GIVEN[i % len(GIVEN)]


def _arxiv_id(i: int) -> str:
    """A well-formed new-style arXiv id, distinct for every i below 10 million."""
    block = i // 99_999
    return f"{15 + block % 10:02d}{1 + (block // 10) % 12:02d}.{i % 99_999 + 1:05d}"


def _openalex(w: Work, i: int, rng: random.Random, updated: str) -> dict:
    arxiv = i % 50 == 7  # (decided by i, so an older copy of the work is the same work)
    doi = f"10.48550/arxiv.{_arxiv_id(i)}" if arxiv else w.doi
    authors = [{"author_position": "first" if k == 0 else "middle",
                "author": {"id": f"https://openalex.org/A{i}{k}", "display_name": f"{_given(i + k)} {a}", "orcid": None},
                "institutions": [], "countries": [], "is_corresponding": False,
                "raw_author_name": f"{a}, {_given(i + k)}", "raw_affiliation_strings": []}
               for k, a in enumerate(w.authors)]
    source = {"id": f"https://openalex.org/S{zlib.crc32((w.venue or '').encode())}", "display_name": w.venue, "type": "journal",
              "issn_l": None, "is_oa": False}
    location = {"is_oa": False, "landing_page_url": f"https://doi.org/{doi}", "pdf_url": None, "source": source,
                "license": None, "version": "publishedVersion"}
    return {"id": f"https://openalex.org/W{i + 10**9}", "doi": f"https://doi.org/{doi}", "title": w.title,
            "display_name": w.title, "publication_year": w.year, "publication_date": f"{w.year or 2000}-01-01",
            "ids": {"openalex": f"https://openalex.org/W{i + 10**9}", "doi": f"https://doi.org/{doi}",
                    **({"pmid": f"https://pubmed.ncbi.nlm.nih.gov/{i + 10**7}"} if i % 7 == 0 else {})},
            "language": "en", "primary_location": location, "locations": [location], "type": "article",
            "authorships": authors, "biblio": {"volume": w.volume, "issue": str(1 + i % 12),
                                               "first_page": w.first_page, "last_page": None},
            "is_retracted": rng.random() < 0.001, "is_paratext": False, "cited_by_count": rng.randint(0, 500),
            "concepts": [{"id": "https://openalex.org/C41008148", "display_name": "Computer science", "level": 0,
                          "score": 0.5}], "referenced_works_count": 0, "referenced_works": [],
            "counts_by_year": [{"year": 2024, "cited_by_count": 1}], "updated_date": updated,
            "created_date": "2016-06-24"}


def write_openalex(works: Iterable[Work], out: Path, seed: int) -> None:
    rng = random.Random(seed)
    parts: dict[str, list[gzip.GzipFile]] = {}

    def part(date: str, n: int) -> gzip.GzipFile:
        files = parts.setdefault(date, [])
        while len(files) <= n // PART_ROWS["openalex"]:
            folder = out / "works" / f"updated_date={date}"
            folder.mkdir(parents=True, exist_ok=True)
            files.append(gzip.open(folder / f"part_{len(files):03d}.gz", "wb", compresslevel=3))  # type: ignore[arg-type]
        return files[n // PART_ROWS["openalex"]]

    old = 0
    for i, w in enumerate(works):
        part("2025-06-11", i).write((json.dumps(_openalex(w, i, rng, "2025-06-11T00:03:37.532706")) + "\n").encode())
        if i % 100 == 0:  # an older copy, another title: must lose
            stale = dataclasses.replace(w, title=(w.title or "") + " (old)")
            part("2024-01-15", old).write((json.dumps(_openalex(stale, i, rng, "2024-01-15T00:00:00")) + "\n").encode())
            old += 1
    for files in parts.values():
        for fh in files:
            fh.close()
    (out / "works" / "manifest").write_text(json.dumps({"entries": [], "meta": {"record_count": i + 1 + old}}))


def _crossref(w: Work, i: int, rng: random.Random) -> dict:
    msg = {"DOI": w.doi, "type": w.type, "title": [w.title], "container-title": [w.venue],
           "author": [{"given": _given(i + k), "family": a, "sequence": "first" if k == 0 else "additional",
                       "affiliation": []} for k, a in enumerate(w.authors)],
           "volume": w.volume, "issue": str(1 + i % 12),
           "page": f"{w.first_page}-{int(w.first_page or 0) + rng.randint(1, 20)}",
           "issued": {"date-parts": [[w.year or 2000, 1 + i % 12]]}, "publisher": "Synthetic Press",
           "member": "0", "prefix": "10.99999", "reference-count": rng.randint(0, 80), "is-referenced-by-count": 3,
           "indexed": {"date-parts": [[2025, 6, 1]], "date-time": "2025-06-01T00:00:00Z", "timestamp": 0}}
    if rng.random() < 0.001:
        msg["updated-by"] = [{"DOI": f"{w.doi}.retraction", "type": "retraction", "source": "publisher",
                              "updated": {"date-parts": [[2024, 5, 1]]}, "label": "Retraction"}]
    return msg


def write_crossref(works: Iterable[Work], out: Path, seed: int) -> None:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    batch: list[dict] = []
    n_file = 0
    for i, w in enumerate(works):
        batch.append(_crossref(w, i, rng))
        if len(batch) == PART_ROWS["crossref"]:
            (out / f"{n_file:04d}.json.gz").write_bytes(gzip.compress(json.dumps({"items": batch}).encode(), 3))
            batch, n_file = [], n_file + 1
    if batch:
        (out / f"{n_file:04d}.json.gz").write_bytes(gzip.compress(json.dumps({"items": batch}).encode(), 3))


def _rfc2822(when: datetime) -> str:
    return when.strftime("%a, %d %b %Y %H:%M:%S GMT")


def _arxiv(w: Work, i: int, rng: random.Random) -> dict:
    first = datetime(2015 + (i // 100_000) % 10, 1 + (i // 1_000_000) % 12, 1 + i % 28, 12, tzinfo=timezone.utc)
    versions = [{"version": f"v{k + 1}", "created": _rfc2822(first + timedelta(days=40 * k))}
                for k in range(1 + i % 3)]
    names = [f"{_given(i + k)} {a}" for k, a in enumerate(w.authors)]
    journal = rng.random() < 0.4
    return {"id": _arxiv_id(i), "submitter": names[0] if names else None,
            "authors": ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else "",
            "title": w.title, "comments": f"{rng.randint(5, 40)} pages, {rng.randint(1, 9)} figures",
            "journal-ref": f"{w.venue} {w.volume} ({w.year}) {w.first_page}" if journal else None,
            "doi": w.doi if journal else None, "report-no": None,
            "categories": rng.choice(["hep-th", "cs.CL cs.LG", "math.CO cs.CG", "astro-ph.GA", "q-bio.NC"]),
            "license": None, "abstract": "  " + (w.title or "") + " is studied.\n", "versions": versions,
            "update_date": f"{first:%Y-%m-%d}", "authors_parsed": [[a, "", ""] for a in w.authors]}


def write_arxiv(works: Iterable[Work], out: Path, seed: int) -> None:
    rng = random.Random(seed)
    with gzip.open(out, "wt", compresslevel=3) as fh:
        for i, w in enumerate(works):
            fh.write(json.dumps(_arxiv(w, i, rng)) + "\n")


def _dblp(w: Work, i: int) -> Iterator[str]:
    names = "".join(f"<author>{escape(_given(i + k)).replace('ü', '&uuml;').replace('á', '&aacute;')} "
                    f"{escape(a)}{' 0001' if i % 13 == 0 else ''}</author>\n" for k, a in enumerate(w.authors))
    title = escape(w.title or "") + "."
    if i % 10 == 3:
        yield (f'<article mdate="2025-01-01" key="journals/corr/abs-{i}" publtype="informal">\n{names}'
               f"<title>{title}</title>\n<year>{w.year or 2020}</year>\n<volume>abs/{_arxiv_id(i)}</volume>\n"
               f"<journal>CoRR</journal>\n<ee type=\"oa\">https://doi.org/10.48550/arXiv.{_arxiv_id(i)}</ee>\n"
               "</article>\n")
    elif i % 2:
        yield (f'<inproceedings mdate="2024-05-02" key="conf/syn/P{i}">\n{names}<title>{title}</title>\n'
               f"<pages>{w.first_page}-{int(w.first_page or 0) + 9}</pages>\n<year>{w.year or 2020}</year>\n"
               f"<booktitle>{escape(w.venue or '')}</booktitle>\n<ee>https://doi.org/{w.doi}</ee>\n"
               f"<crossref>conf/syn/{w.year}</crossref>\n<url>db/conf/syn/syn{w.year}.html#P{i}</url>\n</inproceedings>\n")
    else:
        yield (f'<article mdate="2024-05-02" key="journals/syn/A{i}">\n{names}<title>{title}</title>\n'
               f"<pages>{w.first_page}-{int(w.first_page or 0) + 9}</pages>\n<year>{w.year or 2020}</year>\n"
               f"<volume>{w.volume}</volume>\n<journal>{escape(w.venue or '')}</journal>\n<number>{1 + i % 6}</number>\n"
               f"<ee>https://doi.org/{w.doi}</ee>\n<url>db/journals/syn/syn{w.volume}.html#A{i}</url>\n</article>\n")
    if i % 10 == 0:
        yield (f'<www mdate="2020-01-01" key="homepages/syn/{i}">\n<author>{escape(w.authors[0] if w.authors else "x")}'
               "</author>\n<title>Home Page</title>\n</www>\n")


def write_dblp(works: Iterable[Work], out: Path, seed: int) -> None:
    with gzip.open(out, "wt", encoding="iso-8859-1", errors="xmlcharrefreplace", compresslevel=3) as fh:
        fh.write('<?xml version="1.0" encoding="ISO-8859-1"?>\n<!DOCTYPE dblp SYSTEM "dblp.dtd">\n<dblp>\n')
        for i, w in enumerate(works):
            for record in _dblp(w, i):
                fh.write(record)
        fh.write("</dblp>\n")


WRITERS = {"openalex": write_openalex, "crossref": write_crossref, "arxiv": write_arxiv, "dblp": write_dblp}
