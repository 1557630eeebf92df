"""papers/: one paper in, its references out, for every form a paper comes in, and every bad
input a reject naming file, member and reason (the run goes on)."""
from __future__ import annotations

import gzip

import pytest
from archives import tar_bytes

from papers.names import citing_paper_from_name
from papers.paper_model import PaperLimits
from papers.reader import read_paper, read_tree
from resolvers.model import Reason
from resolvers.parsing.quality import parse_uncertain_reason

MAIN = rb"""\documentclass{article}
\begin{document}
See \cite{a,b}. % \input{commented}
\input{sec1}
\bibliography{refs}
\end{document}
"""
BBL = rb"""\begin{thebibliography}{10}
\providecommand{\natexlab}[1]{#1}
\bibitem[{M{\"u}ller et~al.(2001)}]{a}
H.~M\"uller, \newblock \emph{On things}, \newblock Phys. Rev. D \textbf{12} (2001) 1--10.
\bibitem{b} J. Doe, A title here, arXiv:2001.00001 (2020).
\end{thebibliography}
"""
BIB = rb"""@article{b, author={Doe, J.}, title={A title here}, journal={PRD}, year=2020}
@article{a, author={M\"uller, H.}, title={On things}, journal={Phys. Rev. D}, volume=12, pages={1--10}, year=2001}
@misc{unused, title={Never cited}}
"""


@pytest.mark.parametrize("name, expected", [
    ("2501.00254v1.tar.gz", "2501.00254"), ("hep-th_9901001.tar.gz", "hep-th/9901001"),
    ("hep-th9901001", "hep-th/9901001"), ("papers/0704.0001.tex", "0704.0001"),
    ("math.GT_0309136v2.tgz", "math/0309136"), ("arXiv:1706.03762", "1706.03762"),
    ("2501.00254v1.ltx", "2501.00254"), ("0704.0001.latex", "0704.0001"), ("astro-ph_0703999.tar", "astro-ph/0703999"),
])
def test_an_arxiv_style_name_gives_the_citing_paper(name, expected):
    assert citing_paper_from_name(name) == (expected, "")


@pytest.mark.parametrize("name", ["paper.tar.gz", "main.tex", "1234.5678.tar.gz", "2501.0025.tgz", "foo_9901001",
                                  # dates and numbers arXiv never issued: new style began in 0704, old
                                  # style ran 9108-0703, numbers start at 1
                                  "0601.1234.tar.gz", "0704.0000.tgz", "hep-th_0801001.tar.gz", "hep-th_9001001.tgz",
                                  "math.gt_0309136.tgz", "math.G_0309136.tgz"])
def test_a_name_that_gives_no_id_says_why(name):
    ident, why = citing_paper_from_name(name)
    assert ident is None and "arXiv id" in why


def test_a_tarball_with_bbl_and_bib_reads_the_bbl():
    paper = read_paper("2501.00254v1.tar.gz", tar_bytes({"ms.tex": MAIN, "sec1.tex": b"Intro.", "ms.bbl": BBL, "refs.bib": BIB}))
    assert (paper.citing_paper, paper.form) == ("2501.00254", "tar")
    assert [(r.order, r.key, r.member, r.source) for r in paper.references] == \
        [(1, "a", "ms.bbl", "arxiv_source"), (2, "b", "ms.bbl", "arxiv_source")]
    assert paper.references[0].raw == "H. Müller, On things, Phys. Rev. D 12 (2001) 1–10."
    assert "ms.bbl" in paper.rule and paper.rejects == []


def test_a_bib_only_tree_keeps_cited_entries_in_citation_order():
    paper = read_paper("2501.00254.tar", tar_bytes({"ms.tex": MAIN, "sec1.tex": b"", "refs.bib": BIB}, gz=False))
    assert [r.key for r in paper.references] == ["a", "b"]
    assert paper.references[0].raw == "H. Müller. On things. Phys. Rev. D, 12:1–10, 2001."
    assert paper.references[0].fields["journal"] == "Phys. Rev. D"


