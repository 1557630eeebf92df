"""Parse a raw reference string into its fields (the text folding it uses is ``resolvers.parsing.text``).

The parser is a set of ordered heuristics, not a trained model: it finds the author block by
scanning name patterns (Vancouver ``Surname AB``, APA ``Surname, A. B.``, IEEE ``A. B. Surname``,
full forenames), then the year marker, then takes the next sentence as the title unless that
sentence is a venue abbreviation followed by numbers (physics style, no title). Quoted titles
(IEEE) and BibTeX entries are read directly. The matcher never trusts the parse alone: it also
aligns catalog titles against the whole string, so a parse miss costs recall, not precision.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

# The text normalisation every matcher shares lives in resolvers/parsing/text.py; these names stay
# importable from here for the parser's callers.
from resolvers.parsing.text import LIGATURES, clean_raw, compact, fold, norm_text, tokens  # noqa: F401

# ---------------------------------------------------------------- parsed record -------------

@dataclass
class ParsedReference:
    raw: str
    text: str  # cleaned text the fields were read from
    title: str | None = None
    authors: list[str] = field(default_factory=list)  # surnames, in order
    author_block: str | None = None
    year: int | None = None
    venue: str | None = None
    volume: str | None = None
    first_page: str | None = None
    pages: str | None = None
    kind: str = "unknown"  # which rule found the title: quoted, bibtex, after_authors, ...
    notes: list[str] = field(default_factory=list)
    # "LLaMA: Open and efficient ..." reads as author "LLaMA" and a title; the lone name before the
    # colon may as well be the head of a "Name: subtitle" title. Kept here so that a work whose
    # title starts with it is compared with the whole title and no author (``lead_is_title``).
    title_lead: str | None = None


def lead_is_title(parsed: ParsedReference, work_title: str | None) -> bool:
    """Is the parsed lone "author" the head of this work's "Name: subtitle" title?"""
    lead = compact(parsed.title_lead or "")
    return bool(lead) and compact(work_title or "").startswith(lead)


# One to three words with no list separators before a colon: "LLaMA", "Megatron-LM", "Big Bird"
_TITLE_LEAD = re.compile(r"(?!.*\b(?:and|et al)\b)[^\s,;&]{2,}(?: [^\s,;&]+){0,2}")


# ---------------------------------------------------------------- patterns ------------------

YEAR = r"(?:1[5-9]\d\d|20[0-4]\d)"
# the year first, then what stands before it (a year is 4 characters): scanned from its digits
YEAR_RE = re.compile(rf"({YEAR})(?<![\d/.-][\s\S]{{4}})[a-z]?(?![\d/])")
_NUMBERING = re.compile(r"^\s*(?:\[\s*\d+\s*\]|\(\s*\d+\s*\)|\d{1,4}\s*[.)]|\d{1,4}(?=\s+[A-Z]))\s*")
# titles are bounded ({6,600}): an unclosed quote must not make every later quote rescan the rest
_QUOTED = re.compile(r"[\"“”„«»]\s*(.{6,600}?)\s*[,.;]?\s*[\"“”»]")
_QUOTED_SINGLE = re.compile(r"(?:^|\s)[‘']\s*(.{6,600}?)\s*[,.;]?\s*[’'](?=[\s,.;]|$)")
_BIBTEX = re.compile(r"@\s*\w+\s*\{")
# Identifiers and URLs are not title, author or year material: "arXiv:1810.04805" is no year 1810
# and "https://arxiv.org/abs/0704.0002" no title. They are masked before the fields are read.
_IDENTIFIER_SPAN = re.compile(
    r"(?:\b(?:https?|ftp)\s*:\s*//\s*\S+|\b(?:www\.|dx\.)?(?:doi|arxiv)\.org/\S+|"
    r"\b(?:arxiv|doi|urn)\s*:\s*\S+|\bdoi\s*10\.\S+|\b10\.\d{4,9}\s*/\s*\S+|\babs/\S+|"
    r"\b(?:arxiv|corr)(?:\s+preprint)?\b|\burl\b:?)", re.I)


