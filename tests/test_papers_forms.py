"""papers/: bibliographies read as the compiled paper shows them. Each BibTeX style's ``.bbl``,
biblatex's ``.bbl``, and a ``.bib`` with the entries a paper cites by any citation command;
identifiers wherever the entry keeps them; strings without LaTeX; author dashes filled; LaTeX
that multiplies stopped by the expansion budget."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from archives import tar_bytes

from papers.bibliography.render import keeps_citation_order
from papers.latex_text import latex_to_text
from papers.paper_model import PaperLimits
from papers.reader import read_paper
from resolvers.identifiers.extract import extract_identifiers

FORMS = Path(__file__).parent / "fixtures" / "paper_forms"
EXPECTED = {k: v for k, v in json.loads((FORMS / "expected.json").read_text()).items() if not k.startswith("_")}
LATEX_LEFT = re.compile(r"\\[A-Za-z@]+|@noop|@[a-z]+|[{}]|\$")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_style_reads_as_printed(name):
    paper = read_paper(name, (FORMS / name).read_bytes(), citing_paper="p")
    assert paper.rejects == []
    assert [[r.key, r.raw] for r in paper.references] == EXPECTED[name]
    assert [r.order for r in paper.references] == list(range(1, len(EXPECTED[name]) + 1))
    assert not [r.raw for r in paper.references if LATEX_LEFT.search(r.raw)]


def test_the_forms_cover_the_common_styles():
    assert {"aasjournal.bbl", "apsrev4-1.bbl", "biblatex-biber.bbl", "mnras.bbl", "ieeetran.bbl", "jhep.bbl",
            "amsplain.bbl", "acm.bbl", "elsarticle-num.bbl", "iopart-num.bbl", "spbasic.bbl", "nature.bbl",
            "plainnat-collaboration.bbl"} <= set(EXPECTED)


def refs(name: str) -> dict:
    return {r.key: r for r in read_paper(name, (FORMS / name).read_bytes(), citing_paper="p").references}


def ids(raw: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    found = extract_identifiers(raw)
    return found.dois, found.arxiv_ids


def test_identifiers_only_in_link_targets_are_written_into_the_string():
    rev = refs("apsrev4-1.bbl")
    assert ids(rev["rubin"].raw) == (("10.1086/182804",), ())  # \href{\doibase 10.1086/...}{journal}
    assert rev["rubin"].fields["doi"] == "10.1086/182804"
    mn = refs("mnras.bbl")
    assert ids(mn["Abbott2016"].raw)[0] == ("10.1103/physrevlett.116.061102",)  # \mn@doi[Phys. Rev. Lett.]{...}
    jhep = refs("jhep.bbl")
    assert ids(jhep["old"].raw) == (("10.1023/a:1026654312961",), ("hep-th/9711200",))


def test_a_citation_key_that_looks_like_an_identifier_is_not_the_entrys():
    """A key is never printed, so ``\\bibitem{doi:10.1137/...}`` names no DOI of its entry: it is the
    reference's ``key``, and neither the string nor the fields hold it (in a ``.bbl`` or a ``.bib``)."""
    key = "doi:10.1137/1.9780898719604"
    bbl = ("\\begin{thebibliography}{1}\n\\bibitem{" + key + "}\n{\\sc E.~Anderson}, {\\em LAPACK Users' Guide},"
           " SIAM, 1999.\n\\end{thebibliography}\n").encode()
    bib = ("@book{" + key + ", author={Anderson, E.}, title={LAPACK Users' Guide}, year=1999}\n").encode()
    tex = ("\\documentclass{article}\\begin{document}\\cite{" + key + "}\\bibliographystyle{plain}"
           "\\bibliography{refs}\\end{document}").encode()
    for paper in (read_paper("x.bbl", bbl, citing_paper="p"),
                  read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": tex, "refs.bib": bib}))):
        (ref,) = paper.references
        assert ref.key == key and ids(" ".join([ref.raw, *ref.fields.values()])) == ((), ())


def test_an_identifier_the_title_names_is_not_the_entrys():
    """A comment's title names the paper it comments on: that id is printed, never the entry's."""
    bib = (b'@article{c, author={Loeb, A.}, title={Comment on "Discovery" [arXiv:2507.02757]}, journal={RNAAS},'
           b" year=2025}\n@misc{d, author={Loeb, A.}, title={Reply to arXiv:2507.02757}, eprint={2507.05881}}\n")
    paper = bib_paper(rb"\cite{c,d}", style=b"unsrt", bib=bib)
    assert [(r.raw.count("2507.02757"), r.fields.get("arxiv")) for r in paper.references] == [(1, None),
                                                                                             (1, "2507.05881")]


@pytest.mark.parametrize("name, key, arxiv", [
    ("aasjournal.bbl", "hogg", "0904.3302"),  # ArXiv e-prints (0904.3302)
    ("iopart-num.bbl", "pre", "1404.4817"),  # (Preprint 1404.4817)
    ("iopart-num.bbl", "pdf", "1402.1517"),  # Preprint1402. 1517: split by PDF spacing
    ("biblatex-biber.bbl", "smith2010", "astro-ph/0612412"),  # eprint 0612412, eprintclass astro-ph
    ("biblatex-biber.bbl", "book1", "1402.1517"),  # only in the url field
])
def test_printed_and_field_arxiv_forms_are_read(name, key, arxiv):
    assert arxiv in ids(refs(name)[key].raw)[1]


def test_author_dashes_are_filled_from_the_entry_before():
    aas = refs("aasjournal.bbl")["bovy2012b"]
    assert aas.raw.startswith("Bovy, J., Rix, H.-W., & Hogg, D. W. 2012b, ApJ, 751")
    assert aas.fields["as_printed"].startswith("—. 2012b, ApJ")
    ams = refs("amsplain.bbl")["BK2"]
    assert ams.raw.startswith("W. Barth and M. Kollross, More cominuscule varieties")


def test_an_author_year_dash_takes_the_names_without_the_year_however_long_the_list():
    names = ", ".join(f"{{Author{n}}}, A.~B." for n in range(60))  # a collaboration: ~1,000 characters
    bbl = (r"\begin{thebibliography}{3}" "\n"
           rf"\bibitem[\protect\citename{{{{Author0}} et~al., }}2015{{\natexlab{{a}}}}]{{a}}" "\n"
           f"{names}, and {{Last}}, Z. (2015{{\\natexlab{{a}}}}).\n"
           r"\newblock \enquote{{The first paper}.}" "\n" r"\newblock {\em J. Stat.\/}, 1, 1." "\n"
           r"\bibitem[\protect\citename{{Author0} et~al., }2015{\natexlab{b}}]{b}" "\n"
           r"--- (2015{\natexlab{b}})." "\n" r"\newblock \enquote{{The second paper}.}" "\n"
           r"\bibitem[\protect\citename{Solo, }????]{c}" "\n" r"{Solo}, H. (????)." "\n"
           r"\newblock \enquote{{Undated}.}" "\n"
           r"\bibitem[\protect\citename{Solo, }2019]{d}" "\n" r"--- (2019)." "\n"
           r"\newblock \enquote{{Dated}.}" "\n" r"\end{thebibliography}" "\n")
    found = {r.key: r for r in read_paper("p.tar", tar_bytes({"ms.tex": b"x", "ms.bbl": bbl.encode()})).references}
    assert found["b"].raw.startswith("Author0, A. B., Author1, A. B.,")
    assert found["b"].raw.split("Last, Z.")[1].startswith(" (2015b). The second paper")
    assert found["d"].raw.startswith("Solo, H. (2019). Dated")


def test_math_is_kept_readable():
    assert "at √s=13 TeV." in refs("plainnat-collaboration.bbl")["smith01"].raw
    assert "On the γ-ray sky" in refs("biblatex-biber.bbl")["smith2010"].raw


def test_a_natbib_label_listing_hundreds_of_authors_stays_out_of_the_string():
    lofar = refs("plainnat-collaboration.bbl")["lofar"]
    assert lofar.raw.startswith("M. P. van Haarlem, M. W. Wise, A. W. Gunst, et al. LOFAR")


def test_revtex_bibinfo_gives_fields_for_the_parser():
    rubin = refs("apsrev4-1.bbl")["rubin"]
    assert rubin.fields["author"] == "Rubin, V. C. and Thonnard, N. and Ford, Jr., W. K."
    assert (rubin.fields["journal"], rubin.fields["volume"], rubin.fields["year"]) == ("Astrophys. J.", "225", "1978")


BIB = rb"""@article{mend, author = {Smith, A and Jones, B}, title = {{Dark matter halos}}, journal = {MNRAS},
 year = {2007}, eprint = {0612412}, primaryClass = {astro-ph}, archivePrefix = {arXiv}}
@misc{urlonly, author = {Doe, J.}, title = {Some code}, howpublished = {\url{https://arxiv.org/abs/1402.1517}},
 year = 2014}
@article{noteonly, author = {Roe, R.}, title = {T}, journal = {ApJ}, year = 2015, note = {arXiv:1501.00001},
 doi = {10.1086/123456}, url = {https://arxiv.org/abs/1501.00001}}
@article{ads, author = {{van Haarlem}, M.~P. and {Wise}, M.~W.}, title = "{LOFAR}", journal = {\aap}, year = 2013,
 volume = 556, pages = {A2}, doi = {10.1051/0004-6361/201220873}, eprint = {1305.3550}}
@article{wrap, author = {Wrap, W.}, title = {Wrapped}, journal = {J}, year = 2001}
@article{dead, author = {Dead, D.}, title = {Never}, journal = {J}, year = 2001}
"""


def bib_paper(body: bytes, preamble: bytes = b"", style: bytes = b"unsrtnat", bib: bytes = BIB):
    tex = (b"\\documentclass{article}\n" + preamble + b"\n\\begin{document}\n" + body +
           b"\n\\bibliographystyle{" + style + b"}\\bibliography{refs}\n\\end{document}\n")
    return read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": tex, "refs.bib": bib}))


@pytest.mark.parametrize("body, keys", [
    (rb"\textcite{mend} \parencite[see][p.~2]{urlonly}", ["mend", "urlonly"]),
    (rb"\autocite{ads} \footcite{mend} \smartcite{wrap} \supercite{noteonly}", ["ads", "mend", "wrap", "noteonly"]),
    (rb"\Citet*{wrap}, \citealp[e.g.][]{ads, mend} \citeauthor{noteonly}", ["wrap", "ads", "mend", "noteonly"]),
    (rb"\fullcite{urlonly} \Textcite{ads} \citeyear{mend}", ["urlonly", "ads", "mend"]),
    (rb"\cites(pre)(post)[a][b]{ads}[c][]{mend,wrap}", ["ads", "mend", "wrap"]),
    (rb"\cite{wrap} % \cite{dead}" + b"\n" + rb"\nocite{*}", ["wrap", "mend", "urlonly", "noteonly", "ads", "dead"]),
    (rb"\citetalias{ads} \citestyle{aa} \setcitestyle{round}", ["ads"]),
])
def test_every_citation_command_counts(body, keys):
    paper = bib_paper(body)
    assert [r.key for r in paper.references] == keys and paper.rejects == []


def test_citations_through_the_papers_own_macro_count():
    paper = bib_paper(rb"See \rf{wrap} and \rfs{x}{ads}.", rb"\newcommand{\rf}[1]{\citep{#1}}"
                      rb"\newcommand{\rfs}[2]{#1~\citet{#2}}")
    assert [r.key for r in paper.references] == ["wrap", "ads"]


def test_a_draft_whose_citations_are_all_commented_out_lists_nothing():
    paper = bib_paper(b"Text. %\\cite{mend}\n% \\citep{ads}\n")
    assert paper.references == []
    assert [r.code for r in paper.rejects] == ["no_citations"] and "refs.bib" in paper.rejects[0].reason


def test_bib_identifiers_from_eprint_url_howpublished_and_note():
    got = {r.key: ids(r.raw) for r in bib_paper(rb"\nocite{*}").references}
    assert got["mend"] == ((), ("astro-ph/0612412",))  # Mendeley's eprint + primaryClass
    assert got["urlonly"] == ((), ("1402.1517",))
    assert got["noteonly"] == (("10.1086/123456",), ("1501.00001",))
    assert got["ads"] == (("10.1051/0004-6361/201220873",), ("1305.3550",))
    assert got["wrap"] == ((), ())


def test_a_bib_entry_missing_only_its_closing_brace_is_listed_as_bibtex_lists_it():
    """BibTeX keeps the fields of an entry the next ``@`` interrupts and reports the fault; an entry
    whose value never closes is not read: both are rejects naming their line, under their key."""
    bib = (b'@article{a, title={First}, eprint="2211.06397", year = "2023"\n\n'
           b"@article{b, title={Second}, year=2001}\n@article{c, title={Open, year=2002\n@misc{d, title={Last}}\n")
    paper = bib_paper(rb"\cite{a,b,c,d}", style=b"unsrt", bib=bib)
    assert [(r.key, ids(r.raw)) for r in paper.references] == [("a", ((), ("2211.06397",))), ("b", ((), ())),
                                                               ("d", ((), ()))]
    assert [(r.code, r.line, r.reason.split(":")[0]) for r in paper.rejects] == [
        ("bibtex_unclosed", 1, "reference 1"), ("bad_bibtex", 4, "reference 3")]


def test_a_biblatex_bbl_wins_over_the_bib():
    main = rb"""\documentclass{article}\usepackage{biblatex}\addbibresource{refs.bib}
\begin{document}\textcite{smith2010} \parencite{book1}\printbibliography\end{document}"""
    paper = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": main, "ms.bbl": (FORMS / "biblatex-biber.bbl")
                                                       .read_bytes(), "refs.bib": BIB}))
    assert [(r.key, r.member) for r in paper.references] == [("smith2010", "ms.bbl"), ("book1", "ms.bbl")]
    assert "biblatex" in paper.rule and paper.rejects == []
    smith = paper.references[0]
    assert smith.fields["author"] == "Smith, John Paul and van Haarlem, M."
    assert (smith.fields["journal"], smith.fields["doi"]) == ("Phys. Rev. D", "10.1103/PhysRevD.82.012345")


