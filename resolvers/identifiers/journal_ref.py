"""Journal references: ``Phys. Lett. B 716 (2012) 1-29`` -> venue, volume, first page, year.

Two uses. The catalog reads an arXiv record's ``journal-ref`` (``Phys.Rev.D76:013009,2007``,
``JHEP 0905:012,2009``) into the work's venue, volume and first page. The resolution chain reads
the (venue, volume, first page) locators a reference string may carry (``G. Aad et al., Phys.
Lett. B 716, 1 (2012)``) and looks them up by ``venue_key``, so a title-less physics reference
finds its work.

``venue_key`` makes the spellings of one venue meet: ``Phys. Lett. B``, ``Phys.Lett.B``,
``Physics Letters B`` and ``PLB`` all give ``physlettb``. The general rule: fold, split into words
(dots, spaces, hyphens and lower-to-upper case changes, as in ``NotesPhys``, separate them), drop
function words, shorten each word through ``WORD_ABBREVIATIONS`` and join without spaces. The word
table follows the ISO 4 List of Title Word Abbreviations (LTWA, ISSN International Centre) for
the words of common physics, astronomy, mathematics and CS venues, and ``VENUE_ALIASES`` the
acronyms INSPIRE-HEP and the journals themselves print (``JHEP``, ``ApJ``, ``MNRAS``, ``PRL``);
both were compiled by hand from the journal-refs of the arXiv sample
(``../shared/data/catalog/arxiv_metadata_sample.jsonl.gz``) and the venue names of the Crossref
sample. A venue missing from the tables still meets itself in every spelling that differs only
in dots, spaces and case.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from resolvers.parsing.text import fold, ocr_skeleton

# ISO 4 (LTWA) word abbreviations; both the full word and odd abbreviations map to one form.
WORD_ABBREVIATIONS: dict[str, str] = {
    "physics": "phys", "physical": "phys", "physique": "phys", "physik": "phys", "review": "rev",
    "reviews": "rev", "letters": "lett", "letter": "lett", "lettres": "lett", "journal": "j",
    "nuclear": "nucl", "astrophysical": "astrophys", "astrophysics": "astrophys", "astronomy": "astron",
    "astronomical": "astron", "monthly": "mon", "notices": "not", "royal": "roy", "society": "soc",
    "classical": "class", "quantum": "quant", "gravity": "grav", "gravitation": "grav",
    "communications": "commun", "comm": "commun", "commun": "commun", "mathematical": "math",
    "mathematics": "math", "mathematische": "math", "theoretical": "theor", "theory": "theor",
    "international": "int", "intl": "int", "modern": "mod", "european": "eur", "progress": "prog",
    "particle": "part", "particles": "part", "annals": "ann", "annual": "ann", "annu": "ann",
    "applied": "appl", "chemical": "chem", "chemistry": "chem", "condensed": "condens",
    "general": "gen", "relativity": "rel", "relativ": "rel", "cosmology": "cosmol",
    "astroparticle": "astropart", "proceedings": "proc", "conference": "conf", "series": "ser",
    "science": "sci", "sciences": "sci", "scientific": "sci", "academy": "acad", "national": "natl",
    "american": "am", "amer": "am", "transactions": "trans", "mechanics": "mech", "optical": "opt",
    "optics": "opt", "computer": "comput", "computing": "comput", "computational": "comput",
    "information": "inf", "statistical": "stat", "statistics": "stat", "experimental": "exp",
    "experiment": "exp", "supplement": "suppl", "supplementary": "suppl", "nature": "nat",
    "europhysics": "europhys", "lecture": "lect", "lectures": "lect", "advances": "adv",
    "research": "res", "materials": "mater", "biology": "biol", "biological": "biol",
    "mathematik": "math", "geometry": "geom", "analysis": "anal", "probability": "probab",
    "functional": "funct", "differential": "differ", "equations": "equ", "engineering": "eng",
    "electronic": "electron", "electronics": "electron", "solid": "solid", "state": "state",
    "technology": "technol", "instruments": "instrum", "instrumentation": "instrum",
    "methods": "methods", "plasma": "plasma", "fluid": "fluid", "fluids": "fluids", "atomic": "at",
    "molecular": "mol", "optik": "opt", "statistique": "stat", "institute": "inst",
    "university": "univ", "bulletin": "bull", "london": "lond", "society's": "soc", "annales": "ann",
    "machine": "mach", "learning": "learn", "neural": "neural", "networks": "netw", "network": "netw",
    "systems": "syst", "system": "syst", "processing": "process", "intelligence": "intell",
    "artificial": "artif", "pattern": "pattern", "recognition": "recognit", "vision": "vis",
    "united": "u", "states": "s", "america": "a", "nuovo": "nuovo", "cimento": "cim",
    "zeitschrift": "z", "fur": "", "soviet": "sov", "japan": "jpn", "japanese": "jpn",
    "canadian": "can", "chinese": "chin", "indian": "indian", "acta": "acta", "polonica": "pol",
    "polon": "pol", "physica": "physica", "reports": "rep", "report": "rep", "frontiers": "front",
    "magazine": "mag", "philosophical": "philos", "foundations": "found", "algebra": "algebra",
}
FUNCTION_WORDS = frozenset({"the", "of", "and", "in", "on", "for", "de", "der", "la", "le", "et", "&", "an"})
# Acronyms as printed, by their key after the word rule -> the key of the venue's full name.
VENUE_ALIASES: dict[str, str] = {
    "jhep": "jhighenergyphys", "jcap": "jcosmolastropartphys", "apj": "astrophysj",
    "apjs": "astrophysjsuppl", "apjsuppl": "astrophysjsuppl", "apjl": "astrophysjlett",
    "apjlett": "astrophysjlett", "aj": "astronj", "mnras": "monnotroyastronsoc",
    "aa": "astronastrophys", "prl": "physrevlett", "pra": "physreva", "prb": "physrevb",
    "prc": "physrevc", "prd": "physrevd", "pre": "physreve", "prx": "physrevx", "rmp": "revmodphys",
    "plb": "physlettb", "pla": "physletta", "npb": "nuclphysb", "npa": "nuclphysa", "epjc": "eurphysjc",
    "epja": "eurphysja", "epjb": "eurphysjb", "epl": "europhyslett", "cqg": "classquantgrav",
    "jmp": "jmathphys", "cmp": "communmathphys", "njp": "newjphys", "pnas": "procnatlacadsciusa",
    "procnatlacadsci": "procnatlacadsciusa", "grg": "genrelgrav", "ijmpa": "intjmodphysa",
    "ijmpd": "intjmodphysd", "mpla": "modphysletta", "ptp": "progtheorphys",
    "jpcm": "jphyscondensmatter", "jetpl": "jetplett", "sovphysjetp": "jetp", "jexptheorphys": "jetp",
}
_WORD_SPLIT = re.compile(r"[^a-z0-9']+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
KEY_MIN_CHARS = 3  # shorter keys ("b", "j") name no venue


@lru_cache(maxsize=1 << 16)
def venue_key(venue: str | None) -> str:
    """The one key of a venue's spellings (see the module docstring); "" for no venue."""
    if not venue:
        return ""
    if "&" in venue:  # Crossref container titles carry HTML entities ("Law &amp; Security")
        venue = html.unescape(venue)
    text = fold(_CAMEL.sub(" ", venue).replace("&", " and "))
    words = [w.strip("'") for w in _WORD_SPLIT.split(text)]
    key = "".join(WORD_ABBREVIATIONS.get(w, w) for w in words if w and w not in FUNCTION_WORDS)
    return VENUE_ALIASES.get(key, key)