# Every _IDENTIFIER_SPAN match starts with one of these in the lower-case text ("ı" and "ſ": the
# regex's case folding), so the scan starts at the first of them: identifiers come late in a string.
_SPAN_START = re.compile("http|ftp|www\\.|dx\\.|do[iı]|arx|urn|10\\.|ab[sſ]/|corr|url")


def mask_identifiers(text: str) -> str:
    """The text with identifiers and URLs blanked: their digits are no volume, page or year."""
    lower = text.lower()
    first = _SPAN_START.search(lower)
    if first is None:
        return text
    start = first.start() if len(lower) == len(text) else 0  # ("İ" lowers to two characters)
    parts, last = [text[:start]], start
    for m in _IDENTIFIER_SPAN.finditer(text, start):
        parts += (text[last:m.start()], " ")
        last = m.end()
    parts.append(text[last:])
    return "".join(parts)


_BIB_FIELD = re.compile(r"\b(title|author|year|journal|booktitle|volume|pages|number)\s*=\s*", re.I)
_NAME_WORD = re.compile(r"^(?:[A-Z\u00c0-\u024f][\w'’\u00c0-\u024f-]*\.?|[A-Z]\.(?:-?[A-Z]\.)*|"
                        r"(?:van|von|de|der|den|da|di|du|del|el)(?:-(?:de|der|den|la))*-[A-Z][\w'’\u00c0-\u024f-]*|"
                        r"van|von|de|der|den|da|di|du|dos|del|la|le|y|ten|ter|al|el|bin|d'\w+|Jr\.?|Sr\.?|III?|IV)$")
_INITIALS = re.compile(r"^(?:[A-Z]\.?-?){1,4}$")
_NAME_START = re.compile(
    r"(?:[A-Z]\.|[A-Z][\w'’\u00c0-\u024f-]+,\s*[A-Z]|[A-Z][\w'’\u00c0-\u024f-]+(?:\s+[A-Z][\w'’-]+)?"
    r"\s+[A-Z]{1,3}(?:[,.;:]|\s+and\b|\s*\(|\s*$)|[A-Z][\w'’\u00c0-\u024f-]+,?\s+(?:and|&)\s+[A-Z]|[A-Z]{1,3}\s+[A-Z][\w'’-]+[,.:]|and\b|&|et\.?\s+al|"
    r"Jr\b|\(?" + YEAR + r"|"
    # surnames with lower-case particles: "van den Bos C", "el Naqa I", "van-der-Goot FG", "de Groot LC"
    r"(?:[Vv][ao]n|[Dd]e|[Dd]e[nr]|[Dd][aiu]|[Dd]el|[Dd]ella|dos|el|al|le|la|ten|ter|bin|ibn)(?:[\s-]+(?:de|den|der|la|van))*"
    r"[\s-]+[A-Z][\w'’\u00c0-\u024f-]+(?:\s+[A-Z]{1,3}\b|,\s*[A-Z]\.))")
_FORENAME_DOT = re.compile(r"[A-Z][\w'’\u00c0-\u024f-]+(?:\s+[A-Z]\.)*\.\s")
# "A. B" / ", J. K" / "Keith D" (a forename, then initials: "Keith D. Gregory. 1992. Title.")
_CHUNK_INITIAL = re.compile(r"(?:^|[,;&]\s*|\band\s+)(?:[A-Z][a-z\u00c0-\u024f'’-]+\s+)?(?:[A-Z]\.\s*-?)*[A-Z]$")
_SURNAME_NEXT = re.compile(r"[A-Z][\w'’\u00c0-\u024f-]+(?:[,.;:]|\s+(?:and|&)\s|\s+et\.?\s+al\b|$)")
_AUTHOR_SEP = re.compile(r",?\s*\bet\.?\s*al\b\.?[,:]?\s*(?:\(?" + YEAR + r"[a-z]?\)?[.,:]?\s*)?|[.,]?\s*\(\s*" + YEAR + r"[a-z]?\s*\)[.,:]?\s*|[.,]\s*" + YEAR + r"[a-z]?\s*[.,:;]\s*|"  # noqa: E501
                         r"\s+" + YEAR + r"[a-z]?[.,:;]?\s+|\.\s+|,\s+|:\s+|\s*[\"“]")