def test_an_older_biblatex_name_list_is_read():
    bbl = (FORMS / "biblatex-biber.bbl").read_text()
    assert refs("biblatex-biber.bbl")["book1"].fields["author"] == "Doe, Jane"  # {{..}{Doe}{D.}{Jane}{J.}{}{}{}{}}
    assert "\\list{location}" in bbl


def test_an_unreadable_bbl_says_so_and_the_bib_is_read():
    main = b"\\documentclass{article}\\begin{document}\\cite{wrap}\\bibliography{refs}\\end{document}"
    paper = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": main, "ms.bbl": b"% empty\n", "refs.bib": BIB}))
    assert [r.key for r in paper.references] == ["wrap"]
    assert [(r.member, r.code) for r in paper.rejects] == [("ms.bbl", "bbl_unread")]


# --- LaTeX that multiplies: bounded, a reject, never a hang --------------------------------------

LIST = b"\\begin{thebibliography}{1}\\bibitem{a} A. B., A title, 2001.\\end{thebibliography}"


def fan_out(levels: int, copies: int = 2, leaf: bytes = LIST) -> bytes:
    """Files that each ``\\input`` the next ``copies`` times: ``copies ** levels`` leaves read."""
    files = {"ms.tex": b"\\documentclass{x}\\begin{document}\\input{f0}\\end{document}"}
    for i in range(levels):
        files[f"f{i}.tex"] = (f"\\input{{f{i + 1}}}" * copies).encode()
    files[f"f{levels}.tex"] = leaf
    return tar_bytes(files)


