"""The nightly's site step: off unless a folder is given (``citeledger nightly --site OUT``, the
deployment's ``site`` parameter); given one, each night brings the site in it up to date last,
making again only the pages the night changed. A site folder inside the inbox (its pages would be
the next night's input) or outside the nightly's roots is refused in one line before anything is
read or moved."""
from __future__ import annotations

import json
import os

import pytest
from test_nightly import built_catalog, site  # noqa: F401

from citeledger.app_errors import UsageError
from citeledger.cli import main
from citeledger.nightly.folders import confined_folders

pytestmark = pytest.mark.flow


def nightly(site, *extra: str) -> int:  # noqa: F811 - the night's folders are test_nightly's ``site``
    return main(["nightly", "--inbox", str(site["inbox"]), "--processed", str(site["processed"]), "--catalog",
                 str(site["catalog"]), "--ledger", str(site["ledger"]), "--catalog-inbox", str(site["catalog-inbox"]),
                 "--batch-size", "2", *extra])


def inodes(folder) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_ino for p in folder.rglob("*")
            if p.is_file() and ".citeledger-site" not in p.parts}


def test_a_night_brings_the_site_up_to_date_only_when_asked(site, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("CITELEDGER_NIGHTLY_ROOTS", str(tmp_path))
    out = tmp_path / "site"
    assert nightly(site) == 0
    assert not out.exists() and not [p for p in tmp_path.iterdir() if ".citeledger-" in p.name]  # no site asked for

    assert nightly(site, "--site", str(out)) == 0  # nothing new tonight: the site of the ledger as it is
    index = (out / "index.html").read_text(encoding="utf-8")
    rows = json.loads(index.split('<script type="application/json" id="papers-data">', 1)[1].split("</script>")[0])
    assert sorted(r["id"] for r in rows) == ["2101.00001", "paper-a"]
    assert (out / "papers" / "paper-a.html").is_file() and (out / ".citeledger-site" / "manifest.json").is_file()
    first = inodes(out)

    (site["inbox"] / "paper-b.jsonl").write_text(json.dumps(
        {"citing_paper": "paper-b", "reference_index": 1, "raw": "Doe J. Nothing to see here. Nowhere. 1999;1:1-2."})
        + "\n")
    assert nightly(site, "--site", str(out)) == 0
    now = inodes(out)
    assert (out / "papers" / "paper-b.html").is_file() and "paper-b" in (out / "index.html").read_text("utf-8")
    assert now["papers/paper-a.html"] == first["papers/paper-a.html"]  # not made again: the same file
    assert now["papers/2101.00001.html"] == first["papers/2101.00001.html"]
    assert now["index.html"] != first["index.html"]
    assert not [p for p in tmp_path.iterdir() if "citeledger-staging" in p.name]


@pytest.mark.parametrize("where", ["inbox", "ledger"])
def test_a_site_inside_a_nights_folder_is_refused_before_anything_moves(where, site, tmp_path, monkeypatch,  # noqa: F811
                                                                      capsys):
    monkeypatch.setenv("CITELEDGER_NIGHTLY_ROOTS", str(tmp_path))
    out = site[where] / "site"
    before = sorted(os.listdir(site["inbox"]))
    assert nightly(site, "--site", str(out)) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"citeledger: nightly: site {out.resolve()} lies inside {where} {site[where].resolve()}: the night " \
                  "would read or move its own folders; give folders side by side"
    assert sorted(os.listdir(site["inbox"])) == before and not out.exists()


def test_a_site_outside_the_roots_is_refused(site, tmp_path):  # noqa: F811
    elsewhere = tmp_path.parent / f"{tmp_path.name}-www" / "site"
    with pytest.raises(UsageError, match=f"nightly: site {elsewhere} is outside the nightly's roots"):
        confined_folders(site["inbox"], site["processed"], site["catalog"], site["ledger"], site["catalog-inbox"],
                         [tmp_path], elsewhere)
    assert confined_folders(site["inbox"], site["processed"], site["catalog"], site["ledger"], site["catalog-inbox"],
                            [tmp_path], tmp_path / "site").site == (tmp_path / "site").resolve()
