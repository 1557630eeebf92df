"""What a record's pages say in plain words: each state with its colour and meaning, each notice
standing, each coverage lane, the links of a cited work (doi.org, arxiv.org), the DOI a notice is
about, the contradicting fields of a ``metadata_mismatch`` and the works a record's notices name.
Pure functions of record values; the text and HTML pages (``record_pages``) both take them."""
from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import quote

from resolvers.model import linked_count

# state: (plain words, what it means, colour on the HTML page)
STATES: dict[str, tuple[str, str, str]] = {
    "verified_exact": ("verified exactly",
                       "an identifier or the exact title names the cited work, and its fields agree", "#1a7f37"),
    "verified_fuzzy": ("verified by a close match",
                       "the cited string matches one catalog work closely enough to link it", "#2f81f7"),
    "metadata_mismatch": ("identifier names another work", "the string's identifier points to a catalog work whose "
                          "title or fields contradict the string", "#e36209"),
    "malformed_identifier": ("broken identifier", "the string carries an identifier that is not well formed",
                             "#8250df"),
    "parse_uncertain": ("not read reliably", "the string could not be read into fields with confidence", "#bf8700"),
    "unavailable": ("not decided (source unavailable)", "a source needed to decide did not answer; a later run may "
                    "decide it", "#6e7781"),
    "unresolved": ("not found", "no catalog work matches the cited string", "#afb8c1"),
}
OTHER_STATE = ("other state", "a state this version of the pages does not know", "#57606a")

STANDINGS = {"retracted": "retracted", "withdrawn": "withdrawn",
             "expression_of_concern": "under an expression of concern", "corrected": "corrected",
             "reinstated": "reinstated", "none": "no notice found", "unknown": "not known"}
ALARMING = ("retracted", "withdrawn", "expression_of_concern")

# coverage lane: what it counts, the unit of its numbers
LANES = {"resolution": ("References resolved", "references"),
         "notices": ("Retraction and correction notices checked", "references naming a catalog work"),
         "inbound": ("Citations from papers in this ledger", "citing references"),
         "external_citations": ("Citations from outside this ledger", ""),
         "paper_metadata": ("The paper's own metadata (categories, versions, dates)", "fields")}
# why a notice was not measured, in words (resolvers.notices.standing.UnavailableReason)
NOTICE_REASONS = {"no_canonical_work": "the reference is linked to no catalog work",
                  "no_work_identifier": "the cited work has neither a DOI nor an arXiv id",
                  "not_checked": "no notice source was loaded for this work",
                  "source_unreadable": "a notice source meant to be checked could not be read"}
LANE_STATES = {"measured": "measured", "partial": "partly measured", "not_measured": "not measured"}

# the contradicting fields a mismatch's evidence names: field -> (string side key, work side key)
SIDES = {"title": ("string_title", "work_title"), "year": ("string_year", "work_year")}


def state_words(state: Any) -> tuple[str, str, str]:
    """(plain words, meaning, colour) of a state; a state not known here keeps its own name."""
    got = STATES.get(state) if isinstance(state, str) else None
    return got or (str(state), OTHER_STATE[1], OTHER_STATE[2])


def lane_figures(name: str, lane: Mapping[str, Any]) -> tuple[str, str, str]:
    """A coverage lane as (what, how far measured in words, its figure): "12 of 16 references",
    never "0/-" (a lane with no denominator says what it does not know)."""
    what, unit = LANES.get(name, (name.replace("_", " "), ""))
    state = LANE_STATES.get(str(lane.get("state")), str(lane.get("state")))
    denominator = lane.get("denominator")
    if denominator is None:
        figure = "unknown (not counted)"
    elif denominator == 0:
        figure = f"none to measure (0 {unit})".replace(" ()", "")
    else:
        figure = f"{lane.get('observed')} of {denominator} {unit}".rstrip()
    return what, state, figure


def lane_source(name: str, lane: Mapping[str, Any]) -> str:
    """Where a lane's figure comes from and as of when: the notice sources that answered, each with
    the time it was asked ("arxiv (2026-08-15T06:32:42Z)"), or "no notice source answered"; for the
    other lanes the tables read and the lane's time."""
    if name == "notices":
        times = lane.get("source_times") or {s: lane.get("as_of") for s in lane.get("sources") or []}
        return ", ".join(f"{s} ({t or 'time not recorded'})" for s, t in times.items()) or "no notice source answered"
    sources = ", ".join(str(s) for s in lane.get("sources") or []) or "no source"
    return f"{sources}, as of {lane['as_of']}" if lane.get("as_of") else sources


