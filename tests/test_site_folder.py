"""``citeledger site OUT`` touches only what it wrote: a folder of other files is refused unless the
user allows them, and then they survive every build (their bytes, times and inodes); a page the
site would write where a file of the user's is, and a link where the site keeps a folder, refuse
the build and change nothing; the site's own files of an earlier build that the new one does not
make are removed, and only those. A record file that fails its check is left out with a note on
the index, and the build goes on."""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from citeledger import cli

REPO = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, default_catalog) -> Path:
    """The sample ledger as ``make run`` makes it, with its records written (unsigned: no key)."""
    ledger = tmp_path_factory.mktemp("site-folder") / "ledger"
    assert cli.main(["resolve", str(REPO / "data" / "sample_references.jsonl"), "--catalog", str(default_catalog),
                     "--ledger", str(ledger)]) == 0
    assert cli.main(["records", "--ledger", str(ledger), "--catalog", str(default_catalog)]) == 0
    return ledger


def site(out: Path, ledger: Path, catalog: Path, *extra: str) -> int:
    return cli.main(["site", str(out), "--ledger", str(ledger), "--catalog", str(catalog), *extra])


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under ``folder`` (links not followed): its kind, bytes or target, time and inode."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            status = path.lstat()
            if path.is_symlink():
                found[str(path.relative_to(folder))] = ("link", os.readlink(path), status.st_ino)
            elif path.is_dir():
                found[str(path.relative_to(folder))] = ("folder",)
            else:
                found[str(path.relative_to(folder))] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(),
                                                        status.st_mtime_ns, status.st_ino)
    return found


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def users_folder(tmp_path: Path) -> tuple[Path, Path]:
    """An OUT holding a user's pages in ``papers/`` and ``works/``, a folder of theirs and a link to
    a folder outside; and that outside folder, with its own page."""
    out, outside = tmp_path / "out", tmp_path / "outside"
    (out / "papers").mkdir(parents=True)
    (out / "works").mkdir()
    (out / "mine").mkdir()
    outside.mkdir()
    (out / "papers" / "my-notes.html").write_text("<p>my notes</p>")
    (out / "works" / "portfolio.html").write_text("<p>my portfolio</p>")
    (out / "mine" / "draft.txt").write_text("a draft")
    (outside / "keep.html").write_text("<p>not the site's</p>")
    (out / "elsewhere").symlink_to(outside, target_is_directory=True)
    return out, outside


def test_a_folder_of_other_files_is_refused_and_left_as_it_was(tmp_path, ledger, default_catalog, capsys):
    out, outside = users_folder(tmp_path)
    before, beside = snapshot(out), snapshot(outside)
    assert site(out, ledger, default_catalog) == 2
    err = one_line_error(capsys)
    assert str(out) in err and "--allow-other-files" in err and "not a citeledger site" in err
    assert snapshot(out) == before and snapshot(outside) == beside
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.citeledger-lock", "out", "outside"]


def test_other_files_survive_every_build(tmp_path, ledger, default_catalog):
    out, outside = users_folder(tmp_path)
    before, beside = snapshot(out), snapshot(outside)
    assert site(out, ledger, default_catalog, "--allow-other-files") == 0
    assert (out / "index.html").is_file() and (out / "papers" / "citeledger-identifier-sample.html").is_file()
    after = snapshot(out)
    assert {k: after[k] for k in before} == before  # the same files: bytes, times, inodes; the link a link
    assert snapshot(outside) == beside
    assert site(out, ledger, default_catalog) == 0  # a citeledger site now: no flag needed, still kept
    assert {k: v for k, v in snapshot(out).items() if k in before} == before and snapshot(outside) == beside
    manifest = json.loads((out / ".citeledger-site" / "manifest.json").read_text())
    assert not set(manifest["files"]) & set(before)  # never listed as the site's own


