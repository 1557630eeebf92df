"""Identifier extraction quality, citeledger and refextract side by side on the same strings.

Usage: python benchmarks/eval_identifiers.py [--data DIR] [--no-refextract] [--show N]

Prints, for each extractor, in one run:
* recall of tagged arXiv ids and DOIs on the unarXive sample, on refextract's own test cases and
  on a physics-conventions set (real strings, plus seeded PDF-spacing variants of them);
* identifiers invented on the glutton dev strings: an extracted DOI or arXiv id that is neither the
  row's gold DOI (or the arXiv id a 10.48550 gold names) nor printed in the string.

What counts as tagged (the sets' own labels, never citeledger's output):
* unarXive: ``contained_arxiv_ids`` (explicit arXiv links in the paper's LaTeX), plus
  ``silver_arxiv_id`` / ``silver_doi`` when that id is printed in the string (the silver labels come
  from automatic matching to OpenAlex; an id that is not printed cannot be extracted).
* refextract cases: the test's expected arXiv ids and DOIs, minus the ids arXiv's scheme rules out
  (``9910.1234``, 5 digits before 1501: refextract's tests accept them, arXiv never issued them).
* physics conventions: the unarXive and refextract strings whose tagged arXiv id is printed in a
  physics habit (old-style ``archive/YYMMNNN``, a bare new-style id after the journal reference or
  in brackets, ``arXiv:ID [category]``), each once as printed and once degraded by
  ``pdf_spacing_variant`` (seeded), which inserts the spaces PDF text extraction inserts.

"Printed" ignores whitespace and case, so an id split across a line break still counts as printed.
refextract (``pip install refextract``, the ``bench`` extra) is imported here only; its DOIs, report
numbers and URLs are all read as its answer, and ``gr-qc-9310026``-style report numbers are mapped
back to ``gr-qc/9310026`` in its favour. refextract takes ~40 ms a string: the full run takes
about ten minutes on a quiet machine, ``--no-refextract`` a few seconds. Only the glutton dev
strings with an identifier-shaped token (``_ID_SHAPED``) are run: the others cannot yield one.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resolvers.identifiers.extract import OLD_STYLE_ARCHIVES, canonical_arxiv_id, extract_identifiers, normalize_doi  # noqa: E402

Extractor = Callable[[str], tuple[set[str], set[str]]]  # raw -> (dois, arxiv ids)
SEED = 20261201


@dataclass
class Case:
    """One string and the identifiers its set tags (canonical DOIs and arXiv ids)."""
    raw: str
    dois: set[str] = field(default_factory=set)
    arxiv: set[str] = field(default_factory=set)
    origin: str = ""


def find_shared_data() -> Path:
    """../shared/data seen from the repository or any worktree above it."""
    for parent in REPO.parents:
        if (parent / "shared" / "data" / "refs").is_dir():
            return parent / "shared" / "data"
    return REPO.parent / "shared" / "data"


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def printed(identifier: str, raw: str) -> bool:
    """Is the id in the string, ignoring whitespace and case (and an old id's subject class)?"""
    s, ident = squash(raw), identifier.lower()
    if "/" in ident and not ident.startswith("10."):
        archive, digits = ident.split("/", 1)
        return re.search(re.escape(archive) + r"(?:\.[a-z]{2})?/" + digits + r"(?!\d)", s) is not None
    return re.search(r"(?<![\d.])" + re.escape(ident) + r"(?!\d)", s) is not None


# ---------------------------------------------------------------------------------------------
# the sets
# ---------------------------------------------------------------------------------------------
def unarxive_cases(data: Path) -> list[Case]:
    cases = []
    for row in read_jsonl(data / "refs" / "unarxive_sample.jsonl.gz"):
        raw = row["raw"]
        c = Case(raw, origin=f"unarxive:{row['citing_paper']}#{row['reference_index']}")
        c.arxiv = {a for a in map(canonical_arxiv_id, row["contained_arxiv_ids"]) if a}
        silver = canonical_arxiv_id(row["silver_arxiv_id"] or "")
        if silver and printed(silver, raw):
            c.arxiv.add(silver)
        doi = normalize_doi(row["silver_doi"] or "")
        if doi and printed(doi, raw):
            c.dois.add(doi)
        cases.append(c)
    return cases


def refextract_cases(data: Path) -> list[Case]:
    cases = []
    for row in read_jsonl(data / "refs" / "refextract_cases.jsonl"):
        c = Case(row["raw"], origin=f"refextract:{row['test']}")
        c.arxiv = {a for a in (canonical_arxiv_id(g.split()[0]) for g in row["gold_arxiv"]) if a}
        c.dois = {d for d in map(normalize_doi, row["gold_doi"]) if d}
        cases.append(c)
    return cases


_PHYSICS_HABIT = (
    r"(?<![\w/])(?:[a-z]+-)?[a-z]+(?:\.[A-Z]{2})?/{id}"      # old style
    r"|(?<![\w:/.])(?<!abs/)(?<!pdf/){id}"                 # bare new style
    r"|arxiv:\s?{id}(?:v\d+)?\s?\[[a-z-]+(?:\.[a-z-]+)?\]")  # arXiv:ID [hep-th]


def physics_habit(case: Case) -> bool:
    """Is one of the case's tagged arXiv ids printed in a physics/INSPIRE habit?"""
    for aid in case.arxiv:
        ident = re.escape(aid.split("/")[-1])
        if re.search(_PHYSICS_HABIT.replace("{id}", ident), case.raw, re.I):
            return True
    return False


def pdf_spacing_variant(raw: str, arxiv_ids: Iterable[str], rng: random.Random) -> str:
    """The string as PDF text extraction might print it: one space inserted inside each tagged
    arXiv id (``hep -th/9711200``, ``gr - qc/9310026``, ``cond-mat/ 0410550``, ``hep-ph
    /0101001``, ``1207 .7214``, ``1207. 7214``) and around an ``arXiv:`` prefix's colon.
    Deterministic for a given ``rng`` state; only spaces are added, no character changes."""
    out = raw
    for aid in sorted(arxiv_ids):
        if "/" in aid:
            archive, digits = aid.split("/")
            pat = re.escape(archive) + r"(\.[A-Z]{2})?/" + digits
            m = re.search(pat, out, re.I)
            if not m:
                continue
            tok = m.group(0)
            choices = [tok.replace("/", " /", 1), tok.replace("/", "/ ", 1)]
            if "-" in archive:
                choices += [tok.replace("-", " -", 1), tok.replace("-", " - ", 1),
                            tok.replace("-", "- ", 1)]
            out = out[:m.start()] + rng.choice(choices) + out[m.end():]
        else:
            m = re.search(r"(?<![\d.])" + re.escape(aid), out)
            if not m:
                continue
            tok = aid.replace(".", rng.choice([" .", ". "]), 1)
            out = out[:m.start()] + tok + out[m.end():]
    return re.sub(r"(?i)arxiv:", lambda m: m.group(0)[:-1] + rng.choice([" :", ": ", " : "]), out)


def physics_cases(sets: dict[str, list[Case]]) -> list[Case]:
    """Real physics-habit strings, each followed by its seeded PDF-spacing variant."""
    rng = random.Random(SEED)
    out = []
    for case in sets["unarXive"] + sets["refextract cases"]:
        if not physics_habit(case):
            continue
        out.append(case)
        out.append(Case(pdf_spacing_variant(case.raw, case.arxiv, rng), set(case.dois),
                        set(case.arxiv), case.origin + "+pdf_spacing"))
    return out


# ---------------------------------------------------------------------------------------------
# extractors
# ---------------------------------------------------------------------------------------------
def citeledger(raw: str) -> tuple[set[str], set[str]]:
    got = extract_identifiers(raw)
    return set(got.dois), set(got.arxiv_ids)


_REPORT_OLD = re.compile(r"^([a-z]+(?:-[a-z]+)?)(?:\.[a-z]{2})?-(\d{7})$", re.I)


def _refextract_arxiv(value: str) -> str | None:
    aid = canonical_arxiv_id(value.split()[0]) if value.strip() else None
    m = _REPORT_OLD.match(value.strip())
    if aid is None and m and m.group(1).lower() in OLD_STYLE_ARCHIVES:
        aid = canonical_arxiv_id(f"{m.group(1)}/{m.group(2)}")
    return aid


def make_refextract() -> Extractor:
    from refextract import extract_references_from_string  # bench extra only

    def run(raw: str) -> tuple[set[str], set[str]]:
        dois: set[str] = set()
        arxiv: set[str] = set()
        try:
            refs = extract_references_from_string(raw, is_only_references=True)
        except Exception:  # noqa: BLE001 - a crash on one string counts as nothing found
            return dois, arxiv
        for ref in refs:
            dois |= {d for d in map(normalize_doi, ref.get("doi", [])) if d}
            for value in ref.get("reportnumber", []) + ref.get("url", []):
                aid = _refextract_arxiv(value)
                if aid:
                    arxiv.add(aid)
        return dois, arxiv
    return run


# ---------------------------------------------------------------------------------------------
# scoring
# ---------------------------------------------------------------------------------------------
def recall(cases: list[Case], extract: Extractor, show: int, name: str) -> str:
    found = {"arXiv": [0, 0], "DOI": [0, 0]}
    shown = 0
    for c in cases:
        dois, arxiv = extract(c.raw)
        for kind, tagged, got in (("arXiv", c.arxiv, arxiv), ("DOI", c.dois, dois)):
            found[kind][1] += len(tagged)
            found[kind][0] += len(tagged & got)
            if tagged - got and shown < show:
                shown += 1
                print(f"  [{name}] missed {sorted(tagged - got)} in {c.origin}: {c.raw[:160]!r}")
    hit = found["arXiv"][0] + found["DOI"][0]
    total = found["arXiv"][1] + found["DOI"][1]
    return (f"{100 * hit / max(total, 1):6.2f} % of {total:4d}  (arXiv {found['arXiv'][0]}/"
            f"{found['arXiv'][1]}, DOI {found['DOI'][0]}/{found['DOI'][1]})")


# A DOI needs "10." + digits, an arXiv id digits around "." or "/" (or 7 digits after an archive):
# a string with none of these can yield no identifier from either extractor, so the slow one is
# not run on it (main() checks that citeledger indeed finds nothing in the others).
_ID_SHAPED = re.compile(r"\d\s?[./]\s?\d|doi|arxiv|/\s?\d|\d{7}", re.I)


def invented(rows: list[dict], extract: Extractor, show: int, name: str) -> str:
    """Extracted ids that are neither the gold nor printed in the string."""
    bad = total = 0
    for row in rows:
        dois, arxiv = extract(row["raw"])
        gold = normalize_doi(row.get("gold_doi") or "")
        gold_arxiv = canonical_arxiv_id(gold) if gold and gold.startswith("10.48550/") else None
        total += len(dois) + len(arxiv)
        for ident in sorted(dois - {gold}) + sorted(arxiv - {gold_arxiv}):
            if not printed(ident, row["raw"]):
                bad += 1
                if bad <= show:
                    print(f"  [{name}] invented {ident} in {row['raw'][:160]!r}")
    return f"{bad:4d} invented of {total} extracted"


_ARXIV_ISH = re.compile(r"arxiv|[a-z]\s?-\s?[a-z]{2,3}\s?/\s?\d|\d{4}\s?\.\s?\d{4}", re.I)


def disagreements(data: Path, extractors: dict[str, Extractor]) -> None:
    """On the unlabeled strings (real PDF text, no gold) that look like they carry an arXiv id:
    every arXiv id only one extractor finds, for a reader to judge."""
    rows = [r for r in read_jsonl(data / "refs" / "glutton_unlabeled.jsonl.gz") if _ARXIV_ISH.search(r["raw"])]
    only: dict[str, int] = {name: 0 for name in extractors}
    for row in rows:
        found = {name: ex(row["raw"])[1] for name, ex in extractors.items()}
        for name, ids in found.items():
            others = set().union(*(v for k, v in found.items() if k != name))
            for aid in sorted(ids - others):
                only[name] += 1
                print(f"  only {name}: {aid} in {row['raw'][-150:]!r}")
    print(f"glutton unlabeled, {len(rows)} arXiv-looking strings: arXiv ids found by one only: "
          + ", ".join(f"{k} {v}" for k, v in only.items()))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=find_shared_data())
    ap.add_argument("--no-refextract", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="print up to N misses per set")
    ap.add_argument("--disagreements", action="store_true",
                    help="only list the arXiv ids one extractor finds and the other does not on "
                         "glutton_unlabeled's arXiv-looking strings (no gold: judge by eye)")
    args = ap.parse_args(argv)
    sets = {"unarXive": unarxive_cases(args.data), "refextract cases": refextract_cases(args.data)}
    sets["physics conventions"] = physics_cases(sets)
    glutton_all = read_jsonl(args.data / "refs" / "glutton_dev.jsonl.gz")
    glutton = [r for r in glutton_all if _ID_SHAPED.search(r["raw"])]
    assert not any(extract_identifiers(r["raw"]).any_wellformed for r in glutton_all
                   if not _ID_SHAPED.search(r["raw"])), "the id-shaped prefilter dropped an id"
    extractors: dict[str, Extractor] = {"citeledger": citeledger}
    if not args.no_refextract:
        extractors["refextract"] = make_refextract()
    if args.disagreements:
        disagreements(args.data, extractors)
        return 0
    for name, extract in extractors.items():
        print(f"== {name}")
        everything: list[Case] = []
        for set_name, cases in sets.items():
            print(f"  {set_name:22s} {len(cases):5d} strings  "
                  f"{recall(cases, extract, args.show, name)}")
            everything += cases
        print(f"  {'all (concatenated)':22s} {len(everything):5d} strings  "
              f"{recall(everything, extract, 0, name)}")
        print(f"  {'glutton dev':22s} {len(glutton):5d} strings  "
              f"{invented(glutton, extract, args.show, name)}  (the {len(glutton)} of "
              f"{len(glutton_all)} with an id-shaped token)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