def test_an_input_fan_out_is_stopped_by_the_input_count():
    data = fan_out(15)
    assert len(data) < 1000
    paper = read_paper("2501.00254.tar.gz", data, PaperLimits(max_inputs=500))
    assert paper.references == []
    assert [r.code for r in paper.rejects] == ["expansion_budget"] and "papers.max_inputs" in paper.rejects[0].reason


def test_an_input_fan_out_of_big_files_is_stopped_by_the_characters_read():
    paper = read_paper("2501.00254.tar.gz", fan_out(6, leaf=b"x" * 20_000 + LIST),
                       PaperLimits(max_expanded_bytes=200_000))
    assert paper.references == []
    assert [r.code for r in paper.rejects] == ["expansion_budget"]
    assert "papers.max_expanded_bytes" in paper.rejects[0].reason


def test_a_small_fan_out_within_the_budget_is_read():
    paper = read_paper("2501.00254.tar.gz", fan_out(2, copies=1))
    assert [r.key for r in paper.references] == ["a"] and paper.rejects == []


def test_the_default_budget_stops_a_deep_fan_out():
    paper = read_paper("2501.00254.tar.gz", fan_out(16))
    assert paper.references == [] and [r.code for r in paper.rejects] == ["expansion_budget"]


def test_too_many_references_is_a_reject():
    bbl = b"\\begin{thebibliography}{9}" + b"".join(b"\\bibitem{k%d} A. B., T, 2001.\n" % i for i in range(30))
    paper = read_paper("x.bbl", bbl, PaperLimits(max_references=20), citing_paper="p")
    assert paper.references == [] and [r.code for r in paper.rejects] == ["too_many_references"]
    bib = b"".join(b"@misc{k%d, title={T}}\n" % i for i in range(30))
    paper = read_paper("x.bib", bib, PaperLimits(max_references=20), citing_paper="p")
    assert paper.references == [] and [r.code for r in paper.rejects] == ["too_many_references"]