def test_a_users_page_where_the_site_writes_one_refuses_the_build(tmp_path, ledger, default_catalog, capsys):
    out = tmp_path / "out"
    (out / "papers").mkdir(parents=True)
    (out / "index.html").write_text("<p>my own index</p>")
    (out / "papers" / "my-notes.html").write_text("<p>my notes</p>")
    before = snapshot(out)
    assert site(out, ledger, default_catalog, "--allow-other-files") == 2
    err = one_line_error(capsys)
    assert f"{out / 'index.html'}" in err and "nothing was changed" in err
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir() if "staging" in p.name] == []


def test_a_link_where_the_site_keeps_a_folder_is_never_followed(tmp_path, ledger, default_catalog, capsys):
    """The user's OUT/papers is a link to a folder of their pages: refused with or without the flag,
    and a built site whose papers/ was replaced by such a link likewise; the linked pages survive."""
    outside = tmp_path / "theirs"
    outside.mkdir()
    for name in ("a.html", "citeledger-identifier-sample.html"):
        (outside / name).write_text(f"<p>{name}</p>")
    beside = snapshot(outside)
    out = tmp_path / "out"
    out.mkdir()
    (out / "papers").symlink_to(outside, target_is_directory=True)
    for extra in ((), ("--allow-other-files",)):
        assert site(out, ledger, default_catalog, *extra) == 2
        err = one_line_error(capsys)
        assert f"{out / 'papers'}: a symbolic link" in err
        assert snapshot(outside) == beside
    built = tmp_path / "built"
    assert site(built, ledger, default_catalog) == 0
    os.rename(built / "papers", tmp_path / "old-papers")
    (built / "papers").symlink_to(outside, target_is_directory=True)
    assert site(built, ledger, default_catalog) == 2
    assert "a symbolic link" in one_line_error(capsys) and snapshot(outside) == beside


def test_a_page_edited_after_the_build_is_not_overwritten(tmp_path, ledger, default_catalog, capsys):
    out = tmp_path / "out"
    assert site(out, ledger, default_catalog) == 0
    page = out / "papers" / "2212.11766.html"
    page.write_text("<p>my corrections</p>")
    assert site(out, ledger, default_catalog) == 2
    assert str(page) in one_line_error(capsys)
    assert page.read_text() == "<p>my corrections</p>"


def test_out_is_a_file(tmp_path, ledger, default_catalog, capsys):
    out = tmp_path / "out.html"
    out.write_text("mine")
    assert site(out, ledger, default_catalog) == 2
    assert "not a folder" in one_line_error(capsys) and out.read_text() == "mine"


def test_a_second_build_changes_only_what_changed(tmp_path, ledger, default_catalog, capsys):
    """Built twice from the same ledger: the second writes no page, and every file is the same inode."""
    out = tmp_path / "out"
    assert site(out, ledger, default_catalog) == 0
    first = {k: v for k, v in snapshot(out).items() if not k.startswith(".citeledger-site")}
    capsys.readouterr()
    assert site(out, ledger, default_catalog) == 0
    assert re.search(r": \d+ files, 0 written, \d+ unchanged \(0 papers' pages made", capsys.readouterr().out)
    assert {k: v for k, v in snapshot(out).items() if not k.startswith(".citeledger-site")} == first


def tamper(path: Path, change) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    path.write_text(json.dumps(record), encoding="utf-8")


def test_a_record_file_that_fails_its_check_is_left_out_with_a_note(tmp_path, ledger, default_catalog):
    """A record whose content no longer matches its digest, and one that is not JSON at all: each left
    out with its reason on the index; every other paper has its page."""
    copy = tmp_path / "ledger"
    import shutil

    shutil.copytree(ledger, copy)
    tamper(copy / "records" / "2212.11766.json",
           lambda r: r["paper"].update(work={"title": "</script><script>document.title='pwned'</script>"}))
    (copy / "records" / "2212.11770.json").write_bytes(b"\xff\xfe not json")
    out = tmp_path / "out"
    assert site(out, copy, default_catalog) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    note = index.split('<div class="left-out" id="left-out">', 1)[1].split("</div>", 1)[0]
    assert "2 record files" in note and "records/2212.11766.json" in note and "content_digest" in note
    assert "records/2212.11770.json" in note and "cannot read a JSON record" in note
    assert not (out / "papers" / "2212.11766.html").exists() and not (out / "papers" / "2212.11770.html").exists()
    assert (out / "papers" / "citeledger-identifier-sample.html").is_file()
    assert "pwned" not in index


