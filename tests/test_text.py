"""One text folding (resolvers/parsing/text.py) for parser, verifier, index and nightly re-runs."""
from __future__ import annotations

import gzip
import json
import re
import unicodedata
from pathlib import Path

import pyarrow as pa

from citeledger.index import terms as index_terms
from citeledger.nightly import rerun_selection
from resolvers.candidates import retrieval as candidates
from resolvers.model import Work
from resolvers.parsing import fields as parsing
from resolvers.parsing import text
from resolvers.verification import agreement, verify

SOURCES = Path(__file__).resolve().parent.parent / "data" / "sources"
AWKWARD = ["Müller–Schrödinger: ﬁbre Æther", "Łódź straße œuvre", "İstanbul ﬂow", "naïve  Bayes,  2nd ed.",
           "Ångström-scale 3D imaging", "", "q-deformed Yang–Baxter", "Éléments d'analyse"]


def _titles() -> list[str]:
    with gzip.open(SOURCES / "glutton_works.jsonl.gz", "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(3000), fh)]
    return [r.get("title") or "" for r in rows] + AWKWARD


def test_every_layer_uses_the_one_folding():
    assert parsing.fold is text.fold and parsing.norm_text is text.norm_text
    assert candidates.index_tokens is text.index_tokens and candidates.STOPWORDS is text.STOPWORDS
    assert agreement.normalise_text is text.normalise_text
    assert verify.fold is text.fold and index_terms.norm_tokens_arrow is text.norm_tokens_arrow
    assert rerun_selection.rerun_tokens is text.rerun_tokens


# The forms as first written, with regular expressions; ``text`` computes them faster (ASCII and
# no-line-break shortcuts) and must give the same strings.
_HYPHEN_BREAK, _SPACE, _NON_ALNUM = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*([a-z])"), re.compile(r"\s+"), re.compile(r"[^a-z0-9]+")
SPACES = ["Endo-\nscopic  sphincter", "a\u00a0b\u3000c\u2028d", "x\x1cy\x1f z", " \t lead\r\n", "co-\n  operate",
          "ﬁ\u00ad\nber", "A–B (2001): C.D., 3–4", "\u0301e", "Ω-κ 12 ½"]


def test_fast_forms_equal_the_regular_expression_forms():
    for s in [*_titles(), *AWKWARD, *SPACES]:
        cleaned = _SPACE.sub(" ", _HYPHEN_BREAK.sub(r"\1\2", unicodedata.normalize("NFKC", s))).strip()
        assert text.clean_raw(s) == cleaned, s
        assert text.norm_text(s) == _NON_ALNUM.sub(" ", text.fold(s)).strip(), s
        assert text.compact(s) == _NON_ALNUM.sub("", text.fold(s)), s


def test_arrow_folding_agrees_with_python_on_catalog_titles():
    titles = _titles()
    folded = text.fold_arrow(pa.array(titles, pa.string())).to_pylist()
    assert folded == [text.fold(t) for t in titles]
    assert text.norm_arrow(pa.array(folded)).to_pylist() == [text.norm_text(t) for t in titles]


def test_index_tokens_are_the_same_on_both_sides():
    """The catalog's index (Arrow) and the query (Python) must cut words the same way."""
    titles = _titles()
    lists = text.tokens_arrow(pa.array(titles, pa.string())).to_pylist()
    for title, toks in zip(titles, lists):
        arrow_side = [t for t in dict.fromkeys(toks)
                      if len(t) >= text.INDEX_TOKEN_MIN_CHARS and t not in text.STOPWORDS]
        assert arrow_side == text.index_tokens(title), title
    from_norm = text.norm_tokens_arrow(text.norm_arrow(text.fold_arrow(pa.array(titles, pa.string())))).to_pylist()
    assert [[t for t in toks if t] for toks in from_norm] == [[t for t in toks if t] for toks in lists]


def test_cutoffs_keep_their_purposes():
    words = "qt of 3d gan bert deep net"
    assert text.index_tokens(words) == ["qt", "3d", "gan", "bert", "deep", "net"]
    assert text.rerun_tokens(words) == {"gan", "bert", "deep", "net"}
    assert text.content_words(words) == {"bert", "deep"}
    assert verify.work_forms(Work(work_id="w", title="t", venue="J. of Bio Eng")).venue_tokens == ("bio", "eng")


def test_cut_title_test_searched_from_the_end_is_the_whole_search():
    """``verify.title_cut_short`` starts its search near the end; ``\\b`` and ``^`` see the whole title."""
    ends = ["", " ", "\n", " \n ", "\t\t   "]
    heads = ["Courtship behavior in", "The histamine H", "Barking foxes,", "Dynamic complexation of β", "Effect of (",
             "x of", "xfrom", "A", "1a", "_a", "é", "Deep learning", "Cells AN", "a-", "Sur l'île"]
    for title in [h + e for h in heads for e in ends] + _titles():
        assert verify.title_cut_short(title) == bool(verify.TRUNCATED_END.search(title)), title