def test_bibtex_strings_that_double_are_an_error_not_a_gigabyte():
    bib = '@string{s0 = "xxxxxxxxxxxxxxxx"}\n' + "".join(f"@string{{s{i + 1} = s{i} # s{i}}}\n" for i in range(40))
    paper = read_paper("x.bib", (bib + "@article{a, title = s40}\n").encode(), citing_paper="p")
    assert {r.code for r in paper.rejects} == {"bad_bibtex"} and "multiply" in paper.rejects[0].reason
    assert all(len(r.raw) < 1000 for r in paper.references)


def test_macros_that_multiply_in_entries_are_bounded():
    defs = "".join("\\newcommand{\\m%s}{%s}\n" % (chr(97 + i), ("\\m" + chr(98 + i)) * 30) for i in range(6))
    tex = (f"\\documentclass{{x}}\n{defs}\\newcommand{{\\mg}}{{xxxxxxxxxx}}\\begin{{document}}"
           "\\begin{thebibliography}{9}\\bibitem{a} \\ma\\ma\\ma\\end{thebibliography}\\end{document}")
    paper = read_paper("x.tex", tex.encode(), citing_paper="p")
    assert len(paper.references) == 1 and len(paper.references[0].raw) < 100_000
    assert [r.code for r in paper.rejects] == ["macro_expansion"]