@dataclass(frozen=True, slots=True)
class JournalRef:
    """What a journal reference says: venue as printed, volume, first page, year (any may be None)."""

    venue: str | None
    volume: str | None
    first_page: str | None
    year: int | None

    @property
    def key(self) -> str:
        return venue_key(self.venue)


YEAR = r"(?:1[6-9]\d\d|20\d\d)"
_YEAR_RE = re.compile(rf"^{YEAR}$")
# a number: volume, page or year; a page may carry one letter (L45, S541, e012345); "7th" is none
_NUMBER = re.compile(r"(?<![0-9])(?:(?<![A-Za-z])[A-Za-z])?\d+(?![0-9]|[A-Za-z]{2})[A-Za-z]?")
_SKIP = re.compile(  # issue numbers, dates and page words between volume and first page
    r"\s*(?:\((?P<paren>[^()]{0,40})\)|(?:no|nos|num|nr|issues?|n)\.?\s*\d+(?:\s*[-–/]\s*\d+)?|"
    r"(?:pp?|pages?|art(?:icle)?(?:\s+no)?|vol(?:ume)?|v)\.?(?=\s*[A-Za-z]?\d)|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?(?:\s+[IVX]+|\s+\d{1,2})?,?"
    r"(?:\s+(?P<dated>" + YEAR + r"))?\b|"
    r"[,:;.]|\s+)", re.I)
_VOL_WORD_END = re.compile(r"[\s,]*(?:\b(?:vol(?:ume)?|v|no|nr)\.?|(?<=\.)(?:vol(?:ume)?)\.?)[\s,]*$", re.I)