_ABBREV_END = {"vs", "eg", "e.g", "ie", "i.e", "al", "st", "dr", "mr", "mrs", "no", "sp", "spp",
               "cf", "var", "subsp", "ca", "approx", "fig", "jr", "inc", "ltd", "co", "vol", "ed",
               "eds"}
_VENUE_LIKE = re.compile(r"^(?:[A-Z][A-Za-z&]{0,9}\.?[\s,:]*){1,6}(?<=[\s,.:])\d")
VOL_PAGES = [
    # 2004;127(5):1291-9   /  1974;99:496-7
    re.compile(r";\s*(?P<vol>\d+)\s*(?:\([^)]{0,40}\))?\s*:\s*(?P<fp>[A-Za-z]?\d+)(?:\s*[-–]\s*(?P<lp>[A-Za-z]?\d+))?"),
    # 2000, 97:519-523 / 298:2381-2385 / 24(5):643-660
    re.compile(r"(?<![\d.])(?P<vol>\d+)\s*(?:\([^)]{0,40}\))?\s*:\s*(?P<fp>[A-Za-z]?\d+)(?:\s*[-–]\s*(?P<lp>[A-Za-z]?\d+))?"),
    # 64(3), 678-691  /  64, 678-691  / 17, 427-432
    re.compile(r"(?<![\d.])(?P<vol>\d+)\s*(?:\([^)]{0,40}\))?\s*,\s*(?:pp?\.\s*)?(?P<fp>[A-Za-z]?\d+)\s*[-–]\s*(?P<lp>[A-Za-z]?\d+)"),
    # Phys. Rev. D 74, 034503 (2006) / ApJ, 475, 163
    re.compile(r"(?<![\d.])(?P<vol>\d+)\s*,\s*(?P<fp>[A-Za-z]?\d+)\s*(?:\(|$|,|\.)"),
    # vol. 12, no. 3, pp. 45-67
    re.compile(r"vol(?:ume)?\.?\s*(?P<vol>\d+).{0,200}?pp?\.\s*(?P<fp>[A-Za-z]?\d+)(?:\s*[-–]\s*(?P<lp>[A-Za-z]?\d+))?", re.I),  # noqa: E501
    # 74 034503 / 12 345–367 (Nature: "Nature 409, 860–921 (2001)")
    re.compile(r"(?<![\d.])(?P<vol>\d+)\s+(?P<fp>[A-Za-z]?\d+)\s*[-–]\s*(?P<lp>[A-Za-z]?\d+)"),
]


def _looks_like_names(prefix: str) -> bool:
    """Is this text a list of personal names (every chunk a few capitalised words/initials)?"""
    prefix = _ET_AL_OR_YEAR.sub("", prefix)
    chunks = [c.strip(" .") for c in _NAME_LIST_SPLIT.split(prefix)]
    chunks = [c for c in chunks if c]
    if not chunks:
        return False
    for chunk in chunks:
        words = [w.lstrip("-") for w in chunk.replace(".", ". ").split()]
        words = [w for w in words if w]
        if len(words) > 5:
            return False
        if not all(_NAME_WORD.match(w) for w in words):
            return False
    return True


