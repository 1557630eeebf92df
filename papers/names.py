"""The citing paper's arXiv id from a file or folder name, or why the name gives none: a name is
read, never guessed from (``paper.tar.gz`` gives no id). Whether the id is well formed is the
resolvers' one rule (``resolvers.identifiers.extract.check_arxiv_id``), so a name gives an id exactly
when arXiv could have issued it."""
from __future__ import annotations

import re

from papers.suffixes import PAPER_SUFFIXES
from resolvers.identifiers.extract import check_arxiv_id

# ``arXiv:``/``arxiv_``/``arxiv-`` before the id; an old-style id's "/" written "_" or left out
_PREFIX = re.compile(r"arxiv[:_-]?", re.IGNORECASE)
_OLD_IN_NAME = re.compile(r"([A-Za-z]+(?:-[A-Za-z]+)?(?:\.[A-Za-z]{2})?)[_/]?(\d{7}(?:v\d+)?)")


def strip_suffix(name: str) -> str:
    """``2501.00254v1.tar.gz`` -> ``2501.00254v1``."""
    lowered = name.lower()
    for suffix in PAPER_SUFFIXES:
        if lowered.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def citing_paper_from_name(name: str) -> tuple[str | None, str]:
    """(arXiv id without version, "") or (None, why not). ``name`` may be a path: its last part
    is read. ``hep-th_9901001`` and ``hep-th9901001`` name ``hep-th/9901001``."""
    base = strip_suffix(re.split(r"[\\/]", name.rstrip("/\\"))[-1])
    text = base[m.end():] if (m := _PREFIX.match(base)) else base
    if old := _OLD_IN_NAME.fullmatch(text):
        text = f"{old.group(1)}/{old.group(2)}"
    ident, why = check_arxiv_id(text)
    if ident is not None:
        return ident, ""
    looks_like_id = re.fullmatch(r"[\d.v]+", text) is not None or old is not None
    return None, (f"{base!r} is not a well-formed arXiv id ({why})" if looks_like_id else
                  f"the name {base!r} gives no arXiv id (like 2501.00254v1.tar.gz or hep-th_9901001.tar.gz)") \
        + "; pass --citing-paper ID"
