"""The identifier path's batch steps give what the per-reference steps gave: one read of inputs
that repeat no reference (citeledger/unique_inputs.OnePass), and the notice rows of works no
source has an event for, made once per kind (citeledger/notice_check.work_notice_rows)."""
import json
from datetime import datetime

import pytest

from citeledger.catalog.catalog_store import CatalogStore
from citeledger.engine.process_cache import get_catalog, get_notice_index
from citeledger.index import notice_files as notice_file
from citeledger.index.blocking import WORKS_ARROW, map_ipc
from citeledger.inputs import dedupe as unique_inputs
from citeledger.inputs.rows import InputLimits
from citeledger.run import finishing, notice_check, planning
from resolvers.notices.standing import notice_row


def _rows(path, rows):
    path.write_text("".join(json.dumps({"citing_paper": p, "reference_index": i, "raw": raw}) + "\n"
                            for p, i, raw in rows))
    return path


def _plan(tmp_path, catalog, inputs, name):
    plan = planning.plan_run(inputs, catalog, tmp_path / name, run_id="r", batch_size=2)
    finishing.abandon_run(plan)
    return ([(j.part, j.references) for j in plan.jobs], sorted(r.message for r in plan.rejects))


def _count_reads(monkeypatch):
    reads = []
    real = unique_inputs.read_references

    def counted(path, *args, **kwargs):
        reads.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(unique_inputs, "read_references", counted)
    return reads


@pytest.mark.parametrize("repeat", [False, True])
def test_inputs_are_read_once_unless_a_reference_repeats(tmp_path, default_catalog, monkeypatch, repeat):
    a = _rows(tmp_path / "a.jsonl", [("p", 1, "one"), ("p", 2, "two"), ("q", 1, "three")])
    b = _rows(tmp_path / "b.jsonl", [("q", 2, "four"), ("p", 1, "another one" if repeat else "one")] if repeat
              else [("q", 2, "four"), ("q", 3, "five")])
    reads = _count_reads(monkeypatch)
    got = _plan(tmp_path, default_catalog, [a, b], "once")
    assert len(reads) == (2 + 3 * 2 if repeat else 2)  # a repeat: read again, by iter_unique's three passes
    monkeypatch.setattr(unique_inputs.OnePass, "__init__", _unusable)
    assert got == _plan(tmp_path, default_catalog, [a, b], "twice")  # the same batches and rejects
    assert any("conflicting duplicates" in m for m in got[1]) == repeat


def _unusable(self, *args, **kwargs):
    self.usable, self.repeats = False, False


@pytest.mark.parametrize("which", ["default", "fixture"])
def test_notice_rows_of_works_without_events_are_those_of_the_full_check(which, default_catalog, fixture_catalog):
    catalog_dir = default_catalog if which == "default" else fixture_catalog
    generation = CatalogStore(catalog_dir).current()
    work_ids = map_ipc(generation / WORKS_ARROW).column("work_id").to_pylist()
    rows = notice_check.work_notice_rows(catalog_dir, work_ids, "r")
    catalog = get_catalog(catalog_dir)
    index, checked_at = get_notice_index(catalog), catalog.manifest.get("built_at")
    works = catalog.work_rows(work_ids, notice_file.NOTICE_COLUMNS)
    expected = []
    for work_id, work in sorted(works.items()):
        row = notice_row(work_id, work.get("doi"), notice_check.work_notice(work, index, checked_at))
        row["run_id"] = "r"
        row["checked_at"] = datetime.fromisoformat(row["checked_at"]) if row["checked_at"] else None
        expected.append(row)
    assert rows == expected
    assert any(r["standing"] != "none" for r in rows) and any(r["standing"] == "none" for r in rows)


def test_one_pass_hashes_every_reference():
    once = unique_inputs.OnePass([], InputLimits())
    assert list(once.items()) == [] and not once.repeats
