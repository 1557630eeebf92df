"""The one staged write (``atomic.staged``) and the folder move (``atomic.publish_dir``)."""
import errno
import os
import stat

import pytest

from citeledger.app_errors import DiskFull
from citeledger.storage import atomic


def test_staged_renames_into_place_and_leaves_no_temp(tmp_path):
    target = tmp_path / "sub" / "file.bin"
    with atomic.staged(target) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".file.bin.")
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in target.parent.iterdir()] == ["file.bin"]


def test_a_failed_staged_write_keeps_the_old_bytes_and_removes_its_temp(tmp_path):
    target = tmp_path / "file.bin"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with atomic.staged(target) as tmp:
            tmp.write_bytes(b"half")
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.bin"]


def test_staged_in_a_staging_folder_with_a_mode_and_a_full_disk(tmp_path):
    target, staging = tmp_path / "out" / "a.parquet", tmp_path / ".staging"
    with atomic.staged(target, staging, mode=0o644) as tmp:
        assert tmp.parent == staging
        tmp.write_bytes(b"x")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644 and not list(staging.iterdir())
    with pytest.raises(DiskFull, match="a.parquet"):
        with atomic.staged(target, staging):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_bytes() == b"x" and not list(staging.iterdir())


def test_publish_dir_moves_a_whole_folder(tmp_path):
    src, dest = tmp_path / ".building" / "gen-000001", tmp_path / "gen-000001"
    (src / "deep").mkdir(parents=True)
    (src / "deep" / "a").write_bytes(b"a")
    atomic.publish_dir(src, dest)
    assert (dest / "deep" / "a").read_bytes() == b"a" and not src.exists()


def test_atomic_write_files_publishes_a_batch_with_one_sync(tmp_path, monkeypatch):
    syncs = []  # at the sync: the staged files, whole, each with a name the leftover sweep knows

    def staged_at_sync():
        syncs.append(sorted((p.name, p.read_bytes()) for p in tmp_path.rglob(".*.tmp")))

    monkeypatch.setattr(atomic.os, "sync", staged_at_sync)
    (tmp_path / "a.json").write_bytes(b"old")
    files = [(tmp_path / "a.json", b"new a"), (tmp_path / "b.txt", b"b"), (tmp_path / "sub" / "c.html", b"c")]
    atomic.atomic_write_files(files)
    assert [p.read_bytes() for p, _ in files] == [b"new a", b"b", b"c"]
    assert len(syncs) == 1 and not list(tmp_path.rglob("*.tmp"))
    assert sorted(data for _, data in syncs[0]) == [b"b", b"c", b"new a"]
    assert all(name.startswith((".a.json.", ".b.txt.", ".c.html.")) for name, _ in syncs[0])
    assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o644


def test_a_failed_batch_publishes_nothing_and_leaves_no_temp(tmp_path, monkeypatch):
    """A full disk while the second file of a batch is written: no file of the batch is published
    (the first keeps its old bytes) and no staged temp is left."""
    (tmp_path / "a.json").write_bytes(b"old")
    real_write, written = atomic.os.write, []

    def write(fd, data):
        written.append(fd)
        if len(written) == 1:
            return real_write(fd, data)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", write)
    with pytest.raises(DiskFull, match="b.json"):
        atomic.atomic_write_files([(tmp_path / "a.json", b"new"), (tmp_path / "b.json", b"b")])
    assert (tmp_path / "a.json").read_bytes() == b"old" and not (tmp_path / "b.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"] and len(written) == 2


def test_synced_batches_publish_each_batch_after_its_sync_in_another_thread(tmp_path, monkeypatch):
    """``SyncedBatches``: a batch's sync runs off the caller's thread while the next is made; the
    batch is renamed into place at the next ``add`` (or ``close``), never before its sync returned."""
    import threading

    syncs = []  # per sync: its thread, and the staged temps and published files it found

    def sync():
        syncs.append((threading.current_thread() is threading.main_thread(),
                      sorted(p.name for p in tmp_path.rglob(".*.tmp")), sorted(p.name for p in tmp_path.glob("*.json"))))

    monkeypatch.setattr(atomic.os, "sync", sync)
    batches = atomic.SyncedBatches()
    batches.add([(tmp_path / "a.json", b"a"), (tmp_path / "b.json", b"b")])
    batches.add([(tmp_path / "c.json", b"c")])
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["a.json", "b.json"]  # c waits for close
    batches.close()
    assert [p.read_bytes() for p in sorted(tmp_path.glob("*.json"))] == [b"a", b"b", b"c"]
    assert not list(tmp_path.rglob("*.tmp")) and [main for main, _, _ in syncs] == [False, False]
    staged_at = [{name.split(".")[1] for name in staged} for _, staged, _ in syncs]  # a later batch may be staged too
    assert staged_at[0] >= {"a", "b"} and staged_at[1] == {"c"} and syncs[0][2] == []


def test_synced_batches_failed_sync_or_abort_publish_nothing_and_leave_no_temp(tmp_path, monkeypatch):
    def failing_sync():
        raise OSError(errno.EIO, "I/O error")

    (tmp_path / "a.json").write_bytes(b"old")
    monkeypatch.setattr(atomic.os, "sync", failing_sync)
    batches = atomic.SyncedBatches()
    batches.add([(tmp_path / "a.json", b"new")])
    with pytest.raises(OSError, match="I/O error"):
        batches.close()
    assert (tmp_path / "a.json").read_bytes() == b"old" and not list(tmp_path.rglob("*.tmp"))
    monkeypatch.setattr(atomic.os, "sync", lambda: None)
    batches = atomic.SyncedBatches()
    batches.add([(tmp_path / "b.json", b"b")])
    batches.abort()  # the writer failed before close: the staged batch goes, unpublished
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_batch_gets_its_mode_whatever_the_umask_and_chmods_only_when_needed(tmp_path, monkeypatch, umask):
    """A batch's files are created with their mode when the umask keeps it (no ``fchmod`` a file),
    else made private and given the mode once written: 0644 either way."""
    chmods = []
    real_fchmod = atomic.os.fchmod
    monkeypatch.setattr(atomic.os, "fchmod", lambda fd, mode: chmods.append(mode) or real_fchmod(fd, mode))
    monkeypatch.setattr(atomic.os, "sync", lambda: None)
    old = os.umask(umask)
    try:
        atomic.atomic_write_files([(tmp_path / "a.json", b"a"), (str(tmp_path / "b.txt"), b"b")])
    finally:
        os.umask(old)
    assert [stat.S_IMODE((tmp_path / n).stat().st_mode) for n in ("a.json", "b.txt")] == [0o644, 0o644]
    assert chmods == ([] if umask & 0o644 == 0 else [0o644, 0o644])
