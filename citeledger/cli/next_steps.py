"""What ``citeledger resolve`` says after its counts when references stay ``unresolved``: how many
for each reason, what that reason means, and the command that can change it (the remote resolvers,
a catalog built from a snapshot, or a query to check them by hand)."""
from __future__ import annotations

import shlex
from typing import Sequence

from citeledger.run.summary import RunSummary

# reason -> (what it means, the next steps that can link such references, in the order to try them)
UNRESOLVED_WHY: dict[str, tuple[str, tuple[str, ...]]] = {
    "identifier_not_in_catalog": ("their arXiv id or DOI names no work of the catalog", ("remote", "catalog")),
    "below_threshold": ("the nearest catalog title scores below the link threshold", ("catalog", "remote")),
    "no_candidates": ("no catalog work shares their title's words", ("catalog", "remote")),
    "notice_not_work": ("the nearest catalog entry is a retraction or correction notice", ("catalog", "remote")),
    "too_close_to_call": ("two catalog works fit about equally well: never linked", ("by_hand",)),
    "no_identifier": ("no identifier, and no title to match", ("by_hand",)),
}
# the snapshots a catalog is built from (docs/user/catalog.md), as their files are named when downloaded
SNAPSHOTS = ("arXiv's arxiv-metadata-oai-snapshot.json, a Crossref public data file, OpenAlex's works/ folder "
             "or dblp.xml.gz")


def unresolved_lines(summary: RunSummary, inputs: Sequence[str], catalog: str, ledger: str,
                     remote: bool) -> list[str]:
    """The lines to print after a run's counts: each reason of the references left unresolved with
    its count, its meaning and its next steps, numbered, then each step's command once. Nothing when
    no reference stayed unresolved."""
    unresolved = summary.states.get("unresolved", 0)
    counted = {reason: n for reason, n in summary.reasons.items() if reason in UNRESOLVED_WHY and n}
    if not unresolved or not counted:
        return []
    rerun = (f"citeledger resolve {' '.join(shlex.quote(i) for i in inputs)} --catalog {shlex.quote(catalog)} "
             f"--ledger {shlex.quote(ledger)}")
    by_hand = ", ".join(f"'{r}'" for r in counted if "by_hand" in UNRESOLVED_WHY[r][1])
    steps = {
        "remote": (f"look them up at arXiv and Crossref: {rerun} --remote" if not remote else
                   "the remote services were asked already and hold none of them either"),
        "catalog": (f"add the works they cite to the catalog from a snapshot ({SNAPSHOTS}): citeledger catalog "
                    f"build --catalog {shlex.quote(catalog)} SNAPSHOT..., then run again: {rerun}"),
        "by_hand": (f"read them: citeledger query \"select citing_paper, reference_index, raw from current "
                    f"where status = 'unresolved' and reason in ({by_hand})\" --ledger {shlex.quote(ledger)}"),
    }
    order = list(dict.fromkeys(kind for reason in counted for kind in UNRESOLVED_WHY[reason][1]))
    number = {kind: i + 1 for i, kind in enumerate(order)}
    width = max(len(reason) for reason in counted)
    lines = [f"why {unresolved} {'reference stays' if unresolved == 1 else 'references stay'} unresolved, "
             "and what next:"]
    for reason, n in counted.items():
        meaning, kinds = UNRESOLVED_WHY[reason]
        lines.append(f"  {reason:<{width}}  {n:>8}  {meaning}: "
                     + ", then ".join(f"({number[kind]})" for kind in kinds))
    lines += [f"  ({number[kind]}) {steps[kind]}" for kind in order]
    return lines