def test_the_spare_build_is_brought_to_the_new_one_without_bringing_back_what_a_user_removed(
        tmp_path, ledger, default_catalog, capsys):
    """From the third build on, the build before last (the spare beside OUT, its unchanged pages the
    same files as OUT's) is staged in: what a user added to OUT since is carried, what a user removed
    stays removed, and the published site is the same as a fresh one's."""
    out = tmp_path / "out"
    (out / "mine").mkdir(parents=True)
    (out / "mine" / "a.txt").write_text("a")
    (out / "b.txt").write_text("b")
    for _ in range(2):
        assert site(out, ledger, default_catalog, "--allow-other-files") == 0
    spare = tmp_path / ".out.citeledger-spare"
    assert (spare / ".citeledger-site" / "manifest.json").is_file()
    assert (spare / "index.html").stat().st_ino == (out / "index.html").stat().st_ino  # the same file
    (out / "b.txt").unlink()
    (out / "mine" / "a.txt").unlink()
    (out / "mine").rmdir()
    (out / "c.txt").write_text("c")
    before = {k: v for k, v in snapshot(out).items() if not k.startswith(".citeledger-site")}
    capsys.readouterr()
    assert site(out, ledger, default_catalog) == 0
    assert re.search(r": \d+ files, 0 written, \d+ unchanged \(0 papers' pages made", capsys.readouterr().out)
    after = {k: v for k, v in snapshot(out).items() if not k.startswith(".citeledger-site")}
    assert after == before  # c.txt carried; b.txt and mine/ not brought back; every page the same file
    fresh = tmp_path / "fresh"
    assert site(fresh, ledger, default_catalog) == 0
    assert {k: v[1] for k, v in snapshot(fresh).items() if v[0] == "file" and "citeledger-site" not in k} == \
        {k: v[1] for k, v in after.items() if v[0] == "file" and k != "c.txt"}


def test_an_incremental_build_is_byte_for_byte_a_full_one(tmp_path, ledger, default_catalog, capsys):
    """A site built, then the ledger grows (a new paper read from its e-print, with its title; the
    papers it touches get their records again), then the site built again: it makes again only what
    changed, and every file is the same bytes as a full build's of the grown ledger into a new folder."""
    import shutil

    grown = tmp_path / "ledger"
    shutil.copytree(ledger, grown)
    out = tmp_path / "out"
    assert site(out, grown, default_catalog) == 0
    assert site(out, grown, default_catalog) == 0  # the spare is made: the next build is staged in it
    assert cli.main(["resolve", str(REPO / "tests" / "fixtures" / "papers" / "1911.13021.tar.gz"), "--catalog",
                     str(default_catalog), "--ledger", str(grown)]) == 0
    assert cli.main(["records", "--ledger", str(grown), "--catalog", str(default_catalog)]) == 0
    capsys.readouterr()
    assert site(out, grown, default_catalog) == 0
    said = capsys.readouterr().out
    made = int(re.search(r"\((\d+) papers' pages made", said).group(1))
    assert 1 <= made < 6  # the new paper (and those whose records were written again), not all six
    fresh = tmp_path / "fresh"
    assert site(fresh, grown, default_catalog) == 0

    def files(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
                if p.is_file() and ".citeledger-site" not in p.parts}

    incremental, full = files(out), files(fresh)
    assert incremental.keys() == full.keys() and len(full) > 200
    assert [name for name in full if incremental[name] != full[name]] == []
    assert "Efficient Calibration of Embedded MPC" in full["index.html"].decode()