def doi_href(doi: Any) -> str:
    return "https://doi.org/" + quote(str(doi), safe="/:;()._-")


def arxiv_href(arxiv_id: Any) -> str:
    return "https://arxiv.org/abs/" + quote(str(arxiv_id), safe="/._-")


def work_links(resolved: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(label, address) of a cited work's DOI and arXiv pages."""
    if not isinstance(resolved, Mapping):
        return []
    links = []
    if resolved.get("doi"):
        links.append((f"doi:{resolved['doi']}", doi_href(resolved["doi"])))
    if resolved.get("arxiv_id"):
        links.append((f"arXiv:{resolved['arxiv_id']}", arxiv_href(resolved["arxiv_id"])))
    return links


def notice_doi(item: Mapping[str, Any]) -> str | None:
    """The DOI a reference's notice is about: its cited work's, else the DOI the notice events
    name (a notice found for a DOI in the string of an unresolved reference), else the string's."""
    resolved = item.get("resolved")
    if isinstance(resolved, Mapping) and resolved.get("doi"):
        return str(resolved["doi"])
    notice = item.get("notice")
    for event in (notice.get("events") or []) if isinstance(notice, Mapping) else []:
        if isinstance(event, Mapping) and event.get("original_doi"):
            return str(event["original_doi"])
    dois = (item.get("cited_as") or {}).get("dois") if isinstance(item.get("cited_as"), Mapping) else None
    return str(dois[0]) if dois else None


def noticed_work_key(item: Mapping[str, Any]) -> str:
    """The cited work a listed notice is about, to count works and not references: its work id,
    else ``doi:`` and the DOI the notice names, else the reference itself."""
    resolved = item.get("resolved")
    if isinstance(resolved, Mapping) and resolved.get("work_id"):
        return str(resolved["work_id"])
    doi = notice_doi(item)
    return f"doi:{doi.lower()}" if doi else f"reference:{item.get('reference_index')}"


def works_by_standing(noticed: list[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Distinct cited works of a record's listed notices, by standing (alarming standings first)."""
    found: dict[str, list[str]] = {}
    for item in noticed:
        standing = str((item.get("notice") or {}).get("standing"))
        key = noticed_work_key(item)
        if key not in found.setdefault(standing, []):
            found[standing].append(key)
    order = list(ALARMING) + sorted(s for s in found if s not in ALARMING)
    return {s: found[s] for s in order if found.get(s)}


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def linked_words(counts: Mapping[str, Any]) -> str:
    """"40 references, 31 linked to a catalog work, 2 whose identifier names another work": linked
    is ``verified_exact`` + ``verified_fuzzy`` (``resolvers.model.linked_count``), taken from the
    counts by state (so a record written before that meaning says the same), a mismatch its own count."""
    by_status = counts.get("by_status") or {}
    mismatch = int(by_status.get("metadata_mismatch") or 0)
    return (f"{plural(int(counts.get('references') or 0), 'reference')}, {linked_count(by_status)} linked to a "
            "catalog work" + (f", {mismatch} whose identifier names another work" if mismatch else ""))


def works_sentence(by_standing: Mapping[str, list[str]]) -> str:
    """"2 cited works retracted, 1 cited work under an expression of concern" (works, not references)."""
    if not by_standing:
        return "No cited work has a notice in the sources checked."
    return ", ".join(f"{plural(len(keys), 'cited work')} {STANDINGS.get(s, s)}"
                     for s, keys in by_standing.items()) + "."


def contradictions(evidence: Any) -> list[tuple[str, Any, Any]]:
    """Each field a ``metadata_mismatch``'s evidence finds contradicted: (field, what the cited
    string says, what the catalog work says). The title and year checks keep both sides under
    their own keys; the field test (venue, volume, first page, year, first author) under
    ``contradicting_fields``."""
    if not isinstance(evidence, Mapping):
        return []
    found: list[tuple[str, Any, Any]] = []
    for name, (string_key, work_key) in SIDES.items():
        if evidence.get(string_key) is not None and evidence.get(work_key) is not None \
                and str(evidence[string_key]) != str(evidence[work_key]):
            found.append((name, evidence[string_key], evidence[work_key]))
    fields = evidence.get("contradicting_fields")
    if isinstance(fields, Mapping):
        seen = {name for name, _, _ in found}
        for name, sides in fields.items():
            if isinstance(sides, Mapping) and name not in seen:
                found.append((str(name).replace("_", " "), sides.get("string"), sides.get("work")))
    if not found and evidence.get("work_title") is not None:  # the work's title absent from the string
        found.append(("title", "(the work's title is not in the string)", evidence["work_title"]))
    return found