def _surnames(block: str) -> list[str]:
    """Surnames of an author block, in order, whatever the name order of the style."""
    block = _ET_AL_REST.sub("", block).strip(" .,;:")
    if ";" in block:
        parts = [p for p in _SEMICOLON_SPLIT.split(block) if p.strip()]
    else:
        parts = [p for p in _COMMA_SPLIT.split(block) if p.strip()]
    names: list[str] = []
    for part in parts:
        part = part.strip(" .,")
        if not part:
            continue
        words = part.replace(".", ". ").split()
        if all(_INITIALS.match(w.strip(".")) or len(w.strip(".")) == 1 for w in words):
            continue  # initials that follow a "Surname," chunk (APA)
        if ";" in block and "," in part:
            names.append(part.split(",")[0].strip())
            continue
        content = [w for w in words if not _INITIALS.match(w.rstrip(".")) or len(w.rstrip(".")) > 3]
        content = [w for w in content if w.lower().strip(".") not in ("jr", "sr", "ii", "iii")]
        if not content:
            continue
        if _INITIALS.match(words[0].rstrip(".")) and len(words[0].rstrip(".")) <= 4 and words[0].endswith("."):
            names.append(content[-1].strip("."))  # "A. B. Surname"
        elif len(words) >= 2 and all(_INITIALS.match(w.rstrip(".")) for w in words[1:]):
            names.append(" ".join(content).strip("."))  # "Surname AB"
        else:
            names.append(content[-1].strip(".") if len(content) > 1 and not part.count(",") else content[0].strip("."))
    return [n for n in names if len(n) > 1]


# the parser's other patterns, compiled once (``re``'s cache lookup per call adds up per reference)
_ET_AL_OR_YEAR = re.compile(r"\bet\.?\s*al\.?|\(?\b" + YEAR + r"[a-z]?\)?")
_NAME_LIST_SPLIT = re.compile(r"[,;&]|\band\b|\bAND\b")
_ET_AL_REST = re.compile(r"\bet\.?\s*al\.?.*$")
_SEMICOLON_SPLIT = re.compile(r"\s*;\s*|\s+and\s+|\s*&\s*")
_COMMA_SPLIT = re.compile(r"\s*,\s*|\s+and\s+|\s*&\s*")
_SENTENCE_MARK = re.compile(r"[.?!](?=\s|$)|\s+In:?\s+(?=[A-Z])")
_YEAR_ONLY = re.compile(YEAR)
_LEADING_YEAR = re.compile(r"^[\s.,:;]*\(?" + YEAR + r"[a-z]?\)?[\s.,:;]+")
_THREE_LETTERS = re.compile(r"[A-Za-z]{3}")
_WORD_THEN_NUMBER = re.compile(r"^[A-Z][\w.]*,? \d")
_COMMA_OR_DIGIT = re.compile(r"[,\d]")
_VENUE_END = re.compile(r"(?:,|\.)?\s*(?:\(?\d|vol\b|pp?\.)")
MAX_AUTHOR_BLOCK = 10_000  # characters; longer "author blocks" are junk (and would cost time)
_LOWER_WORD_NEXT = re.compile(r"[A-Z][a-z]+\s+(?!(?:de|den|der|la|van|von|du|da|di)\s+[A-Z])[a-z]")
_WORD_BEFORE = re.compile(r"([\w.]+)$")
_SPACES = re.compile(r"\s*")


def _after_spaces(text: str, at: int) -> int:
    """Where the run of white space at ``at`` ends (``at`` itself when there is none)."""
    spaces = _SPACES.match(text, at)
    return spaces.end() if spaces else at


def _author_end(text: str) -> tuple[int, int] | None:
    """(end of the author block, start of what follows) or None when no author block leads."""
    i = 0
    n = len(text)
    while i < n:
        m = _AUTHOR_SEP.search(text, i)
        if not m:
            return None
        if m.start() > MAX_AUTHOR_BLOCK:
            return None  # no author block is this long: a pathological string, not names
        sep = m.group(0)
        if sep.startswith((".", ",")) and not sep.strip(".,  "):  # noqa: B005 (a set of characters, on purpose)
            # match at offsets, never on copies: copying the rest at every separator is quadratic
            if sep.startswith(",") and _FORENAME_DOT.match(text, m.end()):
                i = m.end()  # "Surname, Forename." (humanities style)
                continue
            if sep.startswith(".") and _CHUNK_INITIAL.search(text, max(0, m.start() - 200), m.start()) \
                    and _SURNAME_NEXT.match(text, m.end()):
                i = m.end()  # "..., D. Derrick." initials before the surname
                continue
            if _NAME_START.match(text, m.end()) and not _LOWER_WORD_NEXT.match(text, m.end()):
                i = m.end()
                continue
        prefix = text[: m.start() + (1 if m.group(0).startswith(".") else 0)]
        if not _looks_like_names(prefix.rstrip(".")):
            return None
        return m.start(), m.end()
    return None