# --- strings a reader would write ----------------------------------------------------------------

@pytest.mark.parametrize("field, shown", [
    (r"\${\textbackslash}texttt\{triceratops\}\$: {A} {Tool}", "triceratops: A Tool"),  # Zotero's escaped LaTeX
    (r"\{\vphantom\}{{JAX}}\vphantom\{\}: Composable {}P{}ython", "JAX: Composable Python"),  # protected capitals
    (r"Vander\{P\}las and Lewin &amp; van der Klis", "VanderPlas and Lewin & van der Klis"),  # HTML entity
    (r"$\sqrt{s}=13$~TeV and $^{12}$C", "√s=13 TeV and 12C"),
])
def test_a_bib_title_reads_as_a_reader_would_write_it(field, shown):
    (ref,) = read_paper("x.bib", ("@misc{a, title = {%s}}" % field).encode(), citing_paper="p").references
    assert ref.fields["title"] == shown


def test_a_url_keeps_its_percent_signs():
    bib = rb"@misc{a, title={T}, url={http://x.org/a%20b~c\_d}, howpublished={\url{http://y.org/a%20b}}}"
    (ref,) = read_paper("x.bib", bib, citing_paper="p").references
    assert ref.fields["url"] == "http://x.org/a%20b~c_d" and "http://y.org/a%20b" in ref.raw
    bbl = b"\\begin{thebibliography}{1}\\bibitem{a} A. B., T, 2001, \\url{http://x.org/a%20b}\n\\end{thebibliography}"
    assert read_paper("x.bbl", bbl, citing_paper="p").references[0].raw == "A. B., T, 2001, http://x.org/a%20b"


# --- biblatex with a .bib: the backend's rules ---------------------------------------------------

CASES = rb"""@article{Cai_2024, author={Cai, C.}, title={One}, journal={J}, year=2024}
@article{zed, author={Zed, Z.}, title={Two}, journal={J}, year=2001}
@article{abe, author={Abe, A.}, title={Three}, journal={J}, year=2002}
"""


def biblatex_paper(options: bytes, cites: bytes):
    tex = (b"\\documentclass{article}\\usepackage[" + options + b"]{biblatex}\\addbibresource{refs.bib}\n"
           b"\\begin{document}" + cites + b"\\printbibliography\\end{document}")
    return read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": tex, "refs.bib": CASES}))


def test_biber_matches_keys_exactly_and_bibtex_whatever_their_case():
    biber = biblatex_paper(b"backend=biber,style=nature", rb"\autocite{cai_2024,zed}")
    assert [r.key for r in biber.references] == ["zed"]
    assert [r.code for r in biber.rejects] == ["cited_key_missing"]
    bibtex = biblatex_paper(b"backend=bibtex,style=nature", rb"\autocite{cai_2024,zed} \cite{Cai_2024}")
    assert [r.key for r in bibtex.references] == ["cai_2024", "zed"] and bibtex.rejects == []


