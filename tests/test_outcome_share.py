"""Fuzzy outcomes shared by the workers of one pool (``citeledger.engine.fuzzy_outcomes``): a string one
worker matched is not matched again by another, with the same outcome; files are private,
bounded, and the folders of gone pools are removed."""
import dataclasses
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import pytest
from test_fuzzy_cache import RAWS, WORKS, _counting_retrievals

from citeledger.engine import fuzzy_outcomes as outcome_share
from citeledger.engine.fuzzy_outcomes import OutcomeShare, pool_owner, remove_stale, start_time
from resolvers.candidates.fuzzy import FuzzyResolver
from resolvers.candidates.retrieval import InMemoryRetriever
from resolvers.parsing.fields import parse_reference


def _matcher(folder):
    m = FuzzyResolver(InMemoryRetriever(WORKS))
    m.share = OutcomeShare(folder)
    return m


def test_a_string_one_worker_matched_is_taken_from_it_by_another(tmp_path, monkeypatch):
    asked = _counting_retrievals(monkeypatch)
    folder = tmp_path / "pool" / "gen"
    first, second = _matcher(folder), _matcher(folder)
    made = first.match_batch([parse_reference(r) for r in RAWS[:2]])
    n = len(asked)
    taken = second.match_batch([parse_reference(RAWS[1]), parse_reference(RAWS[0])])
    assert len(asked) == n  # nothing retrieved: both outcomes came from the first worker's file
    assert [dataclasses.astuple(o) for o in taken] == [dataclasses.astuple(o) for o in (made[1], made[0])]
    assert oct((tmp_path / "pool").stat().st_mode & 0o777) == "0o700"


def test_without_the_share_the_other_worker_matches_again(tmp_path, monkeypatch):
    asked = _counting_retrievals(monkeypatch)
    first, second = _matcher(tmp_path / "a" / "gen"), _matcher(tmp_path / "b" / "gen")
    first.match_batch([parse_reference(RAWS[0])])
    n = len(asked)
    second.match_batch([parse_reference(RAWS[0])])
    assert len(asked) > n


def test_a_worker_keeps_its_newest_files_and_removes_them_at_exit(tmp_path, monkeypatch):
    monkeypatch.setattr(outcome_share, "KEEP_FILES", 2)
    share = OutcomeShare(tmp_path / "pool" / "gen")
    for i in range(4):
        share.publish({("key", i): i})
    assert len(list((tmp_path / "pool" / "gen").iterdir())) == 2
    assert OutcomeShare(tmp_path / "pool" / "gen").take_new() == {("key", 2): 2, ("key", 3): 3}
    share.close()
    assert list((tmp_path / "pool" / "gen").iterdir()) == []


def test_a_folder_not_private_to_this_user_is_refused(tmp_path):
    (tmp_path / "pool").mkdir(mode=0o777)
    os.chmod(tmp_path / "pool", 0o777)
    with pytest.raises(PermissionError):
        OutcomeShare(tmp_path / "pool" / "gen")


@pytest.mark.skipif(start_time(os.getpid()) is None, reason="needs /proc")
def test_folders_of_gone_pools_are_removed(tmp_path):
    alive = tmp_path / f"{outcome_share.PREFIX}{os.getpid()}-{start_time(os.getpid())}"
    reused = tmp_path / f"{outcome_share.PREFIX}{os.getpid()}-1"  # same pid, another start: gone
    for folder in (alive, reused):
        (folder / "gen").mkdir(parents=True)
    remove_stale(tmp_path)
    assert alive.exists() and not reused.exists()


@pytest.mark.skipif(start_time(os.getpid()) is None, reason="needs /proc")
def test_only_pool_workers_share_and_they_name_their_pool():
    assert pool_owner() is None
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        owner = pool.submit(pool_owner).result()
    assert owner == f"{os.getpid()}-{start_time(os.getpid())}"
