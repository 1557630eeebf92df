"""A BibTeX entry's fields rendered as one reference string, in the order a reference list
shows them: ``Authors. Title. Venue, Volume(Number):Pages, Year. doi:D. arXiv:E. Note.``"""
from __future__ import annotations

import re

from papers.bibliography.idents import arxiv_eprint
from papers.latex_text import latex_to_text

_VENUE_FIELDS = ("journal", "journaltitle", "booktitle", "school", "institution", "organization",
                 "publisher", "howpublished")


def _name(name: str) -> str:
    """``Last, First`` -> ``First Last``; ``others`` -> ``et al.``"""
    name = name.strip()
    if name.lower() == "others":
        return "et al."
    parts = [p.strip() for p in _split_top(name, ",")]
    if len(parts) == 2:
        return f"{parts[1]} {parts[0]}".strip()
    if len(parts) == 3:  # Last, Jr, First
        return f"{parts[2]} {parts[0]} {parts[1]}".strip()
    return name


_SEPARATORS = {sep: re.compile(r"[{}]|" + re.escape(sep)) for sep in (",", " and ")}


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` (``,`` or `` and ``) outside braces."""
    if "{" not in text:
        return text.split(sep)
    parts, depth, start = [], 0, 0
    for m in _SEPARATORS[sep].finditer(text):
        found = m.group()
        if found == "{":
            depth += 1
        elif found == "}":
            depth -= 1
        elif depth == 0:
            parts.append(text[start:m.start()])
            start = m.end()
    return parts + [text[start:]]


def authors(value: str) -> str:
    names = [_name(n) for n in _split_top(re.sub(r"\s+", " ", value), " and ") if n.strip()]
    if len(names) > 1 and names[-1] == "et al.":
        return ", ".join(names[:-1]) + " et al."
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else ""


# the fields a reference shows and a parser can use; others (abstract, keywords, file...) are left
KEPT_FIELDS = frozenset({"author", "editor", "title", "booktitle", "journal", "journaltitle", "school", "institution",
                         "organization", "publisher", "howpublished", "volume", "number", "pages", "year", "date",
                         "month", "doi", "eprint", "archiveprefix", "primaryclass", "url", "note", "edition",
                         "series", "chapter", "address", "isbn", "issn", "type"})


# fields BibTeX hands to ``\url`` or prints as they are: a ``%`` or ``~`` in them is the URL's
LITERAL_FIELDS = frozenset({"url", "doi", "eprint"})
_LITERAL_ESCAPES = re.compile(r"\\([_%&#~$])|\\url\s*|[{}]")


def fields_text(fields: dict[str, str]) -> dict[str, str]:
    """Each kept field's LaTeX as text (what the parser is given beside the string); a URL,
    DOI or e-print as written, its LaTeX escapes undone."""
    return {k: (_LITERAL_ESCAPES.sub(lambda m: m.group(1) or "", v).strip() if k in LITERAL_FIELDS
                else latex_to_text(v))
            for k, v in fields.items() if k in KEPT_FIELDS and v and v.strip()}


def render(fields: dict[str, str], text: dict[str, str] | None = None) -> str:
    """The entry as a reference string; LaTeX turned to text, piece by piece."""
    text = fields_text(fields) if text is None else text
    pieces = []
    who = fields.get("author") or fields.get("editor")
    if who:
        pieces.append(latex_to_text(authors(who)))
    if "title" in text:
        pieces.append(text["title"])
    venue = next((text[f] for f in _VENUE_FIELDS if f in text), "")
    numbers = text.get("volume", "") + (f"({text['number']})" if "number" in text else "")
    if "pages" in text:
        numbers += (":" if numbers else "pp. ") + text["pages"]
    place = ", ".join(p for p in (venue, numbers, text.get("year") or text.get("date", "")) if p)
    if place:
        pieces.append(place)
    if "doi" in text:
        pieces.append("doi:" + text["doi"].removeprefix("https://doi.org/"))
    if "eprint" in text:
        pieces.append(_eprint(text))
    elif "url" in text and "doi" not in text:
        pieces.append(text["url"])
    if "note" in text:
        pieces.append(text["note"])
    return ". ".join(p.rstrip(". ") for p in pieces if p.strip(". ")) + ("." if pieces else "")


def _eprint(text: dict[str, str]) -> str:
    """``arXiv:ID`` (an old-style number rebuilt with its class), else the e-print as given
    after its archive's name (``HAL: hal-0123``)."""
    archive = text.get("archiveprefix", "").strip()
    if archive.lower() in ("arxiv", ""):
        ident = arxiv_eprint(text["eprint"], text.get("primaryclass", ""))
        if ident is not None:
            return "arXiv:" + ident
        return "arXiv:" + text["eprint"]
    return f"{archive}: {text['eprint']}"


# BibTeX styles that keep citation order; every other style sorts (plain, abbrv, alpha, the
# natbib and AAS author-year styles, jss, mnras, ...)
UNSORTED_STYLES = {"unsrt", "unsrtnat", "unsrturl", "ieeetr", "ieeetran", "ieeetranN".lower(), "ieeetranm",
                   "apsrev", "apsrev4-1", "apsrev4-2", "apsrmp", "apsrmp4-1", "apsrmp4-2", "nature", "naturemag",
                   "science", "sciencemag", "pnas", "achemso", "elsarticle-num", "elsarticle-num-names",
                   "model1-num-names", "unsrtabbrv", "abbrvunsrt", "vancouver", "ama", "revtex", "h-physrev", "jhep",
                   "utphys", "iopart-num", "spmpsci", "spphys", "aipnum4-1", "aipnum4-2", "rsc", "angew", "plos2015",
                   "bmc-mathphys", "ws-ijmpa", "ws-ijmpd", "ws-mpla", "ptephy", "jcappub", "spiebib"}
# style families named for keeping citation order (``unsrt85``, ``apsrev4-2``, ``elsarticle-num``);
# IEEEtranS and IEEEtranSN are the sorting IEEE styles
_UNSORTED_FAMILY = re.compile(r"unsrt|^apsr|-num(?:-names)?$")


def keeps_citation_order(style: str) -> bool:
    """Whether a BibTeX style lists entries in citation order (else it sorts them)."""
    name = style.strip().lower()
    return name in UNSORTED_STYLES or _UNSORTED_FAMILY.search(name) is not None


_ARTICLE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)
_NOT_WORD = re.compile(r"[^\w\s]")


def _last_first(name: str) -> str:
    parts = [p.strip() for p in _split_top(name, ",")]
    if len(parts) >= 2:
        return f"{parts[0]} {parts[-1]}"
    words = name.split()
    return " ".join(words[-1:] + words[:-1])


def sort_key(fields: dict[str, str], text: dict[str, str]) -> tuple[str, str, str]:
    """What sorting BibTeX styles order by, approximately: authors (last names first), year,
    title without its leading article, all folded to letters, digits and spaces. ``text`` is
    ``fields_text(fields)``."""
    who = fields.get("author") or fields.get("editor") or fields.get("key") or fields.get("organization") or ""
    names = "   ".join(_last_first(n) for n in _split_top(re.sub(r"\s+", " ", who), " and "))

    def fold(value: str) -> str:
        return re.sub(r"\s+", " ", _NOT_WORD.sub("", value)).strip().lower()

    return fold(latex_to_text(names)), fold(text.get("year", "")), fold(_ARTICLE.sub("", text.get("title", "")))