def test_bibtex_lists_an_entry_under_its_key_as_first_cited():
    """``\\citep{lin2020}`` of the entry ``Lin2020`` prints it as ``\\bibitem{lin2020}``: the key, and the
    identifiers found with it, are the cited spelling's; a later ``\\cite{LIN2020}`` is the same entry."""
    bib = b"@article{Lin2020, author={Lin, H.}, title={Carbon}, journal={ApJL}, year=2020, doi={10.3847/ab6bd9}}\n"
    tex = (b"\\documentclass{article}\\begin{document}\\citep{lin2020} \\cite{LIN2020}"
           b"\\bibliographystyle{plainnat}\\bibliography{refs}\\end{document}")
    paper = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": tex, "refs.bib": bib}))
    assert [(r.key, ids(r.raw)) for r in paper.references] == [("lin2020", (("10.3847/ab6bd9",), ()))]
    assert paper.rejects == []


def test_biblatex_prints_one_list_per_reference_section_it_prints():
    """Each ``refsection`` (or ``\\newrefsection``) with a ``\\printbibliography`` is a list of its own
    citations: a key cited in two is in both; text outside is section 0, printed only by its own
    command or ``\\bibbysection``."""
    cites = (rb"\cite{zed} \begin{refsection}\cite{abe,zed}\printbibliography\end{refsection} \cite{Cai_2024}"
             rb"\begin{refsection}\cite{Cai_2024}\end{refsection}\newrefsection\cite{zed}")
    paper = biblatex_paper(b"style=nature", cites)
    assert [(r.order, r.key) for r in paper.references] == [(1, "abe"), (2, "zed"), (3, "zed")]
    every = biblatex_paper(b"style=nature", cites.replace(rb"\printbibliography", b"") + rb"\bibbysection")
    assert [r.key for r in every.references] == ["zed", "Cai_2024", "abe", "zed", "Cai_2024", "zed"]
    many = rb"\newrefsection\cite{zed,abe}\printbibliography" * 5_000  # the lists together are bounded
    tex = (b"\\documentclass{article}\\usepackage{biblatex}\\addbibresource{refs.bib}\\begin{document}" + many +
           b"\\end{document}")
    bounded = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": tex, "refs.bib": CASES}),
                         PaperLimits(max_references=100))
    assert bounded.references == [] and [r.code for r in bounded.rejects] == ["too_many_references"]


def test_a_biblatex_bbl_lists_an_entry_once_per_reference_section():
    entry = "\\entry{{{}}}{{misc}}{{}}\n  \\field{{title}}{{{}}}\n\\endentry\n"
    bbl = ("\\refsection{0}\n\\datalist[entry]{nty/global//global/global}\n" + entry.format("a", "A") +
           entry.format("b", "B") + "\\enddatalist\n\\datalist[entry]{ydnt/global//global/global}\n" +
           entry.format("b", "B") + "\\enddatalist\n\\endrefsection\n\\refsection{1}\n" + entry.format("b", "B") +
           "\\endrefsection\n")
    paper = read_paper("x.bbl", bbl.encode(), citing_paper="p")
    assert [(r.order, r.key, r.raw) for r in paper.references] == [(1, "a", "A."), (2, "b", "B."), (3, "b", "B.")]


def test_a_biblatex_list_is_ordered_by_its_sorting():
    assert [r.key for r in biblatex_paper(b"style=nature", rb"\cite{zed,abe}").references] == ["zed", "abe"]
    assert [r.key for r in biblatex_paper(b"style=numeric", rb"\cite{zed,abe}").references] == ["abe", "zed"]
    assert [r.key for r in biblatex_paper(b"sorting=none", rb"\cite{zed,abe}").references] == ["zed", "abe"]


@pytest.mark.parametrize("files", [
    {"ms.tex": b"\\documentclass{x}" + b"\\newcommand{\\x}{" * 20_000 + b"\\begin{document}\\cite{a}\\bibliography{r}"
     b"\\end{document}", "r.bib": b"@misc{a, title={T}}"},
    {"ms.tex": b"\\documentclass{x}\\begin{document}" + b"\\cite[" * 20_000 + b"\\cite{a}\\bibliography{r}\\end{document}",
     "r.bib": b"@misc{a, title={T}}"},
    {"ms.bbl": b"\\begin{thebibliography}{9}\\bibitem{a}" + b"\\href{" * 20_000 + b"\\end{thebibliography}"},
    {"ms.bbl": b"\\entry{a}{article}{}\n" + b"\\field{title}{" * 20_000 + b"\n\\endentry"},
])
def test_unclosed_groups_by_the_thousand_are_read_once(files):
    paper = read_paper("2501.00254.tar.gz", tar_bytes(files))
    assert [r.key for r in paper.references] == ["a"]


