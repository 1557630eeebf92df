"""Real bibliographies formatted by BibTeX in a journal's style, and typeset: the shared machinery
of ``test_bibtex_styles.py`` and ``benchmarks/bench_pdf_styles.py``.

The corpus's BibTeX papers (tests/fixtures/papers/corpus/) go through BibTeX with a style's
``.bst`` (the paper's own ``.bib`` files and the keys it cites in, the ``.bbl`` out); that ``.bbl``
is read as the paper's (``with_bbl``) or typeset by pdflatex in a plain ``article`` with natbib
(``typeset``: author-year or numbers as the style is meant for, hyperref's links, the AAS journal
macros), and the result is held to the ``.bbl`` read by ``expected_ids.py``, which imports nothing
of the project."""
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

FIXTURES = Path(__file__).parent / "fixtures" / "papers"
STYLE_FILES = Path(__file__).parent / "fixtures" / "bst"  # styles TeX Live lacks (PROVENANCE.md there)
sys.path.insert(0, str(FIXTURES))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import expected_ids  # noqa: E402
import pdf_corpus  # noqa: E402
from paper_answers import compare  # noqa: E402

from papers.pdf.read import pdf_reference_strings  # noqa: E402
from papers.reader import read_paper  # noqa: E402
from resolvers.identifiers.extract import extract_identifiers  # noqa: E402

# plain BibTeX, natbib, REVTeX 4.0/4.1/4.2 and AIP, IEEE, ACM, Elsevier, AMS, AAS, MNRAS, Nature,
# Springer LNCS, SPIE, Vancouver (medicine), AGU, Quantum, Kluwer, JASA (statistics), A&A
STYLES = ["plain", "abbrv", "alpha", "unsrt", "ieeetr", "acm", "siam", "apalike",
          "plainnat", "abbrvnat", "unsrtnat",
          "apsrev", "apsrev4-1", "apsrev4-2", "aipnum4-2",
          "IEEEtran", "IEEEtranN", "ACM-Reference-Format", "elsarticle-num", "elsarticle-harv",
          "amsplain", "aasjournal", "mnras", "naturemag", "splncs04", "spiebib", "vancouver", "agu",
          "quantum", "klunamed", "jasa", "aa"]


# the .bib-only papers that BibTeX (not biber) formats, and the keys each cites (in the answer's order)
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
    databases = [Path(name).name.removesuffix(".bib") for name in expected_ids.database_names(tex)]
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


# styles meant for author-year citations (natbib's authoryear); the others print numbers
AUTHOR_YEAR = {"plainnat", "abbrvnat", "apalike", "jasa", "aasjournal", "mnras", "elsarticle-harv", "klunamed", "agu",
               "aa"}
# journal macros the astronomy databases' entries use (\apj ...) and mnras.bst's \mn@doi, as the
# journals' classes define them
_JOURNALS = {"apj": "ApJ", "apjl": "ApJL", "apjs": "ApJS", "aj": "AJ", "mnras": "MNRAS", "aap": "A\\&A",
             "pasp": "PASP", "nat": "Nature", "araa": "ARA\\&A", "prd": "Phys. Rev. D", "prl": "Phys. Rev. Lett.",
             "physrep": "Phys. Rep.", "jcap": "JCAP", "aaps": "A\\&AS", "icarus": "Icarus", "procspie": "Proc. SPIE",
             "apss": "Ap\\&SS", "pasj": "PASJ", "pasa": "PASA", "aapr": "A\\&A Rev.", "cqg": "CQG",
             "prc": "Phys. Rev. C", "prb": "Phys. Rev. B", "pra": "Phys. Rev. A", "ssr": "Space Sci. Rev.",
             "memsai": "Mem. Soc. Astron. Italiana", "baas": "BAAS", "na": "New A", "nar": "New A Rev.",
             "jcp": "J. Chem. Phys.", "psj": "PSJ", "actaa": "AcA", "solphys": "Sol. Phys."}
