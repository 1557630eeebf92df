"""The citing paper's arXiv id from a file or folder name, or why the name gives none: a name is
read, never guessed from (``paper.tar.gz`` gives no id)."""
from __future__ import annotations

import re

_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".gz", ".tex", ".bbl", ".bib", ".pdf", ".zip")
_NEW = re.compile(r"(?:arxiv[:_-]?)?(\d{2}(?:0[1-9]|1[0-2])\.\d{4,5})(v\d+)?", re.IGNORECASE)
# old style: archive[.SUBJECT] then 7 digits, with "/" written as "_" or left out
_OLD = re.compile(r"(?:arxiv[:_-]?)?([a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?)[_/]?(\d{2}(?:0[1-9]|1[0-2])\d{3})(v\d+)?",
                  re.IGNORECASE)


def strip_suffix(name: str) -> str:
    """``2501.00254v1.tar.gz`` -> ``2501.00254v1``."""
    lowered = name.lower()
    for suffix in _SUFFIXES:
        if lowered.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def citing_paper_from_name(name: str) -> tuple[str | None, str]:
    """(arXiv id without version, "") or (None, why not). ``name`` may be a path: its last part
    is read. New ids (``YYMM.NNNN[N]``) need a five-digit number from 1501 on, four before."""
    base = strip_suffix(re.split(r"[\\/]", name.rstrip("/\\"))[-1])
    m = _NEW.fullmatch(base)
    if m:
        ident = m.group(1)
        five = len(ident.split(".")[1]) == 5
        if five == (ident[:4] >= "1501"):
            return ident, ""
        return None, f"{base!r} is not a well-formed arXiv id (a {'five' if five else 'four'}-digit number " \
                     f"is not used in {ident[:4]})"
    m = _OLD.fullmatch(base)
    if m and m.group(1).split(".")[0].lower() in OLD_ARCHIVES:
        archive = m.group(1).lower() if "." not in m.group(1) else \
            m.group(1).split(".")[0].lower() + "." + m.group(1).split(".")[1].upper()
        return f"{archive}/{m.group(2)}", ""
    return None, (f"the name {base!r} gives no arXiv id (like 2501.00254v1.tar.gz or hep-th_9901001.tar.gz); "
                  "pass --citing-paper ID")


OLD_ARCHIVES = frozenset("""acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg
comp-gas cond-mat cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin nucl-ex
nucl-th patt-sol physics plasm-ph q-alg q-bio quant-ph solv-int supr-con""".split())
