"""What a title's own words say: a notice ("Correction to: ...", "Retraction note") or a title cut
short where markup was dropped. Both the verifier and the identifier path's agreement check ask."""
from __future__ import annotations

import re

NOTICE_RE = re.compile(
    r"^\s*(?:\[?\s*)?(?:correction|corrigendum|corrigenda|erratum|errata|retraction|retracted|"
    r"expression of concern|notice of retraction|retraction note|reply|response|comment|"
    r"commentary on|discussion of|author correction|publisher correction|addendum|withdrawn|withdrawal)\b",
    re.I)
NOTICE_WORDS = re.compile(r"\b(?:correction|corrigend\w*|errat\w*|retract\w*|expression of concern|"
                          r"reply|response|comment\w*|discussion of|addendum|withdraw\w*)\b", re.I)

# A catalog title cut short where markup was dropped ("Courtship behavior in ", "The histamine H",
# "Barking foxes,", "Dynamic complexation of β", "Effect of oregano ("): ends on a function word,
# a separator, a lone letter, a non-ASCII symbol or a space. Such a title is also compared as a
# prefix of the string's title (``title_prefix``); it never lowers the title score.
TRUNCATED_PATTERN = (r"(?i)(?:\b(?:in|of|by|from|the|and|with|for|on|to|a|an|at|as|via)\s*|[,:;(/\-–]\s*|"
                      r"(?:^|[^a-z])[a-z]\s*|[^\x00-\x7f]\s*| )$")
TRUNCATED_END = re.compile(TRUNCATED_PATTERN)
_TRUNCATED_SPAN = 6  # characters a TRUNCATED_END match holds before its trailing white space (at most 4)


def title_cut_short(title: str) -> bool:
    """``TRUNCATED_END.search(title)``, searched from near the end: a match is a short word, mark
    or letter plus trailing white space, so it starts there, and a search from the start tries
    (and fails) at every character first (``\\b`` and ``^`` still see the whole string)."""
    return bool(TRUNCATED_END.search(title, max(0, len(title.rstrip()) - _TRUNCATED_SPAN)))
