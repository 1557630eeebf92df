"""The DOIs and arXiv ids an entry holds where its printed string does not show them: link
targets (revtex's ``\\href{\\doibase 10.1103/...}{text}``, ``\\Eprint{url}{text}``), ``url``,
``howpublished``, ``note``, ``doi`` and ``eprint`` fields (an old-style ``eprint = {0612412}``
rebuilt with its ``primaryClass``: ``astro-ph/0612412``), and printed forms the identifier grammar
does not read on its own (``ArXiv e-prints (0904.3302)``, IOP's ``Preprint 1404.4817``, an id
split by PDF spacing ``Preprint1402. 1517``). Each one missing from the string is written after
it (``doi:10.1103/...``, ``arXiv:0904.3302``), so the resolver reads it as it reads any string.
An id the entry's title names (``Comment on "..." [arXiv:2507.02757]``) is another paper's and is
not taken as the entry's."""
from __future__ import annotations

import re

from resolvers.identifiers.extract import check_arxiv_id, extract_identifiers

_LINK = re.compile(r"\\(?:href|url|doi|DOI|Eprint|eprint|arxiv|arXiv|bibinfo\s*\{(?:doi|eprint|url)\}|"
                   r"bibfield\s*\{(?:doi|eprint|url)\}|mn@doi\s*(?:\[[^\]]{0,200}\])?|mn@eprint\s*\{arXiv\})"
                   r"\s*\{([^{}]{4,400})\}")
_DOIBASE = re.compile(r"\\doibase\s*")
_OLD_NUMBER = re.compile(r"(?:[A-Za-z-]+(?:\.[A-Za-z]{2})?/)?(\d{7})(v\d+)?")
# a new-style or old-style id after a word saying e-print (PDF spacing may split it at the dot)
_PRINTED = re.compile(r"(?i)(?:arxiv|e-?prints?|preprints?)\s{0,3}[:,(\[]?\s{0,3}"
                      r"(\d{4}\.\s?\d{4,5}(?:v\d{1,3})?|[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?/\d{7}(?:v\d{1,3})?)(?!\d)")
_FIELDS = ("doi", "url", "howpublished", "note", "pages", "journal", "eid", "addendum", "pubstate")


def arxiv_eprint(eprint: str, primary_class: str = "") -> str | None:
    """A BibTeX/biblatex ``eprint`` as an arXiv id: ``1402.1517``, ``astro-ph/0612412``, and an
    old-style number without its archive (Mendeley, ADS) rebuilt from ``primaryClass``."""
    value = re.sub(r"(?i)^\s*arxiv\s*:\s*", "", eprint.strip())
    ident, _ = check_arxiv_id(value)
    if ident is not None:
        return ident
    number = _OLD_NUMBER.fullmatch(value)
    archive = primary_class.strip()
    if number and archive:
        for candidate in (archive, archive.split(".")[0]):
            ident, _ = check_arxiv_id(f"{candidate}/{number.group(1)}")
            if ident is not None:
                return ident
    return None


def _from_fields(fields: dict[str, str]) -> tuple[list[str], list[str]]:
    """(DOIs, arXiv ids) of an entry's fields."""
    dois: list[str] = []
    arxiv: list[str] = []
    prefix = fields.get("archiveprefix", "arxiv").strip().lower()
    if fields.get("eprint") and prefix in ("arxiv", ""):
        ident = arxiv_eprint(fields["eprint"], fields.get("primaryclass", ""))
        arxiv += [ident] if ident else []
    for name in _FIELDS:
        if fields.get(name):
            found = extract_identifiers(("doi:" if name == "doi" else "") + fields[name])
            dois += found.dois
            arxiv += found.arxiv_ids
    return dois, arxiv


def _from_latex(latex: str) -> tuple[list[str], list[str]]:
    """(DOIs, arXiv ids) of the link targets and identifier macros of an entry's LaTeX."""
    dois: list[str] = []
    arxiv: list[str] = []
    for m in _LINK.finditer(_DOIBASE.sub("https://doi.org/", latex)):
        found = extract_identifiers(m.group(1))
        if not found.dois and not found.arxiv_ids and "eprint" in m.group(0).lower():
            found = extract_identifiers("arXiv:" + m.group(1))
        dois += found.dois
        arxiv += found.arxiv_ids
    return dois, arxiv


def _printed(raw: str) -> list[str]:
    """arXiv ids in printed forms the identifier grammar leaves (``e-prints (0904.3302)``)."""
    found = []
    for m in _PRINTED.finditer(raw):
        ident, _ = check_arxiv_id(re.sub(r"\s", "", m.group(1)))
        if ident is not None:
            found.append(ident)
    return found


def with_identifiers(raw: str, latex: str = "", fields: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """``raw`` with every DOI and arXiv id of the entry it does not show written after it, and
    the ids as fields (``doi``, ``arxiv``) for whoever reads fields."""
    dois, arxiv = _from_fields(fields or {})
    more = _from_latex(latex) if latex else ([], [])
    title = (fields or {}).get("title", "")  # a title naming a paper (a comment on it) names no id of the entry's
    dois, arxiv = dois + more[0], arxiv + more[1] + _printed(raw.replace(title, " ") if title else raw)
    if not dois and not arxiv:
        return raw, {}
    shown = extract_identifiers(raw)
    seen_dois, seen_arxiv = {d.lower() for d in shown.dois}, set(shown.arxiv_ids)
    tail = []
    for doi in dict.fromkeys(d.lower() for d in dois):
        if doi not in seen_dois:
            tail.append("doi:" + doi)
            seen_dois.add(doi)
    for ident in dict.fromkeys(arxiv):
        if ident not in seen_arxiv:
            tail.append("arXiv:" + ident)
            seen_arxiv.add(ident)
    found = {"doi": next(iter(dict.fromkeys(d.lower() for d in dois)), "") if dois else "",
             "arxiv": arxiv[0] if arxiv else ""}
    text = raw if not tail else (raw.rstrip() + (" " if raw.rstrip().endswith(".") else ". ") + ". ".join(tail))
    return text, {k: v for k, v in found.items() if v}