def _sentence_end(text: str) -> int:
    """Index just past the first sentence of ``text`` (titles end at '.', '?', '!')."""
    for m in _SENTENCE_MARK.finditer(text):
        if m.group(0).strip() in ("In", "In:"):
            return m.start()
        if m.group(0) in "?!":
            return m.end()
        # a window, not the whole prefix: searching "[\w.]+$" over the prefix is quadratic
        word = _WORD_BEFORE.search(text, max(0, m.start() - 100), m.start())
        w = word.group(1).lower() if word else ""
        if w.rstrip(".") in _ABBREV_END:
            continue
        j = _after_spaces(text, m.end())
        after = text[j:j + 3]
        if word and len(word.group(1)) == 1 and word.group(1).isupper() and after[:1].islower():
            continue  # "E. coli"
        if after[:1].islower() and not after.startswith(("in ", "in:")):
            continue  # "et al. used" etc.: a sentence rarely continues in lower case
        return m.end()
    return len(text)


MAX_BIB_FIELD = 5_000  # characters scanned for one BibTeX field value
_BARE_VALUE = re.compile(r"[^,}]*")


def _bibtex(text: str, parsed: ParsedReference) -> ParsedReference:
    fields: dict[str, str] = {}
    for m in _BIB_FIELD.finditer(text):
        name = m.group(1).lower()
        if name in fields:
            continue  # the first value of a field wins; scanning repeats would cost time for nothing
        j = m.end()
        if j < len(text) and text[j] in "{\"":
            close = "}" if text[j] == "{" else "\""
            depth, k = 0, j
            stop = min(len(text), j + MAX_BIB_FIELD)  # an unclosed brace must not rescan the rest per field
            while k < stop:
                c = text[k]
                if close == "}" and c == "{":
                    depth += 1
                elif c == close and (close == "\"" and k > j or close == "}"):
                    if close == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    else:
                        break
                k += 1
            value = text[j + 1:k]
        else:
            bare = _BARE_VALUE.match(text, j, j + MAX_BIB_FIELD)
            value = bare.group(0) if bare else ""
        fields.setdefault(name, re.sub(r"[{}]", "", value).strip())
    parsed.kind = "bibtex"
    parsed.title = fields.get("title") or None
    if "author" in fields:
        parsed.author_block = fields["author"]
        names = re.split(r"\s+and\s+", fields["author"])
        parsed.authors = [(n.split(",")[0] if "," in n else n.split()[-1]).strip() for n in names if n.strip()]
    if fields.get("year", "").strip().isdigit():
        parsed.year = int(fields["year"].strip())
    parsed.venue = fields.get("journal") or fields.get("booktitle")
    parsed.volume = fields.get("volume") or None
    if fields.get("pages"):
        parsed.pages = fields["pages"]
        parsed.first_page = re.split(r"\s*[-–]+\s*", fields["pages"])[0] or None
    return parsed


def _numbers(parsed: ParsedReference, rest: str) -> None:
    for pattern in VOL_PAGES:
        m = pattern.search(rest)
        if m and not _YEAR_ONLY.fullmatch(m.group("vol")) or (m and pattern is VOL_PAGES[0]):
            parsed.volume = m.group("vol")
            parsed.first_page = m.group("fp")
            lp = m.groupdict().get("lp")
            parsed.pages = f"{m.group('fp')}-{lp}" if lp else m.group("fp")
            return


def reference_body(text: str, masked: str | None = None) -> str:
    """The cleaned string the fields are read from: its list number off, identifiers and URLs
    blanked (``masked``: ``mask_identifiers(text)`` when the caller has it and no list number
    leads), spaces collapsed. ``lazy_parse`` reads years from the same body as the parser."""
    if masked is None or _NUMBERING.match(text):
        masked = mask_identifiers(_NUMBERING.sub("", text, count=1))
    # whitespace runs as one space (split: the same whitespace as the regex ``\s``)
    return " ".join(masked.split()).strip(" ,;")


