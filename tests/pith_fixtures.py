"""The published Pith records and Pith's public key (tests/fixtures/pith), read fresh for each test."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PITH = Path(__file__).parent / "fixtures" / "pith"


def citation_record() -> dict[str, Any]:
    return json.loads((PITH / "pith-paper-citation-record-2501.00254.json").read_text("utf-8"))


def number_record() -> dict[str, Any]:
    return json.loads((PITH / "pith-number-record-2509.00217.json").read_text("utf-8"))


def key_document() -> dict[str, Any]:
    return json.loads((PITH / "pith-signing-key.json").read_text("utf-8"))


def member_paths(value, path=""):
    """Every member path of a JSON value (list items as ``[]``)."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out |= {f"{path}.{k}"} | member_paths(v, f"{path}.{k}")
    elif isinstance(value, list):
        for v in value:
            out |= member_paths(v, path + "[]")
    return out


def seed_keys_missing(pith: dict) -> set[str]:
    """The published record's members the export lacks, but for members of list items where the
    export's list is empty, and the members the published record itself has only sometimes (a
    measured notice's sentence, a cited paper)."""
    ours = member_paths(pith)
    missing = set()
    for path in member_paths(citation_record()) - ours:
        lists = [path[:i + 2] for i in range(len(path)) if path.startswith("[]", i)]
        if any(not any(k.startswith(q + ".") for k in ours) for q in lists):
            continue  # inside a list the export has no items in
        if path.endswith(".observation") or ".cited_paper" in path:
            continue
        missing.add(path)
    return missing


def path_types(value, path="", out=None) -> dict[str, set[str]]:
    """Every member path of a JSON value (list items as ``[]``) with the types its values have there."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            out.setdefault(f"{path}.{k}", set()).add(type(v).__name__)
            path_types(v, f"{path}.{k}", out)
    elif isinstance(value, list):
        for v in value:
            out.setdefault(path + "[]", set()).add(type(v).__name__)
            path_types(v, path + "[]", out)
    return out


def seed_type_gaps(pith: dict, seed: dict | None = None) -> set[str]:
    """Where an export says less than the published record: a member path of the seed missing, null
    where the seed always has a value, or never of a type the seed has there."""
    ours = path_types(pith)
    gaps = set()
    for path, types in path_types(seed or citation_record()).items():
        if path not in ours:
            gaps.add(f"{path}: missing")
            continue
        kinds = types - {"NoneType"}
        if kinds and "NoneType" not in types and "NoneType" in ours[path]:
            gaps.add(f"{path}: null where the published record always has a {'/'.join(sorted(kinds))}")
        if kinds - ours[path]:
            gaps.add(f"{path}: never a {'/'.join(sorted(kinds - ours[path]))}")
    return gaps