def test_citations_parked_where_latex_never_typesets_them_do_not_count():
    body = (b"\\cite{wrap}\n\\iffalse \\cite{dead} \\ifnum1=1 \\cite{ads}\\fi \\cite{mend} \\fi\n"
            b"\\begin{comment}\n\\cite{urlonly}\n\\end{comment}\n\\cite{noteonly}")
    assert [r.key for r in bib_paper(body).references] == ["wrap", "noteonly"]


@pytest.mark.parametrize("latex, shown", [
    (r"$M_\odot$, $H_0$ and $z_{\rm phot}$ at $10^{-3}$", "M⊙, H0 and zphot at 10^-3"),
    (r"H$_2$O costs \$5_x, see \url{http://x.org/a_b}", "H2O costs $5_x, see http://x.org/a_b"),
])
def test_math_subscripts_read_as_letters(latex, shown):
    assert latex_to_text(latex) == shown


@pytest.mark.parametrize("latex", [r"values in Table~\ref{t:a}, \cref{fig1} and Eq.~\eqref{e} of this work",
                                   r"\begin{itemize}\item values in Table~\autoref{x}, \Cref{f} and Eq. \pageref{p} "
                                   r"of this work\end{itemize}"])
def test_a_cross_reference_drops_out_of_the_string(latex):
    """A cross-reference's number belongs to the compiled paper; a reference string (a footnote's
    text, an annotated entry) keeps the words around it, never the label or a placeholder."""
    shown = latex_to_text(latex)
    assert "ref" not in shown and "fig1" not in shown and "<" not in shown
    assert shown.replace("* ", "").split() == "values in Table , and Eq. of this work".split()


@pytest.mark.parametrize("style, keeps", [("unsrt", True), ("unsrt85", True), ("IEEEtran", True), ("IEEEtranS", False),
                                          ("apsrev4-2", True), ("elsarticle-num-names", True), ("plainnat", False),
                                          ("aasjournal", False), ("JHEP", True), ("mnras", False),
                                          ("spiebib", True)])
def test_which_styles_keep_citation_order(style, keeps):
    assert keeps_citation_order(style) is keeps


def test_the_expansion_budget_comes_from_the_configuration(tmp_path):
    from citeledger.config import load_config

    (tmp_path / "citeledger.toml").write_text("[papers]\nmax_inputs = 50\nmax_references = 100\n")
    config = load_config(env={"CITELEDGER_PAPERS_MAX_EXPANDED_BYTES": "65536"}, cwd=tmp_path)
    assert (config.papers.max_inputs, config.papers.max_references, config.papers.max_expanded_bytes) == (50, 100, 65536)
    paper = read_paper("2501.00254.tar.gz", fan_out(8), config.papers)
    assert [r.code for r in paper.rejects] == ["expansion_budget"]


def test_an_iffalse_that_is_a_value_or_never_ends_hides_nothing():
    preamble = b"\\newif\\ifdraft\n\\let\\ifdraft\\iffalse\n\\newcommand{\\hide}[1]{\\iffalse #1\\fi}"
    paper = bib_paper(b"\\ifdraft x\\fi \\cite{wrap} \\hide{\\cite{dead}} \\cite{ads}", preamble)
    assert [r.key for r in paper.references] == ["wrap", "ads"]
    assert [r.key for r in bib_paper(b"\\iffalse \\cite{wrap}").references] == ["wrap"]


# --- REVTeX's footnotes in the bibliography ------------------------------------------------------

NOTES_BIB = rb"""@article{a, author = {Ames, A.}, title = {First}, journal = {PRL}, year = 2001}
@article{b, author = {Bell, B.}, title = {Second}, journal = {PRB}, year = 2002}
@article{c, author = {Cole, C.}, title = {Third}, journal = {PRE}, year = 2003}
"""