def parse_reference(raw: str) -> ParsedReference:
    """Fields of one reference string. Never raises; missing fields stay None."""
    text = clean_raw(raw or "")
    parsed = ParsedReference(raw=raw, text=text)
    if not text:
        parsed.kind = "empty"
        return parsed
    # (an entry needs an "@", a field an "="; most strings have neither and skip both scans)
    if ("@" in text and _BIBTEX.search(text)) or ("=" in text and len(_BIB_FIELD.findall(text)) >= 2):
        return _bibtex(text, parsed)
    body = reference_body(text)
    if not body:
        parsed.kind = "identifiers_only"
        return parsed
    years = [(m.start(), int(m.group(1))) for m in YEAR_RE.finditer(body)]
    rest = body
    start = 0
    q = _QUOTED.search(body) or _QUOTED_SINGLE.search(body)
    if q and len(q.group(1).split()) >= 2:
        parsed.title = q.group(1).strip(" ,.")
        parsed.kind = "quoted"
        parsed.author_block = body[: q.start()].strip(" ,.:") or None
        rest = body[q.end():]
        start = q.end()
    else:
        ends = _author_end(body)
        if ends is not None:
            parsed.author_block = body[: ends[0]].strip(" ,.:")
            if body[ends[0]:ends[1]].startswith(":") and _TITLE_LEAD.fullmatch(parsed.author_block):
                parsed.title_lead = parsed.author_block
            rest = body[ends[1]:]
            start = ends[1]
            rest2 = _LEADING_YEAR.sub("", rest)
            start += len(rest) - len(rest2)
            rest = rest2
            parsed.kind = "after_authors"
        else:
            parsed.kind = "no_authors"
        # a title ends at the first sentence end; a venue abbreviation + numbers is no title
        cut = _sentence_end(rest)
        candidate = rest[:cut].strip(" ,.;:")
        if _VENUE_LIKE.match(candidate) or _VENUE_LIKE.match(rest.strip(" ,.;:")) or not _THREE_LETTERS.search(candidate) or (  # noqa: E501
                parsed.kind == "no_authors" and _WORD_THEN_NUMBER.match(candidate)):
            parsed.kind += "_no_title"
            parsed.venue = _COMMA_OR_DIGIT.split(candidate)[0].strip(" .") or None
        else:
            parsed.title = candidate
            rest = rest[cut:]
            start += cut
    if parsed.author_block:
        parsed.authors = _surnames(parsed.author_block)
    after = [y for pos, y in years if pos >= start - 8] or [y for _, y in years]
    if after:
        parsed.year = after[0]
    tail = rest.strip(" .,;:")
    if tail and parsed.venue is None:
        v = _VENUE_END.split(tail)[0].strip(" ,.;:")
        parsed.venue = v or None
    _numbers(parsed, tail)
    return parsed


def apply_fields(parsed: ParsedReference, fields: Mapping[str, str] | None) -> ParsedReference:
    """The source's own fields (a ``.bib`` entry's, GROBID's parse of a PDF reference) over the
    heuristic parse of the string: they were read from structure, not guessed from punctuation.
    What the fields lack, the parse keeps."""
    given = {k.lower(): v.strip() for k, v in (fields or {}).items() if v and v.strip()}
    if not given:
        return parsed
    if given.get("title"):
        parsed.title = given["title"]
    if given.get("author"):
        parsed.author_block = given["author"]
        names = [n for n in re.split(r"\s+and\s+", given["author"]) if n.strip()]
        parsed.authors = [(n.split(",")[0] if "," in n else n.split()[-1]).strip() for n in names]
    if re.fullmatch(YEAR, given.get("year", "")):
        parsed.year = int(given["year"])
    parsed.venue = given.get("journal") or given.get("booktitle") or parsed.venue
    parsed.volume = given.get("volume") or parsed.volume
    if given.get("pages"):
        parsed.pages = given["pages"]
        parsed.first_page = re.split(r"\s*[-–]+\s*", given["pages"])[0] or parsed.first_page
    parsed.notes.append("fields: " + ", ".join(sorted(given)))
    return parsed
