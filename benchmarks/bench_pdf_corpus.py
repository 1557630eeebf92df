"""The built-in PDF reader beside refextract on every real PDF the project holds: the eight hand
counted papers (tests/fixtures/pdfs/), the papers answered from their LaTeX source
(tests/fixtures/pdf_corpus/) and the peers' test PDFs (tests/fixtures/peer_pdfs/), each held to
its answer (tests/pdf_corpus.py says how). Prints, per set and for the reader and refextract:
entries found of those printed, PDFs with the exact count, printed DOIs and arXiv ids found,
identifiers invented (read but carried by no entry), entries longer than the longest printed one,
seconds per PDF; then every PDF the reader gets wrong.

    .venv/bin/python benchmarks/bench_pdf_corpus.py [--no-refextract] [--sets hand,source,peers] [--json OUT]
        [--floors tests/fixtures/pdf_floors.json]

refextract (``pip install refextract``, the ``bench`` extra; never imported by the product) reads
each PDF with ``extract_references_from_file``; its DOIs, report numbers and URLs are read as its
identifiers (old-style report numbers mapped back to arXiv ids in its favour). It takes seconds a
PDF: run it once, not in a loop. It rewrites the PDF it is given, so it reads a copy in a temporary
folder (its time includes the copy). Needs pdftotext (poppler-utils).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from pdf_corpus import answers, pdf_text, score  # noqa: E402

from papers.pdf.read import pdf_reference_strings  # noqa: E402
from resolvers.identifiers.extract import OLD_STYLE_ARCHIVES, canonical_arxiv_id, normalize_doi  # noqa: E402


def builtin(pdf: Path) -> tuple[list[str], set[str] | None]:
    return pdf_reference_strings(pdf.read_bytes()), None


def refextract_reader():
    from refextract import extract_references_from_file  # bench extra only

    def run(pdf: Path) -> tuple[list[str], set[str] | None]:
        with tempfile.TemporaryDirectory() as tmp:  # refextract rewrites the file it reads: give it a copy
            copy = Path(tmp) / pdf.name
            shutil.copyfile(pdf, copy)
            try:
                refs = extract_references_from_file(str(copy))
            except Exception:  # noqa: BLE001 - a crash on one PDF counts as nothing found
                return [], set()
        ids: set[str] = set()
        for ref in refs:
            ids |= {d for d in map(normalize_doi, ref.get("doi", [])) if d}
            for value in ref.get("reportnumber", []) + ref.get("url", []):
                value = value.strip()
                aid = canonical_arxiv_id(value.split()[0]) if value else None
                parts = value.replace(".", "-").split("-")
                if aid is None and len(parts) >= 2 and parts[0].lower() in OLD_STYLE_ARCHIVES and parts[-1].isdigit():
                    aid = canonical_arxiv_id(f"{parts[0]}/{parts[-1]}")
                if aid:
                    ids.add(aid)
        return [" ".join(ref.get("raw_ref", [])) for ref in refs], ids
    return run


def measure(reader, items) -> tuple[list[dict], float]:
    rows, total = [], 0.0
    for answer, text in items:
        started = time.perf_counter()
        refs, read = reader(answer.pdf)
        seconds = time.perf_counter() - started
        total += seconds
        rows.append({"pdf": answer.pdf.name, "set": answer.kind, "seconds": seconds,
                     **score(answer, refs, text, read)})
    return rows, total


def summary(name: str, rows: list[dict], seconds: float) -> str:
    found, printed = sum(r["found"] for r in rows), sum(r["printed"] for r in rows)
    exact = sum(r["exact"] for r in rows)
    ids_found, ids = sum(r["ids_found"] for r in rows), sum(r["ids"] for r in rows)
    invented = sum(len(r["invented"]) for r in rows)
    long_ = sum(len(r["too_long"]) for r in rows)
    rows_read = sum(r["count"] for r in rows)
    return (f"{name:11s} {len(rows):3d} PDFs  entries {found:5d}/{printed:<5d} ({100 * found / max(1, printed):5.1f} %, "
            f"{rows_read} rows)  exact {exact:3d}/{len(rows)} ({100 * exact / max(1, len(rows)):5.1f} %)  "
            f"printed ids {ids_found:4d}/{ids:<4d} ({100 * ids_found / max(1, ids):5.1f} %)  invented {invented:3d}  "
            f"over-long {long_:3d}  {seconds / max(1, len(rows)):.2f} s/PDF")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-refextract", action="store_true")
    parser.add_argument("--sets", default="hand,source,peers")
    parser.add_argument("--json", help="write every PDF's figures here")
    parser.add_argument("--floors", help="write the built-in reader's figures per PDF here, as the floors "
                                         "tests/test_pdf_corpus.py holds it to (tests/fixtures/pdf_floors.json)")
    args = parser.parse_args()
    items = [(a, pdf_text(a.pdf)) for a in answers(tuple(args.sets.split(","))) if a.pdf.is_file()]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {len(items)} PDFs")
    readers = {"pdf_text": builtin}
    if not args.no_refextract:
        readers["refextract"] = refextract_reader()
    results = {}
    for name, reader in readers.items():
        rows, seconds = measure(reader, items)
        results[name] = rows
        for kind in args.sets.split(","):
            part = [r for r in rows if r["set"] == kind]
            if part:
                print(summary(f"{name}:{kind}", part, sum(r["seconds"] for r in part)))
        print(summary(name, rows, seconds))
    print("\nPDFs the built-in reader does not read exactly:")
    for r in results["pdf_text"]:
        if not r["exact"] or r["missed"] or r["invented"] or r["too_long"]:
            print(f"  {r['pdf']:42s} {r['count']:4d}/{r['printed']:<4d} ids {r['ids_found']}/{r['ids']} "
                  f"invented {r['invented'][:3]} longest {r['longest']}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.floors:
        floors = {r["pdf"]: {"found": r["found"], "count": r["count"], "ids_found": r["ids_found"],
                             "invented": len(r["invented"]), "too_long": len(r["too_long"])}
                  for r in results["pdf_text"]}
        Path(args.floors).write_text(json.dumps(floors, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