def test_inline_thebibliography_through_input_wins():
    main = MAIN.replace(rb"\bibliography{refs}", rb"\input{ms.bbl}")
    paper = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": main, "sec1.tex": b"", "ms.bbl": BBL, "refs.bib": BIB}))
    assert [(r.key, r.member, r.line) for r in paper.references] == [("a", "ms.bbl", 3), ("b", "ms.bbl", 5)]
    assert "thebibliography" in paper.rule


def test_a_single_gzipped_tex_is_an_eprint():
    tex = b"\\documentclass{x}\\begin{document}\\begin{thebibliography}{1}\\bibitem{k} A. B, A title, 2001\n" \
          b"\\end{thebibliography}\\end{document}"
    paper = read_paper("hep-th9901001.gz", gzip.compress(tex))
    assert (paper.form, paper.citing_paper) == ("gzip_tex", "hep-th/9901001")
    assert [(r.raw, r.source, r.kind) for r in paper.references] == [("A. B, A title, 2001", "arxiv_source", "tex")]


def test_plain_bbl_bib_and_tex_files():
    assert [r.source for r in read_paper("2501.00254.bbl", BBL).references] == ["bbl", "bbl"]
    bib = read_paper("2501.00254.bib", BIB).references
    assert [(r.key, r.source) for r in bib] == [("b", "bib"), ("a", "bib"), ("unused", "bib")]
    tex = read_paper("x.tex", MAIN.replace(rb"\bibliography{refs}", BBL), citing_paper="p1")
    assert (tex.citing_paper, [r.source for r in tex.references]) == ("p1", ["tex", "tex"])


def test_a_bib_entry_of_bst_words_is_parse_uncertain():
    (ref,) = read_paper("x.bib", b"@misc{x, note={write newline}}", citing_paper="p").references
    assert ref.raw != "@misc{x, note={write newline}}"
    assert parse_uncertain_reason(ref.raw) is Reason.BST_ARTEFACT


def test_a_folder_is_read_as_a_tree():
    paper = read_tree("papers/2501.00254", {"ms.tex": MAIN, "sec1.tex": b"", "ms.bbl": BBL})
    assert (paper.citing_paper, paper.form, len(paper.references)) == ("2501.00254", "folder", 2)
    assert paper.references[0].source == "bbl"


def codes(paper):
    return [(r.member, r.code) for r in paper.rejects]