_DOCUMENT = r"""\documentclass{article}
\usepackage[utf8]{inputenc}\usepackage[%s]{natbib}\usepackage{url}\usepackage{amsmath,amssymb}
\usepackage{hyperref}\providecommand{\doi}[1]{\href{https://doi.org/#1}{doi:~#1}}
\makeatletter\providecommand{\mn@doi}[1]{\href{https://doi.org/#1}{doi:\nolinkurl{#1}}}\makeatother
%s
\begin{document}
\section*{Introduction}
Text before the references.
\input{paper.bbl}
\end{document}
"""


def typeset(bbl: str, style: str) -> bytes | None:
    """The PDF pdflatex makes of the bibliography (twice, as natbib's numbers need), or None when
    pdflatex stops before the list's end (a macro of the entries no package here defines)."""
    macros = "\n".join(f"\\providecommand{{\\{k}}}{{{v}}}" for k, v in _JOURNALS.items())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "paper.bbl").write_text(bbl, encoding="utf-8")
        mode = "authoryear" if style in AUTHOR_YEAR else "numbers"
        (folder / "doc.tex").write_text(_DOCUMENT % (mode, macros), encoding="utf-8")
        for _ in range(2):
            subprocess.run(["pdflatex", "-interaction=batchmode", "-no-shell-escape", "doc.tex"], cwd=folder,
                           capture_output=True, timeout=300)
        log = (folder / "doc.log").read_text(encoding="utf-8", errors="replace") if (folder / "doc.log").is_file() else ""
        pdf = folder / "doc.pdf"
        if not pdf.is_file() or "Emergency stop" in log or "Fatal error" in log:
            return None
        return pdf.read_bytes()


def measure_pdf(name: str, style: str) -> dict | None:
    """The paper's bibliography in ``style`` typeset, read back by ``pdf_text``: entries found of
    those printed, identifiers read, and those read that no entry of the ``.bbl`` carries (an
    underscore of a DOI is a rule, not a glyph, in the default fonts: a DOI read without it
    counts as carried). None when BibTeX or pdflatex could not make the PDF."""
    bbl = run_bibtex(paper_files(name), CITED[name], style)
    pdf = typeset(bbl, style) if bbl is not None else None
    if bbl is None or pdf is None:
        return None
    items = expected_ids.bibitems(bbl)
    carried = set()
    for _, body in items:
        for found in expected_ids.ids_of_bibitem(body):
            carried.update(found)
            carried.update(i.replace("_", "") for i in found)
    carried |= {f"10.48550/arxiv.{i}" for i in carried}
    refs = pdf_reference_strings(pdf)
    read = [i for raw in refs for ids in [extract_identifiers(raw)] for i in (*ids.dois, *ids.arxiv_ids)]
    return {"found": len(refs), "printed": len(items), "read": len(read),
            "wrong": [i for i in read if i not in carried]}



# --- document classes ---------------------------------------------------------------------------
# The classes and modes journals, conferences and collaborations typeset with, each with the style
# its authors use: (the class line and its own packages, front matter, the ``.bst``, natbib's mode
# when the class does not load natbib itself). Each paper is set with body text in the class's
# columns before the list and an appendix after it, as a published paper is.
_ELS_FRONT = r"\begin{frontmatter}\title{A Study of the Literature}\author{A. Author}\end{frontmatter}"
_PLAIN_FRONT = r"\title{A Study of the Literature}\author{A. Author}\maketitle"
_ACM_FRONT = (r"\title{A Study of the Literature}\author{A. Author}\affiliation{\institution{University}"
              r"\city{City}\country{Country}}\begin{abstract}An abstract.\end{abstract}\maketitle")
_AAS_FRONT = (r"\title{A Study of the Literature}\author{A. Author}\affiliation{University, City, Country}"
              r"\begin{abstract}An abstract.\end{abstract}")
_APS_FRONT = (r"\title{A Study of the Literature}\author{A. Author}\affiliation{University, City, Country}"
              r"\begin{abstract}An abstract.\end{abstract}\maketitle")
