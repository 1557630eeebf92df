"""What a finished run reports: one typed summary shared by the run's finishing (``settle_run``), the
CLI's printout, the orchestration and the flows' artifacts. Flows return ``as_dict()`` (JSON)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from resolvers.model import linked_count


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    references: int
    rejects: int
    states: dict[str, int]  # every state, in the order they are decided
    reasons: dict[str, int]  # the rules' reasons that occurred, in the enum's order
    seconds: float
    resumed: bool
    references_per_second: float | None
    transitions: int
    inputs: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    reject_messages: list[str] = field(default_factory=list)  # the first 20
    records: int | None = None  # citation records rebuilt after the run, when asked for
    search: dict[str, Any] = field(default_factory=dict)  # what the search step spent, when on
    remote: dict[str, Any] = field(default_factory=dict)  # circuits opened, requests refused, remote time
    skipped: dict[str, int] = field(default_factory=dict)  # entries of input folders left out, by why
    reference_changes: int = 0  # known (citing_paper, reference_index) that came with another raw string

    @property
    def links(self) -> int:
        """References linked to a work (``resolvers.model.linked_count``: verified_exact + verified_fuzzy)."""
        return linked_count(self.states)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        """Back from ``as_dict`` (what a flow run returns); keys that are not fields are ignored."""
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})

    def notes(self) -> list[str]:
        """What the counts alone do not say: entries of input folders left out (one line per kind),
        the remote services whose circuit opened and requests the run's remote time refused (one
        line each), and known references that came with another raw string."""
        lines = [f"skipped {n} {'entry' if n == 1 else 'entries'} of the input folders: {why}"
                 for why, n in self.skipped.items()]
        lines += remote_notes(self.remote)
        if self.reference_changes:
            lines.append(f"{self.reference_changes} references already in the ledger came with another raw "
                         "string: the newer one is current (query the reference_changes view for old and new)")
        return lines

    def with_records(self, records: int) -> RunSummary:
        return dataclasses.replace(self, records=records)

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["links"] = self.links
        if self.records is None:
            del out["records"]
        for empty in ("search", "remote"):
            if not out[empty]:
                del out[empty]
        return out


def remote_notes(remote: dict[str, Any]) -> list[str]:
    """One line per service whose circuit opened, and one when the run's remote time ran out."""
    lines = []
    for service, circuit in remote.get("services", {}).items():
        openings = circuit["openings"]
        lines.append(f"{service}: circuit {circuit['state']} after {openings} opening{'s' * (openings != 1)} "
                     f"({circuit['why']}); {circuit['refused']:,} requests not sent: unavailable, asked again "
                     "on the next run")
    if remote.get("refused") or remote.get("cut"):
        lines.append(f"remote time: the run's {remote['max_run_seconds']:g} s (remote.max_run_seconds) were spent; "
                     f"{remote.get('cut', 0):,} requests cut, {remote['refused']:,} not sent: unavailable, asked "
                     "again on the next run")
    return lines


def state_table(summary: RunSummary) -> list[dict[str, Any]]:
    """The run's references by state (every state, in deciding order) with their share: the rows
    of the flows' state-count table artifact."""
    total = sum(summary.states.values())
    return [{"state": state, "references": count, "share": f"{100 * count / total:.1f}%" if total else "-"}
            for state, count in summary.states.items()]


def step_table(seconds: dict[str, float], counts: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per step in the order the steps ran: seconds and what the step counted (the rows
    of the flows' step-timing table artifact)."""
    counts = counts or {}
    return [{"step": step, "seconds": round(value, 3), "counts": counts.get(step, "")}
            for step, value in seconds.items()]