def _after_volume(text: str, at: int, limit: int = 60) -> tuple[str | None, int | None, int]:
    """From ``at`` (just past a volume): the first page and a year met on the way (issues,
    ``(2012)``, ``no. 3``, ``pp.`` skipped), and where the page ends."""
    year = None
    end = min(len(text), at + limit)
    while at < end:
        m = _SKIP.match(text, at, end)
        if m and m.end() > at:
            paren = m.group("paren")
            found = re.search(YEAR, paren or m.group("dated") or "")
            if found:
                year = int(found.group(0))
            at = m.end()
            continue
        n = _NUMBER.match(text, at, end)
        if n is None:
            return None, year, at
        return n.group(0), year, n.end()
    return None, year, at


def _trailing_year(text: str) -> int | None:
    years = re.findall(rf"(?<!\d){YEAR}(?!\d)", text)
    return int(years[-1]) if years else None


def parse_journal_ref(text: str | None) -> JournalRef | None:
    """The first journal reference of an arXiv ``journal-ref`` (``A; B`` gives A), or None when
    it names no volume. Never raises."""
    if not text:
        return None
    text = re.sub(r"\s+", " ", text.split(";")[0]).strip()
    first = _NUMBER.search(text)
    if first is None:
        return None
    venue, token, at = text[:first.start()], first.group(0), first.end()
    if token[0].isalpha():  # "Phys.Rev.D76": the series letter belongs to the venue
        venue, token = venue + token[0], token[1:]
    year = None
    if _YEAR_RE.match(token) and (_YEAR_THEN_VOLUME.match(text, at) or venue.endswith("(")):
        nxt = _NUMBER.search(text, at)  # "Annals 2008, Vol. 18", "Eur. Phys. J. Plus (2015) 130:27"
        if nxt is None or nxt.group(0)[0].isalpha():
            return None
        year, token, at = int(token), nxt.group(0), nxt.end()
    name: str | None = _VOL_WORD_END.sub("", venue).strip(" ,.-:(") or None
    page, seen_year, page_end = _after_volume(text, at)
    if page is not None and _YEAR_RE.match(page):
        later, _, later_end = _after_volume(text, page_end)
        if later is not None:  # "Volume 86, Issue 9, 2007, pp. 1117-1126": 2007 is the year
            seen_year, page, page_end = int(page), later, later_end
        elif not re.search(r"\d", text[page_end:]):
            seen_year, page = int(page), None  # "Physica 12, 2007": no page, a year
    year = year or seen_year or _trailing_year(text[page_end:])
    if name is not None and len(name) > 120:
        name = None
    return JournalRef(name, token, page, year)


_YEAR_THEN_VOLUME = re.compile(r"\s*[,;]?\s*(?:vol(?:ume)?\.?\s*\d|\d+\s*[(:])", re.I)


# --- locators in a reference string -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Locator:
    """A (volume, first page) a reference string prints, with the keys of every venue spelling
    that may stand right before it (the last 1..``MAX_VENUE_WORDS`` words: the string's venue is
    one of them, author names and title words before it give keys no venue has)."""

    keys: tuple[str, ...]
    volume: str
    first_page: str


MAX_VENUE_WORDS = 12
MAX_LOCATORS = 6
LOCATOR_TEXT_MAX = 2000  # characters of a reference string searched for locators
VENUE_WINDOW = 240  # characters before a volume searched for its venue (the words used are the last 160)
# what may stand between a venue and its volume: "vol.", a year ("Phys Lett B. 2012;716"), commas
_BEFORE_VOLUME = re.compile(r"(?:[\s,.;:]|\bvol(?:ume)?\b\.?|\bv\.|\(?\b" + YEAR + r"[a-z]?\)?|\(?\bn\.\s?d\.\)?)*$",
                            re.I)  # "n.d.": no date
_VENUE_STOP = re.compile(r"[;\"“”\[\]]|\bet\s+al\b|\d")  # commas and brackets may be a venue's


def number_key(value: str | None) -> str:
    """A volume or page as the lookups compare it: lower case, leading zeros dropped."""
    v = (value or "").strip().lower()
    return v.lstrip("0") or ("0" if v else "")