CLASSES: dict[str, tuple[str, str, str, str]] = {
    "elsarticle-preprint-lineno": (r"\documentclass[preprint,12pt]{elsarticle}\usepackage{lineno}\linenumbers",
                                   _ELS_FRONT, "elsarticle-num", "numbers"),
    "elsarticle-5p": (r"\documentclass[5p]{elsarticle}", _ELS_FRONT, "elsarticle-num", "numbers"),
    "elsarticle-5p-harv": (r"\documentclass[5p,authoryear]{elsarticle}", _ELS_FRONT, "elsarticle-harv",
                           "authoryear"),
    "IEEEtran-conference": (r"\documentclass[conference]{IEEEtran}", _PLAIN_FRONT, "IEEEtran", "numbers"),
    "IEEEtran-journal": (r"\documentclass[journal]{IEEEtran}", _PLAIN_FRONT, "IEEEtran", "numbers"),
    "acmart-sigconf": (r"\documentclass[sigconf]{acmart}", _ACM_FRONT, "ACM-Reference-Format", "authoryear"),
    "acmart-acmsmall": (r"\documentclass[acmsmall]{acmart}", _ACM_FRONT, "ACM-Reference-Format", "authoryear"),
    "acmart-review": (r"\documentclass[acmsmall,review]{acmart}", _ACM_FRONT, "ACM-Reference-Format", "authoryear"),
    "llncs": (r"\documentclass{llncs}", _PLAIN_FRONT, "splncs04", "numbers"),
    "mnras": (r"\documentclass[usenatbib]{mnras}", _PLAIN_FRONT, "mnras", "authoryear"),
    "aastex631": (r"\documentclass{aastex631}", _AAS_FRONT, "aasjournal", "authoryear"),
    "aastex631-twocolumn": (r"\documentclass[twocolumn]{aastex631}", _AAS_FRONT, "aasjournal", "authoryear"),
    "revtex4-2-twocolumn": (r"\documentclass[aps,prd,twocolumn]{revtex4-2}", _APS_FRONT, "apsrev4-2", "numbers"),
    "revtex4-2-reprint": (r"\documentclass[aps,prl,reprint]{revtex4-2}", _APS_FRONT, "apsrev4-2", "numbers"),
    "report-thesis": (r"\documentclass[12pt,oneside]{report}", r"\title{A Thesis}\author{A. Author}\maketitle"
                      r"\tableofcontents", "plainnat", "authoryear"),
}
_SENTENCES = ("The measured rate depends on the sample and on the model chosen for it.",
              "We compare the two estimates over the whole range of the data and find them consistent.",
              "Each source is weighted by its uncertainty before the fit, as is usual in such work.",
              "The method is described in the previous section and its code is public.",
              "A larger sample would narrow the interval, which future surveys will provide.")
_PARAGRAPH = " ".join(_SENTENCES[(k * 3) % 5] for k in range(12))
_CLASS_DOCUMENT = r"""%(klass)s
\usepackage[utf8]{inputenc}%(fontenc)s\usepackage{url}\usepackage{amsmath,amssymb}
\makeatletter
\@ifpackageloaded{natbib}{}{\usepackage[%(mode)s]{natbib}}
\@ifpackageloaded{hyperref}{}{\usepackage{hyperref}}
\providecommand{\doi}[1]{\href{https://doi.org/#1}{doi:\nolinkurl{#1}}}
\providecommand{\mn@doi}[1]{\href{https://doi.org/#1}{doi:\nolinkurl{#1}}}
\makeatother
%(macros)s
\begin{document}
%(front)s
\%(section)s{Introduction}
%(body)s

%(body)s
\%(section)s{Results}
%(body)s
\input{paper.bbl}
\appendix
\%(section)s{Derivations}
%(body)s
\end{document}
"""


