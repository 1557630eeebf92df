"""Real bibliographies in every common BibTeX style. The corpus's BibTeX papers
(tests/fixtures/papers/corpus/) are formatted again by BibTeX itself with each style's ``.bst``:
the paper's own ``.bib`` files and the keys it cites go in, and the ``.bbl`` BibTeX writes is put in
the paper's tarball beside its ``.tex``, as an author who ran BibTeX would submit it. The paper is
then read by ``papers.read_paper`` and held to the ``.bbl`` itself, read by ``expected_ids.py``
(which imports nothing of the project): as many references as BibTeX printed entries, each
entry's printed DOIs and arXiv ids found on its reference, none invented, no LaTeX left.

So every style's way of printing (``\\bibinfo``, ``\\BibitemOpen``, ``\\doibase``, ``\\eprint``,
``\\natexlab``, ``\\urlprefix``, block and sentence punctuation, names, URLs) meets a few thousand
real entries, not the handful of papers written in it. Needs BibTeX and the styles (TeX Live's
``texlive-base``, ``texlive-latex-base`` and ``texlive-publishers``; ``.ci/run`` installs them where
missing); a style whose ``.bst`` is not found is skipped, saying so.

In the test suite each style reads a quarter of the papers (a different quarter per style, so every
paper meets several styles); ``python tests/test_bibtex_styles.py [STYLE ...]`` reads every paper in
every style and prints the table.
"""
from __future__ import annotations

import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "papers"
STYLE_FILES = Path(__file__).parent / "fixtures" / "bst"  # styles TeX Live lacks (PROVENANCE.md there)
sys.path.insert(0, str(FIXTURES))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import expected_ids  # noqa: E402
from paper_answers import assert_matches, compare, passes  # noqa: E402

from papers import read_paper  # noqa: E402

# plain BibTeX, natbib, REVTeX 4.0/4.1/4.2 and AIP, IEEE, ACM, Elsevier, AMS, AAS, MNRAS, Nature,
# Springer LNCS, SPIE, Vancouver (medicine), AGU, Quantum, Kluwer, JASA (statistics)
STYLES = ["plain", "abbrv", "alpha", "unsrt", "ieeetr", "acm", "siam", "apalike",
          "plainnat", "abbrvnat", "unsrtnat",
          "apsrev", "apsrev4-1", "apsrev4-2", "aipnum4-2",
          "IEEEtran", "IEEEtranN", "ACM-Reference-Format", "elsarticle-num", "elsarticle-harv",
          "amsplain", "aasjournal", "mnras", "naturemag", "splncs04", "spiebib", "vancouver", "agu",
          "quantum", "klunamed", "jasa"]
SHARE = 4  # in the suite, each style reads one paper in SHARE
_BIBLIOGRAPHY = re.compile(r"\\bibliography\s*\{([^}]+)\}")


# the .bib-only papers that BibTeX (not biber) formats, and the keys each cites in citation order
CITED = {name: answer["keys"] for name, answer in
         sorted(json.loads((FIXTURES / "corpus.json").read_text(encoding="utf-8")).items())
         if not name.startswith("_") and answer["kind"] == "bib" and "biblatex" not in answer["style"]}
PAPERS = list(CITED)


def style_file(style: str) -> str | None:
    """Where BibTeX finds the style's ``.bst`` (this repository's, then TeX's), or None."""
    if (STYLE_FILES / f"{style}.bst").is_file():
        return str(STYLE_FILES / f"{style}.bst")
    if shutil.which("kpsewhich") is None:
        return None
    found = subprocess.run(["kpsewhich", f"{style}.bst"], capture_output=True, text=True).stdout.strip()
    return found or None


