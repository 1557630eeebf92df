"""The notice step's shortcut for works whose records carry no events of their own
(``notice_check._plain_extras``): the same events and sources as ``_work_extras``, or no answer."""
from __future__ import annotations

import itertools
import json
from typing import Any

from citeledger.run.notice_check import _plain_extras, _work_extras
from resolvers.notices.standing import NoticeIndex


def test_plain_extras_agree_with_work_extras_or_step_aside():
    made: dict[Any, Any] = {}
    index = NoticeIndex()  # (answered works have no other DOI whose events it would give)
    relations = json.dumps([{"type": "is-retracted-by", "id": "10.1/r", "id-type": "doi"}])
    shapes = itertools.product([None, "10.1/x"], [None, "1234.56789"], [None, ["works"], ["crossref", "openalex"],
                                                                       ["openalex"], ["crossref"]],
                               [None, relations], [None, False, True], [None, [], ["10.1/x"], ["10.1/alt"]])
    answered = 0
    for doi, arxiv_id, sources, rel, withdrawn, alt_dois in shapes:
        work = {"doi": doi, "arxiv_id": arxiv_id, "sources": sources, "relations": rel, "withdrawn": withdrawn,
                "alt_dois": alt_dois}
        plain = _plain_extras(work, made)
        if plain is not None:
            answered += 1
            assert plain == _work_extras(work, index), work
        else:  # only works whose records may carry events are left to _work_extras
            assert rel or withdrawn or alt_dois
    assert answered == 100  # every shape without relations, withdrawal or another DOI