def test_a_truncated_archive_is_one_reject():
    data = tar_bytes({"ms.tex": MAIN, "ms.bbl": BBL * 50})
    paper = read_paper("2501.00254.tar.gz", data[: len(data) // 2])
    assert paper.references == [] and codes(paper) == [(None, "corrupt_archive")]


def test_a_corrupt_plain_tar_is_one_reject():
    data = bytearray(tar_bytes({"ms.tex": MAIN, "ms.bbl": BBL}, gz=False))
    data[600:1200] = b"\xff" * 600
    paper = read_paper("2501.00254.tar", bytes(data[:1100]))
    assert paper.references == [] and [c for _, c in codes(paper)] == ["corrupt_archive"]


def test_an_archive_bomb_is_stopped_by_the_limits():
    limits = PaperLimits(max_total_bytes=1 << 20, max_members=50, max_member_bytes=1 << 16)
    big = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": MAIN, "fig.eps": b"\0" * (2 << 20)}), limits)
    assert codes(big) == [(None, "too_large")]
    many = read_paper("2501.00254.tar.gz", tar_bytes({f"f{i}.tex": b"" for i in range(60)}), limits)
    assert codes(many) == [(None, "too_many_members")]
    member = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": MAIN, "ms.bbl": BBL + b"%" * (1 << 16)}), limits)
    assert ("ms.bbl", "member_too_large") in codes(member)
    gz = read_paper("2501.00254.gz", gzip.compress(b"\0" * (2 << 20)), limits)
    assert codes(gz) == [(None, "too_large")]
    tex = read_paper("2501.00254.gz", gzip.compress(b"%" * (1 << 17)), limits)
    assert codes(tex) == [(None, "member_too_large")]


def test_an_input_loop_is_a_reject_and_the_rest_is_read():
    files = {"ms.tex": MAIN.replace(rb"\bibliography{refs}", rb"\input{ms.bbl}"), "sec1.tex": b"\\input{sec2}",
             "sec2.tex": b"\\include{sec1}", "ms.bbl": BBL}
    paper = read_paper("2501.00254.tar.gz", tar_bytes(files))
    assert len(paper.references) == 2
    (loop,) = paper.rejects
    assert (loop.member, loop.code) == ("sec2.tex", "input_loop") and "sec1.tex -> sec2.tex -> sec1.tex" in loop.reason


def test_deep_inputs_stop_at_the_depth_limit():
    files = {"ms.tex": b"\\documentclass{x}\\input{d1}", **{f"d{i}.tex": f"\\input{{d{i + 1}}}".encode() for i in range(1, 30)},
             "d30.tex": BBL}
    paper = read_paper("2501.00254.tar.gz", tar_bytes(files), PaperLimits(max_input_depth=5))
    assert [r.code for r in paper.rejects] == ["input_too_deep", "no_bibliography"]


def test_unsafe_member_names_are_rejected_never_used():
    files = {"../evil.bbl": BBL, "/abs/x.bib": BIB, "ok/../../up.tex": MAIN, "ms.tex": MAIN, "sec1.tex": b"", "ms.bbl": BBL}
    paper = read_paper("2501.00254.tar.gz", tar_bytes(files))
    assert len(paper.references) == 2
    assert sorted(codes(paper)) == [("../evil.bbl", "unsafe_member_name"), ("/abs/x.bib", "unsafe_member_name"),
                                    ("ok/../../up.tex", "unsafe_member_name")]


def test_binary_junk_named_tex_is_a_reject():
    paper = read_paper("2501.00254.tex", bytes(range(256)) * 40)
    assert codes(paper) == [("2501.00254.tex", "not_text")]
    junk = read_paper("2501.00254.tar.gz", tar_bytes({"ms.tex": bytes(range(256)) * 40, "x.bbl": BBL}))
    assert ("ms.tex", "not_text") in codes(junk) and len(junk.references) == 2


def test_a_name_without_id_is_a_reject_not_a_guess():
    paper = read_paper("paper.tar.gz", tar_bytes({"x.bbl": BBL}))
    assert paper.citing_paper is None and codes(paper) == [(None, "no_citing_paper")]


PAPER_TEX = (b"\\documentclass{article}\\begin{document}See \\cite{a,b}.\\bibliographystyle{plain}"
             b"\\bibliography{refs}\\end{document}")
REFS_BIB = (b"@article{a, author={A. Author}, title={First}, journal={J. Tests}, year={2001}, doi={10.1000/one}}\n"
            b"@article{b, author={B. Writer}, title={Second}, journal={J. Tests}, year={2002}}\n")


def test_a_tarball_of_a_paper_and_its_supplement_reads_the_papers_list():
    """Two top-level documents, each with its own \\documentclass and \\bibliography: the
    supplement (first by name, citing nothing of its own) does not hide the paper's list."""
    supplement = (b"\\documentclass{article}\\begin{document}Supplementary figures.\\bibliography{refs}"
                  b"\\end{document}")
    paper = read_paper("2501.00254.tar.gz", tar_bytes({"SI.tex": supplement, "main.tex": PAPER_TEX,
                                                      "refs.bib": REFS_BIB}))
    assert [r.key for r in paper.references] == ["a", "b"] and not paper.rejects
    notes = (b"\\documentclass{article}\\begin{document}Notes for the talk.\\bibliography{refs}\\end{document}")
    paper = read_paper("2501.00254.tar.gz", tar_bytes({"a_notes.tex": notes, "b_paper.tex": PAPER_TEX,
                                                      "refs.bib": REFS_BIB}))
    assert [r.key for r in paper.references] == ["a", "b"] and not paper.rejects
    assert "a_notes.tex gives no list" in paper.rule
