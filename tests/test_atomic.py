"""The one staged write (``atomic.staged``) and the folder move (``atomic.publish_dir``)."""
import errno
import stat

import pytest

from citeledger import atomic
from resolvers.errors import DiskFull


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