def run_bibtex(files: dict[str, str], cited: list[str], style: str) -> str | None:
    """The ``.bbl`` BibTeX writes for ``cited`` (in citation order) from the paper's databases, or
    None where BibTeX dies before finishing it (BibTeX 0.99d's own memory faults on some entries of
    thousands of authors under apsrev4-1/4-2 leave a cut file no author could submit)."""
    tex = expected_ids.expand_inputs(files, expected_ids.main_tex(files))
    databases = [Path(name.strip()).name.removesuffix(".bib")
                 for m in _BIBLIOGRAPHY.finditer(tex) for name in m.group(1).split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, text in files.items():
            if name.endswith(".bib"):
                (folder / Path(name).name).write_text(text, encoding="utf-8")
        aux = "\\relax\n" + "".join(f"\\citation{{{key}}}\n" for key in cited)
        (folder / "paper.aux").write_text(aux + f"\\bibstyle{{{style}}}\n\\bibdata{{{','.join(databases)}}}\n",
                                          encoding="utf-8")
        done = subprocess.run(["bibtex", "-terse", "paper"], cwd=folder, capture_output=True, timeout=120,
                              env={**os.environ, "BSTINPUTS": f"{STYLE_FILES}:"})
        bbl = folder / "paper.bbl"
        text = bbl.read_text(encoding="utf-8", errors="replace") if bbl.is_file() else ""
        return text if 0 <= done.returncode < 3 and "\\end{thebibliography}" in text else None


def with_bbl(files: dict[str, str], bbl: str) -> bytes:
    """The paper's files and the ``.bbl`` named after its main ``.tex``, as a tarball."""
    members = {**files, str(Path(expected_ids.main_tex(files)).with_suffix(".bbl")): bbl}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, text in sorted(members.items()):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@functools.cache
def paper_files(name: str) -> dict[str, str]:
    return expected_ids.members((FIXTURES / "corpus" / name).read_bytes())


@functools.cache
def title_ids(name: str) -> dict[str, set[str]]:
    """Per lowercased key, the DOIs and arXiv ids an entry's own title names (a comment on another
    paper): printed, but not the entry's, so neither wanted nor counted as invented."""
    out: dict[str, set[str]] = {}
    for member, text in paper_files(name).items():
        if member.endswith(".bib"):
            for key, fields in expected_ids.bib_entries(text):
                title = fields.get("title", "")
                found = set(expected_ids.dois_in(title)) | set(expected_ids.arxiv_in(title))
                if found:
                    out.setdefault(key.lower(), set()).update(found)
    return out


def measure(name: str, style: str) -> dict | None:
    """Read the paper with its bibliography formatted by ``style``, against that ``.bbl`` (None when
    BibTeX could not write it)."""
    files = paper_files(name)
    bbl = run_bibtex(files, CITED[name], style)
    if bbl is None:
        return None
    items = expected_ids.bibitems(bbl)
    refs = read_paper(name, with_bbl(files, bbl)).references
    in_titles = title_ids(name)
    wanted = [tuple([i for i in found if i not in in_titles.get(key.lower(), set())] for found in
                    expected_ids.ids_of_bibitem(body)) for key, body in items]
    got = compare(refs, [key for key, _ in items], wanted, len(items),
                  optional={key: in_titles.get(key.lower(), set()) for key, _ in items})
    got["printed"] = len(items)
    return got


@pytest.mark.skipif(shutil.which("bibtex") is None, reason="BibTeX is not installed (texlive-binaries)")
@pytest.mark.parametrize("style", STYLES)
def test_a_real_bibliography_formatted_by_bibtex_in_the_style_reads_as_printed(style):
    if style_file(style) is None:
        pytest.skip(f"{style}.bst is not installed")
    share = [name for n, name in enumerate(PAPERS) if (n + STYLES.index(style)) % SHARE == 0]
    results = {name: measure(name, style) for name in share}
    assert sum(got is not None for got in results.values()) >= 0.8 * len(share), "BibTeX failed on most papers"
    for name, got in results.items():
        if got is None:
            continue
        assert got["printed"] > 0, f"{name}: BibTeX printed nothing in {style}"
        try:
            assert_matches(got)
        except AssertionError as failure:
            raise AssertionError(f"{name} in {style}: {failure}") from None


def _table(styles: list[str]) -> None:
    entries = dois = arxiv = 0
    for style in styles:
        if style_file(style) is None:
            print(f"{style:22s} not installed")
            continue
        measured = {name: measure(name, style) for name in PAPERS}
        failed = [name for name, r in measured.items() if r is None]
        results = [r for r in measured.values() if r is not None]
        ok = sum(passes(r) for r in results)
        printed = sum(r["printed"] for r in results)
        found = [sum(r[kind][0] for r in results) for kind in ("doi", "arxiv")]
        wanted = [sum(r[kind][1] for r in results) for kind in ("doi", "arxiv")]
        entries, dois, arxiv = entries + printed, dois + wanted[0], arxiv + wanted[1]
        print(f"{style:22s} papers {ok:3d}/{len(results)}  entries {printed:5d}  DOIs {found[0]:4d}/{wanted[0]:<4d} "
              f"arXiv {found[1]:4d}/{wanted[1]:<4d} invented {sum(len(r['invented']) for r in results):3d} "
              f"LaTeX {sum(len(r['latex']) for r in results):3d}"
              + (f"  (BibTeX died on {', '.join(failed)})" if failed else ""))
        for name, r in measured.items():
            if r is not None and not passes(r):
                print(f"    {name}: {r['count']}/{r['printed']} missing {r['missing'][:3]} dash {r['dash'][:2]} invented "
                      f"{r['invented'][:3]} LaTeX {r['latex'][:2]}")
    print(f"{len(styles)} styles x {len(PAPERS)} papers: {entries:,} entries, {dois:,} printed DOIs, "
          f"{arxiv:,} printed arXiv ids")


if __name__ == "__main__":
    _table(sys.argv[1:] or STYLES)