def revtex_paper(body: bytes, cls: bytes = b"[aps,prl]{revtex4-2}", style: bytes = b""):
    tex = (b"\\documentclass" + cls + b"\n\\begin{document}\n" + body + b"\n" +
           (b"\\bibliographystyle{" + style + b"}" if style else b"") + b"\\bibliography{refs}\n\\end{document}\n")
    return read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": tex, "refs.bib": NOTES_BIB}))


def test_a_revtex_footnote_is_an_entry_where_it_stands():
    paper = revtex_paper(b"Text \\cite{a}, a tool\\footnote{See \\href{https://doi.org/10.1103/PhysRevB.1.2}"
                         b"{\\emph{the code}} and \\url{https://example.org/x_y}.} and \\cite{b}.", b"{revtex4-2}")
    assert [r.key for r in paper.references] == ["a", "Note1", "b"] and paper.rejects == []
    note = paper.references[1]
    assert (note.order, note.member, note.kind, note.line) == (2, "ms.tex", "tex", 3)
    assert note.raw.startswith("See the code and https://example.org/x_y.")
    assert ids(note.raw) == (("10.1103/physrevb.1.2",), ()) and note.fields["doi"] == "10.1103/physrevb.1.2"


@pytest.mark.parametrize("cls", [b"[aps,nofootinbib]{revtex4-2}", b"[rmp]{revtex4-1}", b"{article}",
                                 b"[aip,jor]{revtex4-2}"])
def test_no_footnote_entries_without_footinbib(cls):
    """``nofootinbib``, author-year mode (Rev. Mod. Phys., AIP's J. Rheol.) and other classes keep
    footnotes at the foot of the page."""
    paper = revtex_paper(b"Text \\cite{a}\\footnote{A note.} and \\cite{b}.", cls)
    assert [r.key for r in paper.references] == ["a", "b"]


def test_a_footnote_in_a_float_writes_no_note_and_the_counter_skips_it():
    paper = revtex_paper(b"\\begin{figure}\\caption{Plot\\footnote{Lost.}}\\end{figure}"
                         b"Text \\cite{a}\\footnote{Kept.}.")
    assert [(r.key, r.raw) for r in paper.references] == [("a", "A. Ames. First. PRL, 2001."), ("Note1", "Kept.")]


def test_a_footnotetext_is_printed_where_the_text_cites_its_note():
    """``\\footnotetext[n]`` writes Note n only; it is listed where ``\\cite{Noten}`` stands, and a
    text never cited is not listed."""
    paper = revtex_paper(b"\\footnotetext[1]{First text.}\\footnotetext[2]{Second text.}"
                         b"\\footnotetext[3]{Never cited.} Text \\cite{a,Note2}, then \\cite{note1,b}.")
    assert [(r.key, r.raw) for r in paper.references] == [
        ("a", "A. Ames. First. PRL, 2001."), ("Note2", "Second text."), ("note1", "First text."),
        ("b", "B. Bell. Second. PRB, 2002.")]


def test_footnote_marks_and_texts_number_as_the_class_numbers_them():
    paper = revtex_paper(b"One\\footnote{First.} two\\footnotemark{} \\footnotetext{Second.} "
                         b"three\\footnote[7]{Seventh.} four\\footnote{Third.}", b"[aip]{revtex4-1}")
    assert [(r.key, r.raw) for r in paper.references] == [("Note1", "First."), ("Note2", "Second."),
                                                          ("Note7", "Seventh."), ("Note3", "Third.")]


def test_citations_inside_a_note_come_after_the_texts_own():
    """BibTeX sees a note's citations when the bibliography prints it, after every citation of
    the text."""
    paper = revtex_paper(b"Text\\footnote{As in \\cite{c}.} and \\cite{a}, \\cite{b}.")
    assert [r.key for r in paper.references] == ["Note1", "a", "b", "c"]


def test_footnotes_as_entries_follow_a_sorting_style():
    paper = revtex_paper(b"\\cite{c}\\footnote{A note.} \\cite{a}.", style=b"plain")
    assert [r.key for r in paper.references] == ["a", "c", "Note1"]


def test_title_page_and_abstract_footnotes_write_no_note():
    paper = revtex_paper(b"\\title{T\\footnote{Dropped.}}\\begin{abstract}A\\footnote{Minipage.}\\end{abstract}"
                         b"\\maketitle Text \\cite{a}\\footnote{Kept.}.")
    assert [(r.key, r.raw) for r in paper.references] == [("a", "A. Ames. First. PRL, 2001."), ("Note1", "Kept.")]