def typeset_class(bbl: str, klass: str) -> bytes | None:
    """The PDF pdflatex makes of a paper in the document class ``klass`` (``CLASSES``) whose list
    is ``bbl`` (three runs, as cross-references and natbib's labels need), or None when pdflatex
    stops before the end."""
    line, front, _, mode = CLASSES[klass]
    macros = "\n".join(f"\\providecommand{{\\{k}}}{{{v}}}" for k, v in _JOURNALS.items())
    section = "chapter" if "report" in line else "section"
    # T1 fonts as journals' templates load them (an underscore is a glyph, not OT1's rule), Latin
    # Modern's outlines (Debian's TeX Live has no cm-super: T1 Computer Modern would be bitmaps);
    # acmart sets its own fonts
    fontenc = "" if "acmart" in line else r"\usepackage[T1]{fontenc}\usepackage{lmodern}"
    text = _CLASS_DOCUMENT % {"klass": line, "fontenc": fontenc, "mode": mode, "macros": macros, "front": front,
                              "section": section, "body": _PARAGRAPH}
    return _pdflatex(text, {"paper.bbl": bbl}, runs=3)


_LOST_TEXT = ("Emergency stop", "Fatal error", "File ended while scanning", "Runaway argument",
              "Paragraph ended before", "TeX capacity exceeded")


def _pdflatex(document: str, files: dict[str, str], runs: int, between: list[str] | None = None) -> bytes | None:
    """Typeset ``document`` with ``files`` beside it (``between``: a command run after the first
    pass, such as biber); the PDF, or None when pdflatex stopped before the end or reported an
    error that swallows text (in batch mode it leaves the rest of the list unprinted)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        (folder / "doc.tex").write_text(document, encoding="utf-8")
        for n in range(runs):
            subprocess.run(["pdflatex", "-interaction=batchmode", "-no-shell-escape", "doc.tex"], cwd=folder,
                           capture_output=True, timeout=600)
            if n == 0 and between:
                subprocess.run(between, cwd=folder, capture_output=True, timeout=600)
        log = (folder / "doc.log").read_text(encoding="utf-8", errors="replace") if (folder / "doc.log").is_file() else ""
        pdf = folder / "doc.pdf"
        # an error that swallows text in batch mode drops the rest of a list from the page (an author
        # would mend it); others (a year that is no number) leave the entries printed
        if not pdf.is_file() or any(sign in log for sign in _LOST_TEXT):
            return None
        if between and (folder / "doc.bbl").is_file():
            files["doc.bbl"] = (folder / "doc.bbl").read_text(encoding="utf-8", errors="replace")
        return pdf.read_bytes()


def _score(pdf: bytes, items: list[tuple[str, tuple[list[str], list[str]]]], longest: int,
           in_titles: frozenset[str] = frozenset()) -> dict:
    """The reader's strings of ``pdf`` against the entries it prints (key, the DOIs and arXiv ids
    its source carries): entries found, identifiers read, those no entry carries (``wrong``), the
    carried ones the PDF's text shows (``ids``: a style may leave a DOI out or set it only as a
    link) and those of them no string carries (``missed``), and the longest string beside
    ``longest``, the longest entry's source (its LaTeX is longer than the printed text). An id an
    entry's own title names (``in_titles``: a comment on another paper) is printed, so not wrong."""
    refs = pdf_reference_strings(pdf)
    carried = set(in_titles)
    for _, found in items:
        for ids in found:
            carried.update(ids)
            carried.update(i.replace("_", "") for i in ids)
    carried |= {f"10.48550/arxiv.{i}" for i in carried}
    read = [i for raw in refs for ids in [extract_identifiers(raw)] for i in (*ids.dois, *ids.arxiv_ids)]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "doc.pdf").write_bytes(pdf)
        shown = pdf_corpus.pdf_text(Path(tmp) / "doc.pdf")
    printed = {i for _, found in items for ids in found for i in ids if i.lower() in shown}
    joined = " ".join(refs).lower()
    got = {i.lower() for i in read}
    wrong = [i for i in read if i not in carried]
    # the default OT1 fonts draw an underscore as a rule with no character in the text layer, so a
    # DOI '..._7' reads '... 7': the part before the gap is what the text shows, counted apart
    cut = [i for i in wrong if any(c.startswith(i + "_") for c in carried)]
    return {"found": len(refs), "printed": len(items), "read": len(read),
            "wrong": [i for i in wrong if i not in cut], "cut_underscore": cut,
            "ids": len(printed), "missed": sorted(i for i in printed if i.lower() not in got and i.lower() not in joined),
            "longest": max((len(r) for r in refs), default=0), "longest_source": longest}