def venue_keys_before(text: str, end: int, key: Callable[[str], str] = venue_key) -> tuple[str, ...]:
    """The keys of the last 1..MAX_VENUE_WORDS words before ``end`` (stopping at a quote, a
    square bracket, a digit or "et al"), longest first. With ``key=ocr_venue_key`` a digit inside
    a word ("Physica1") is read as a letter and does not stop the venue."""
    head = text[max(0, end - VENUE_WINDOW):end]  # a window: the regexes below never rescan a long string
    if "&" in head:  # "Health &amp; Social Care": an entity's ";" is no end of the venue
        head = html.unescape(head)
    between = _BEFORE_VOLUME.search(head)
    head = head[:len(head) - len(between.group(0))] if between else head
    ocr = key is ocr_venue_key
    stop, min_chars = (_OCR_VENUE_STOP, OCR_KEY_MIN_CHARS) if ocr else (_VENUE_STOP, KEY_MIN_CHARS)
    stops = [m.end() for m in stop.finditer(head, max(0, len(head) - 160))]
    span = head[stops[-1]:] if stops else head[-160:]
    words = span.split()[-MAX_VENUE_WORDS:]
    keys: dict[str, None] = {}
    for k in range(len(words), 0, -1):
        made = key(" ".join(words[-k:]))
        if len(made) >= min_chars:
            keys.setdefault(made, None)
    return tuple(keys)


def reference_locators(text: str, key: Callable[[str], str] = venue_key) -> list[Locator]:
    """Every (venue keys, volume, first page) a reference string may print: each number taken as
    a volume, the next number after it (issues, years and "pp." skipped) as its first page.
    ``key``: how the venue words before it become keys (``venue_key``, or ``ocr_venue_key``)."""
    out: list[Locator] = []
    text = text[:LOCATOR_TEXT_MAX]  # a reference's locators come early; junk strings stay linear
    for m in _NUMBER.finditer(text):
        volume, start = m.group(0), m.start()
        if volume[0].isalpha():  # "Phys. Rev. D70": the letter is the venue's
            volume, start = volume[1:], start + 1
        if _YEAR_RE.match(volume) and text[m.end():m.end() + 1] in (";", ")"):
            continue  # "2012;716(1)", "(2012)": a year, not a volume
        page, _, _ = _after_volume(text, m.end(), limit=40)
        if page is None:
            continue
        keys = venue_keys_before(text, start, key)
        if keys:
            out.append(Locator(keys, number_key(volume), number_key(page)))
        if len(out) >= MAX_LOCATORS:
            break
    return out


# --- venues misread by OCR ----------------------------------------------------------------------
# OCR confuses letters and digits of like shape: "Physica1 Rcview E", "0ptics", "Joumal" for
# "Journal"; a venue and its misreadings meet on one ``text.ocr_skeleton``. ``ocr_venue_key`` is
# ``venue_key`` made of skeletons: each word's skeleton is looked up among the skeletons of the
# abbreviation table's words, and the joined key among the aliases'. The catalog side is the
# skeleton of its stored ``venue_key``. A skeleton is coarse: it only says which works printed at
# the string's volume and first page may carry its venue (``locator_match``), never which venue a
# string names on its own.
OCR_KEY_MIN_CHARS = 2  # a skeleton is shorter than its key ("sci" -> "sd")
# a digit beside a letter ("Physica1", "0ptics") is a misread letter; other digits end a venue
_OCR_VENUE_STOP = re.compile(r"[;\"“”\[\]]|\bet\s+al\b|(?<![^\W\d_])\d(?![^\W\d_])")


def _skeleton_table(table: dict[str, str]) -> dict[str, str]:
    """``table`` by the skeletons of its keys; a skeleton two entries with different values share
    is left out (no guessing which word it was)."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    for word, value in table.items():
        skel, target = ocr_skeleton(word), ocr_skeleton(value)
        if out.get(skel, target) != target:
            clash.add(skel)
        out[skel] = target
    return {k: v for k, v in out.items() if k not in clash}


_SKELETON_WORDS = _skeleton_table(WORD_ABBREVIATIONS)
_SKELETON_FUNCTION_WORDS = frozenset(ocr_skeleton(w) for w in FUNCTION_WORDS)
_SKELETON_ALIASES = _skeleton_table(VENUE_ALIASES)


@lru_cache(maxsize=1 << 14)
def ocr_venue_key(venue: str | None) -> str:
    """The skeleton key of a venue as OCR may have printed it: ``ocr_venue_key("Physica1 Rcview
    E") == ocr_skeleton(venue_key("Physical Review E"))``; "" for no venue."""
    if not venue:
        return ""
    text = fold(_CAMEL.sub(" ", html.unescape(venue)).replace("&", " and "))
    words = [ocr_skeleton(w.strip("'")) for w in _WORD_SPLIT.split(text)]
    key = "".join(_SKELETON_WORDS.get(w, w) for w in words if w and w not in _SKELETON_FUNCTION_WORDS)
    return ocr_skeleton(_SKELETON_ALIASES.get(key, key))
