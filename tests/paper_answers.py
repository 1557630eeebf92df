"""Hold what ``papers.reader.read_paper`` gives for one paper against an answer made without the reader:
the entries' keys in order, each entry's DOIs and arXiv ids, and the number of entries printed.
Used by the paper corpus and by the BibTeX style matrix."""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resolvers.identifiers.extract import extract_identifiers  # noqa: E402

LATEX = re.compile(r"\\[A-Za-z@]+|@noop|\\[{}'\"`^~]|[{}]")
REPEAT_DASH = re.compile(r"\s*(?:[\u2014\u2013]|-{2,}|_{3,})")  # "---. 2011" for the authors above, unfilled


def _text(ref) -> str:
    """The string and fields the reader gives, less the entry's title: an id the title names (a
    comment on another paper) is printed but is not the entry's, as the answers count it."""
    title = ref.fields.get("title", "")
    return " ".join(v.replace(title, " ") if title else v for k, v in [("raw", ref.raw), *ref.fields.items()]
                    if k != "title")


def _found(identifier: str, text: str, extracted: set[str]) -> bool:
    return identifier in extracted or identifier in text.lower().replace("\\_", "_")


def compare(refs: list, keys: list[str], ids: list, entries: int, optional: dict[str, set[str]] | None = None) -> dict:
    """Counts of DOIs and arXiv ids found of those wanted, and every identifier missing, invented
    (not carried by its entry) or string holding LaTeX, for the references ``refs`` of one paper.
    ``optional`` names, per key, identifiers neither wanted nor invented (those its title names)."""
    by_key = {r.key: r for r in refs if r.key}
    got: dict = {"count": len(refs), "want_count": entries, "doi": [0, 0], "arxiv": [0, 0],
                 "invented": [], "latex": [], "missing": [], "dash": []}
    for n, (key, (dois, arxiv)) in enumerate(zip(keys, ids)):
        ref = by_key.get(key) or (refs[n] if n < len(refs) and not by_key else None)
        text = _text(ref) if ref else ""
        found = extract_identifiers(text)
        extracted = set(found.dois) | set(found.arxiv_ids)
        for kind, wanted in (("doi", dois), ("arxiv", arxiv)):
            got[kind][1] += len(wanted)
            hits = [i for i in wanted if _found(i, text, extracted)]
            got[kind][0] += len(hits)
            got["missing"] += [f"{key}: {i}" for i in wanted if i not in hits]
        allowed = set(dois) | set(arxiv) | {f"10.48550/arxiv.{a}" for a in arxiv} | (optional or {}).get(key, set())
        got["invented"] += [f"{key}: {i}" for i in (*found.dois, *found.arxiv_ids) if i not in allowed]
    for r in refs:
        if REPEAT_DASH.match(r.raw):
            got["dash"].append(f"{r.key or r.order}: {r.raw[:60]!r}")
        for where, value in (("raw", r.raw), *r.fields.items()):
            if LATEX.search(value):
                got["latex"].append(f"{r.key or r.order} {where}: {LATEX.search(value).group(0)!r} in {value[:80]!r}")
    return got


def passes(got: dict) -> bool:
    return got["count"] == got["want_count"] and not (got["missing"] or got["invented"] or got["latex"] or got["dash"])


def assert_matches(got: dict) -> None:
    assert got["count"] == got["want_count"], f"{got['count']} references, the paper prints {got['want_count']}"
    assert not got["missing"], f"identifiers not found: {got['missing'][:10]}"
    assert not got["invented"], f"identifiers the entries do not carry: {got['invented'][:10]}"
    assert not got["latex"], f"LaTeX left in the text: {got['latex'][:5]}"
    assert not got["dash"], f"a repeated-author dash left unfilled: {got['dash'][:5]}"
