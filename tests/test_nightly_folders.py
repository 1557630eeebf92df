"""The nightly's folders are confined, and a night moves only what it read.

Its inbox, processed, catalog, ledger and catalog inbox must lie under the configured roots
(``nightly.roots``; symbolic links followed) and side by side, never one inside another: a night
given an unrelated folder, or ``processed`` inside its inbox, is refused in one line before
anything is read or moved, and a flow run refused so is ``failed`` in ``runs``, never
``finished``. An inbox entry the run read nothing from (a subfolder of notes) stays in the inbox.
"""
from __future__ import annotations

import json

import pytest
from test_nightly import REFS, built_catalog, night, site  # noqa: F401

from citeledger.app_errors import UsageError
from citeledger.cli import main
from citeledger.nightly.folders import confined_folders

KEYS = ("inbox", "processed", "catalog", "ledger", "catalog-inbox")


def folders_of(site, **changed):
    given = {**{k: site[k] for k in KEYS}, **changed}
    return (given["inbox"], given["processed"], given["catalog"], given["ledger"], given["catalog-inbox"])


def test_the_sites_folders_side_by_side_under_their_root_are_taken(site, tmp_path):
    folders = confined_folders(*folders_of(site), roots=[tmp_path])
    assert folders.inbox == site["inbox"].resolve() and folders.rejected == (tmp_path / "rejected").resolve()


@pytest.mark.parametrize("key", KEYS)
def test_a_folder_outside_the_roots_is_refused_naming_it(key, site, tmp_path):
    elsewhere = tmp_path.parent / f"{tmp_path.name}-unrelated" / key
    with pytest.raises(UsageError) as info:
        confined_folders(*folders_of(site, **{key: elsewhere}), roots=[tmp_path])
    message = str(info.value)
    assert f"{key.replace('-', '_')} {elsewhere}" in message and "outside the nightly's roots" in message
    assert "\n" not in message


def test_a_symbolic_link_out_of_the_root_is_followed_and_refused(site, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "linked-inbox").symlink_to(outside)
    with pytest.raises(UsageError, match="outside the nightly's roots"):
        confined_folders(*folders_of(site, inbox=tmp_path / "linked-inbox"), roots=[tmp_path])


@pytest.mark.parametrize("key, inside", [("processed", "inbox"), ("inbox", "processed"), ("ledger", "inbox"),
                                         ("ledger", "processed"), ("catalog", "inbox"), ("inbox", "ledger")])
def test_a_folder_inside_another_is_refused(key, inside, site, tmp_path):
    with pytest.raises(UsageError) as info:
        confined_folders(*folders_of(site, **{key: site[inside] / key}), roots=[tmp_path])
    assert f"{key} {(site[inside] / key).resolve()} lies inside {inside}" in str(info.value)


def test_the_same_folder_twice_is_refused(site, tmp_path):
    with pytest.raises(UsageError, match="inbox .* is processed"):
        confined_folders(*folders_of(site, processed=site["inbox"]), roots=[tmp_path])


def test_nightly_refuses_an_unrelated_inbox_before_anything_moves(site, tmp_path, monkeypatch, capsys):
    """Through the command: exit 2, one line; the unrelated folder and the ledger untouched."""
    unrelated = tmp_path.parent / f"{tmp_path.name}-documents"
    unrelated.mkdir()
    (unrelated / "budget.csv").write_text("a,b\n1,2\n")
    (unrelated / "photos").mkdir()
    (unrelated / "photos" / "notes.bib").write_text("@misc{x, title={x}}\n")
    before = sorted(p.relative_to(unrelated) for p in unrelated.rglob("*"))
    monkeypatch.setenv("CITELEDGER_NIGHTLY_ROOTS", str(tmp_path))
    code = main(["nightly", "--inbox", str(unrelated), "--processed", str(site["processed"]), "--catalog",
                 str(site["catalog"]), "--ledger", str(site["ledger"]), "--catalog-inbox", str(site["catalog-inbox"])])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith(f"citeledger: nightly: inbox {unrelated.resolve()} is outside"), err
    assert sorted(p.relative_to(unrelated) for p in unrelated.rglob("*")) == before
    assert not site["ledger"].exists() and not site["processed"].exists()


def test_an_inbox_entry_the_run_read_nothing_from_stays_in_the_inbox(site):
    notes = site["inbox"] / "notes"
    notes.mkdir()
    (notes / "readme.md").write_text("what this inbox is for\n")
    summary = night(site)
    assert summary["references"] == len(REFS) + 1  # refs.jsonl and the .bib file
    assert notes.is_dir() and (notes / "readme.md").is_file()
    assert not (site["inbox"] / "refs.jsonl").exists()
    assert not any(p.name == "notes" for p in site["processed"].rglob("*"))


@pytest.mark.flow
def test_a_night_refused_for_its_folders_is_failed_in_runs(site, tmp_path, monkeypatch):
    """``processed`` inside the inbox: the flow run fails before anything moves, and the ledger's
    ``runs`` says failed, with the reason (the night after used to be 'finished', exit 2)."""
    from citeledger.ledger.inspect import ledger_runs
    from flows.nightly import nightly as nightly_flow

    monkeypatch.setenv("CITELEDGER_NIGHTLY_ROOTS", str(tmp_path))
    inner = site["inbox"] / "processed"
    with pytest.raises(UsageError, match="lies inside inbox"):
        nightly_flow(inbox=str(site["inbox"]), processed=str(inner), catalog=str(site["catalog"]),
                     ledger=str(site["ledger"]), catalog_inbox=str(site["catalog-inbox"]), batch_size=2)
    from citeledger.ledger.ledger_store import LedgerStore

    runs = ledger_runs(site["ledger"])
    assert [r["state"] for r in runs] == ["failed"], runs
    assert (site["inbox"] / "refs.jsonl").is_file() and not inner.exists()
    failure = LedgerStore(site["ledger"]).run_failure(runs[0]["run_id"])
    assert failure is not None and "lies inside inbox" in json.loads(failure["errors"])[0]