def measure_class(name: str, klass: str) -> dict | None:
    """The paper's bibliography in the class's style typeset in the class and read back by
    ``pdf_text`` (as ``measure_pdf``, with the printed identifiers each entry carries)."""
    style = CLASSES[klass][2]
    bbl = run_bibtex(paper_files(name), CITED[name], style)
    pdf = typeset_class(bbl, klass) if bbl is not None else None
    if bbl is None or pdf is None:
        return None
    # an entry whose fields the style prints none of (a @misc of a note mnras.bst drops) is no entry
    bibitems = [(key, body) for key, body in expected_ids.bibitems(bbl)
                if re.search(r"[^\W_]", re.sub(r"\\[A-Za-z@]+", "", body))]
    items = [(key, expected_ids.ids_of_bibitem(body)) for key, body in bibitems]
    return _score(pdf, items, max(len(body) for _, body in bibitems), _in_titles(name))


# --- biblatex -----------------------------------------------------------------------------------
BIBLATEX_STYLES = ["numeric", "authoryear", "alphabetic", "apa"]
_BIBLATEX_DOCUMENT = r"""\documentclass{article}
\usepackage[utf8]{inputenc}\usepackage[T1]{fontenc}\usepackage{amsmath,amssymb}
\usepackage[american]{babel}\usepackage{csquotes}
\usepackage[backend=biber,style=%(style)s%(sorting)s]{biblatex}
\usepackage{hyperref}
%(macros)s
%(resources)s
\begin{document}
\title{A Study of the Literature}\author{A. Author}\maketitle
\section{Introduction}
%(body)s \nocite{%(keys)s}
\printbibliography
\end{document}
"""


def measure_biblatex(name: str, style: str) -> dict | None:
    """The paper's ``.bib`` files and cited keys through biber and biblatex's ``style``
    (``numeric`` in citation order), typeset and read back; the answer is biber's ``.bbl``."""
    files = paper_files(name)
    tex = expected_ids.expand_inputs(files, expected_ids.main_tex(files))
    bibs = {Path(n).name: text for n, text in files.items() if n.endswith(".bib")}
    wanted = [Path(n).name if Path(n).name.endswith(".bib") else Path(n).name + ".bib"
              for n in expected_ids.database_names(tex)]
    macros = "\n".join(f"\\providecommand{{\\{k}}}{{{v}}}" for k, v in _JOURNALS.items())
    document = _BIBLATEX_DOCUMENT % {
        "style": style, "sorting": ",sorting=none" if style == "numeric" else "", "macros": macros,
        "resources": "\n".join(f"\\addbibresource{{{b}}}" for b in wanted if b in bibs),
        "body": _PARAGRAPH, "keys": ",".join(CITED[name])}
    out = dict(bibs)
    pdf = _pdflatex(document, out, runs=3, between=["biber", "--quiet", "doc"])
    if pdf is None or "doc.bbl" not in out:
        return None
    entries = dict(expected_ids.biblatex_entries(out["doc.bbl"]))  # a key once, whatever lists hold it
    if not entries:
        return None
    items = [(key, expected_ids.ids_of_biblatex(body)) for key, body in entries.items()]
    return _score(pdf, items, max(len(body) for body in entries.values()), _in_titles(name))


def _in_titles(name: str) -> frozenset[str]:
    """Every id the paper's entries name in their own titles (``title_ids``)."""
    return frozenset(i for ids in title_ids(name).values() for i in ids)
