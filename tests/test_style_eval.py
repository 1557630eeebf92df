"""The style-robustness evaluation's own parts: renderings, seeded degradations,
scoring. The benchmark itself (benchmarks/bench_styles.py) prints figures; these check that
what it measures is what it says."""
import random

import pytest

from citeledger.evaluation import styles as style_eval
from resolvers.model import Reason, Status, Verdict, Work
from resolvers.parsing.text import clean_raw

WORK = Work("doi:10.1016/j.physletb.2012.08.020", doi="10.1016/j.physletb.2012.08.020",
            title="Observation of a new particle in the search for the Standard Model Higgs boson",
            authors=("Georges Aad", "T. Abajyan", "B. Abbott"), year=2012, venue="Physics Letters B", volume="716",
            first_page="1")


def item(**kw):
    return style_eval.csl_item(WORK, kw.get("title", WORK.title), kw.get("authors", WORK.authors), kw.get("et_al", False))


def test_plain_bbl_follows_plain_bst_field_order():
    assert style_eval.plain_bbl(item()) == ("Georges Aad, T. Abajyan, and B. Abbott. Observation of a new particle in "
                                            "the search for the standard model higgs boson. Physics Letters B, 716:1, "
                                            "2012.")
    assert style_eval.plain_bbl(item(authors=WORK.authors[:1], et_al=True)).startswith("Georges Aad et al.. ")


def test_physics_bbl_prints_no_title():
    assert style_eval.physics_bbl(item()) == "G. Aad et al., Physics Letters B 716, 1 (2012)."


def test_rendered_data_carry_no_identifier():
    assert not {"DOI", "URL", "arxiv"} & set(item())


def test_degradations_are_seeded_and_pdf_damage_is_what_clean_raw_undoes():
    text = style_eval.plain_bbl(item())
    broken = style_eval.pdf_breaks(text, random.Random(3))
    assert broken == style_eval.pdf_breaks(text, random.Random(3)) and "\n" in broken
    assert clean_raw(broken).split() == text.split()
    noisy = style_eval.ocr_noise(text, random.Random(3), rate=0.2)
    assert noisy != text and "716:1, 2012." in noisy  # letters confused, the printed numbers kept
    assert sorted(style_eval.scramble(WORK.title, random.Random(1)).split()) == sorted(WORK.title.split())


def test_title_less_renderings_only_of_works_with_a_locator():
    no_page = Work("doi:10.1/x", doi="10.1/x", title="A title of some length here", authors=("A. B",),
                   venue="J. Things", volume="3")
    out = style_eval.variants("bbl-physics-no-titles", no_page, style_eval.Renderer(), style_eval.DEGRADATIONS, 1)
    assert out == {}
    out = style_eval.variants("bibtex-plain", no_page, style_eval.Renderer(), style_eval.DEGRADATIONS, 1)
    assert "no_title" not in out and "clean" in out


def test_a_csl_style_renders_the_work():
    pytest.importorskip("citeproc")
    text = style_eval.Renderer().render("apa", item())
    assert "Physics Letters B" in text and "Aad" in text and "716" in text


def test_a_link_to_another_record_of_the_work_is_correct():
    preprint = Work("arxiv:1207.7214", doi=WORK.doi, arxiv_id="1207.7214")
    other = Work("doi:10.1/other", doi="10.1/other")
    cells = style_eval.score([("apa", "clean", WORK, "s1"), ("apa", "clean", WORK, "s2"), ("apa", "clean", WORK, "s3")],
                             [Verdict(Status.VERIFIED_FUZZY, Reason.FUZZY_MATCH, preprint),
                              Verdict(Status.VERIFIED_FUZZY, Reason.FUZZY_MATCH, other),
                              Verdict(Status.UNRESOLVED, Reason.NO_CANDIDATES)])
    cell = cells[("apa", "clean")]
    assert (cell.n, cell.links, cell.correct) == (3, 2, 1)
    assert cell.wrong_examples[0]["linked"] == "doi:10.1/other"


def test_a_small_style_run_resolves_the_catalogs_own_works(fixture_catalog):
    pytest.importorskip("citeproc")
    result = style_eval.run(fixture_catalog, per_source=2, styles=("apa", "bibtex-plain"),
                            degradations=("clean", "pdf_breaks"))
    cells = result["cells"]
    assert result["works"] >= 2 and set(cells) <= {(s, d) for s in ("apa", "bibtex-plain")
                                                   for d in ("clean", "pdf_breaks")}
    assert all(c.links == c.correct for c in cells.values())  # no wrong link
    assert sum(c.correct for c in cells.values()) > 0
    assert "apa" in "\n".join(style_eval.report_lines(result))


def test_eval_without_gold_or_styles_is_a_usage_error(capsys):
    from citeledger.cli.entry import main

    assert main(["eval"]) == 2
    assert "--styles" in capsys.readouterr().err
