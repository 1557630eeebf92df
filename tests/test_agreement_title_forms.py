"""The agreement check's work-title forms, made once per title (``agreement._title_forms``): the
same as made each time, and the same agreement whichever way they were made."""
from __future__ import annotations

from resolvers.model import Work
from resolvers.parsing.lazy import lazy_parse
from resolvers.parsing.text import clean_raw, norm_text
from resolvers.verification import agreement

TITLES = ["Deep learning", "Über die Elektrodynamik bewegter Körper", "Attention is all you\nneed",
          "Photon- \nproduction at the LHC", "  ", "ﬁnite ﬁelds ß"]


def test_title_forms_are_those_made_each_time():
    for title in TITLES:
        clean = clean_raw(title)
        assert agreement._title_forms(title) == (clean, clean.lower(), norm_text(clean) if clean else "")
        assert agreement._title_forms(title) == agreement._title_forms.__wrapped__(title)


def test_agreement_is_the_same_with_forms_remembered():
    work = Work(work_id="doi:10.1/x", doi="10.1/x", title="Attention is all you need", year=2017,
                authors=("Vaswani",), venue="NeurIPS")
    raw = "A. Vaswani. Attention is all you need. NeurIPS, 2017. doi:10.1/x"
    agreement._title_forms.cache_clear()
    first = agreement.check_agreement(raw, lazy_parse(raw), work)
    again = agreement.check_agreement(raw, lazy_parse(raw), work)
    assert first == again and not first.contradicts and agreement._title_forms.cache_info().hits >= 1
