"""Papers as run inputs: a directory of papers, each file or sub-folder one paper,
through ``citeledger resolve``; bad papers are reject rows naming file, member and reason, and
the run goes on; nothing is written outside the ledger."""
from __future__ import annotations

import gzip
import json
import shutil
import tarfile
from pathlib import Path

import duckdb
import pytest
from archives import tar_bytes

from citeledger import cli
from citeledger.app_errors import InputError
from citeledger.inputs.files import prepare_inputs
from citeledger.inputs.read_input import read_references

FIXTURES = Path(__file__).parent / "fixtures" / "papers"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())


def paper_directory(root: Path) -> Path:
    """Three real papers (a gzipped .tex, a tarball, an unpacked folder) and five bad ones."""
    papers = root / "papers"
    papers.mkdir()
    for name in ("1202.3665.gz", "1911.13021.tar.gz"):
        shutil.copy(FIXTURES / name, papers / name)
    with tarfile.open(FIXTURES / "1606.03757.tar") as archive:
        folder = papers / "1606.03757"
        folder.mkdir()
        for member in archive.getmembers():
            (folder / member.name).write_bytes(archive.extractfile(member).read())
    whole = (FIXTURES / "2006.02250.tar.gz").read_bytes()
    (papers / "2501.00001.tar.gz").write_bytes(whole[: len(whole) // 2])  # truncated
    (papers / "2501.00002.tex").write_bytes(bytes(range(256)) * 30)  # binary junk named .tex
    main = b"\\documentclass{article}\\begin{document}\\input{a}\\input{refs.bbl}\\end{document}"
    bbl = b"\\begin{thebibliography}{1}\\bibitem{x} A. Author, A real title of a paper, 2001.\\end{thebibliography}"
    (papers / "2501.00003.tar.gz").write_bytes(tar_bytes({"ms.tex": main, "a.tex": b"\\input{b}", "b.tex": b"\\input{a}",
                                                       "refs.bbl": bbl, "../escape.bbl": bbl, "/etc/x.bib": b"@misc{}"}))
    (papers / "my-paper.tar.gz").write_bytes(tar_bytes({"ms.bbl": bbl}))  # a name with no arXiv id
    return papers


def test_a_directory_of_papers_resolves_with_every_paper_accounted_for(tmp_path, fixture_catalog):
    """Before: IsADirectoryError traceback (now each entry is a paper: references or rejects)."""
    papers = paper_directory(tmp_path)
    before = sorted(p for p in tmp_path.rglob("*"))
    ledger = tmp_path / "ledger"
    assert cli.main(["resolve", str(papers), "--catalog", str(fixture_catalog), "--ledger", str(ledger)]) == 0
    assert sorted(p for p in tmp_path.rglob("*") if ledger not in p.parents and p != ledger) == before
    con = duckdb.connect()
    counts = dict(con.sql(f"select citing_paper, count(*) from read_parquet('{ledger}/observations/**/*.parquet') "
                          "group by 1").fetchall())
    assert counts == {"1202.3665": 34, "1911.13021": 19, "1606.03757": 33, "2501.00003": 1}
    rejects = con.sql(f"select file, reason from read_parquet('{ledger}/rejects/**/*.parquet') order by 1").fetchall()
    by_code = {(file.replace(str(papers) + "/", ""), reason.split(":")[0]) for file, reason in rejects}
    assert by_code == {("2501.00001.tar.gz", "corrupt_archive"), ("2501.00002.tex!2501.00002.tex", "not_text"),
                       ("2501.00003.tar.gz!../escape.bbl", "unsafe_member_name"),
                       ("2501.00003.tar.gz!/etc/x.bib", "unsafe_member_name"),
                       ("2501.00003.tar.gz!b.tex", "input_loop"), ("my-paper.tar.gz", "no_citing_paper")}


def test_a_tex_file_is_a_paper_not_a_csv(tmp_path):
    """Before: 'CSV header lacks required column(s)'."""
    tex = tmp_path / "2501.00254v1.tex"
    tex.write_text("\\documentclass{article}\\begin{document}\\begin{thebibliography}{9}\n"
                   "\\bibitem{a} J. Smith, A title of some length, Phys. Rev. D 1, 2 (2001).\n"
                   "\\end{thebibliography}\\end{document}\n")
    (source,) = prepare_inputs([tex])
    rows = list(read_references(source.path, name=source.name, kind=source.kind))
    assert [(r.citing_paper, r.reference_index, r.source, r.raw) for r in rows] == [
        ("2501.00254", 1, "tex", "J. Smith, A title of some length, Phys. Rev. D 1, 2 (2001).")]


def test_a_gzipped_eprint_without_a_telling_suffix_is_recognised_by_its_bytes(tmp_path):
    path = tmp_path / "hep-th9901001"
    path.write_bytes(gzip.compress(gzip.decompress((FIXTURES / "1202.3665.gz").read_bytes())))
    (source,) = prepare_inputs([path])
    rows = list(read_references(source.path, name=source.name, kind=source.kind))
    assert len(rows) == 34 and {r.citing_paper for r in rows} == {"hep-th/9901001"}


def test_a_folder_named_by_its_id_or_the_citing_paper_option_is_one_paper(tmp_path):
    folder = tmp_path / "2006.02250"
    folder.mkdir()
    with tarfile.open(FIXTURES / "2006.02250.tar.gz") as archive:
        for member in archive.getmembers():
            (folder / member.name).write_bytes(archive.extractfile(member).read())
    (source,) = prepare_inputs([folder])
    assert source.kind == "paper_folder"
    rows = list(read_references(source.path, name=source.name, kind=source.kind))
    assert len(rows) == EXPECTED["2006.02250.tar.gz"]["entries"] and {r.source for r in rows} == {"bib"}
    renamed = folder.rename(tmp_path / "my paper")
    (source,) = prepare_inputs([renamed], citing_paper="p-1")
    rows = list(read_references(source.path, citing_paper="p-1", name=source.name, kind=source.kind))
    assert {r.citing_paper for r in rows} == {"p-1"}


def test_a_paper_given_alone_with_no_id_is_an_error_before_the_run(tmp_path):
    path = tmp_path / "paper.tar.gz"
    shutil.copy(FIXTURES / "1911.13021.tar.gz", path)
    with pytest.raises(InputError, match="gives no arXiv id"):
        prepare_inputs([path])
    assert len(prepare_inputs([path], citing_paper="x")) == 1


def test_a_bst_artefact_in_a_bib_comes_out_parse_uncertain(tmp_path, fixture_catalog):
    """Before: the raw string was the BibTeX source, which came out unresolved."""
    bib = tmp_path / "2501.00254.bib"
    bib.write_text("@misc{x, note={write newline}}\n@article{y, author={Smith, J.}, title={A title that is real},"
                   " journal={J. Things}, year=2001}\n")
    ledger = tmp_path / "ledger"
    assert cli.main(["resolve", str(bib), "--catalog", str(fixture_catalog), "--ledger", str(ledger)]) == 0
    rows = duckdb.sql(f"select reference_index, raw, status from read_parquet('{ledger}/observations/**/*.parquet') "
                      "order by 1").fetchall()
    assert rows[0] == (1, "write newline.", "parse_uncertain")
    assert rows[1][1] == "J. Smith. A title that is real. J. Things, 2001." and rows[1][2] != "parse_uncertain"


def test_the_papers_limits_come_from_the_configuration(tmp_path):
    from citeledger.config import load_config
    from resolvers.errors import ConfigError

    (tmp_path / "citeledger.toml").write_text("[papers]\nmax_members = 50\nmax_input_depth = 3\n")
    config = load_config(env={"CITELEDGER_PAPERS_MAX_MEMBER_BYTES": "4096"}, cwd=tmp_path)
    assert (config.papers.max_members, config.papers.max_input_depth, config.papers.max_member_bytes) == (50, 3, 4096)
    (tmp_path / "elsewhere").mkdir()
    assert load_config(env={}, cwd=tmp_path / "elsewhere").papers.max_total_bytes == 256 << 20
    with pytest.raises(ConfigError, match="papers.max_members"):
        load_config(env={"CITELEDGER_PAPERS_MAX_MEMBERS": "0"}, cwd=tmp_path)


def test_a_run_reads_papers_within_the_configured_limits_and_keeps_them_for_a_resume(tmp_path, fixture_catalog,
                                                                                   monkeypatch):
    from citeledger.run import finishing, planning

    (tmp_path / "citeledger.toml").write_text("[papers]\nmax_member_bytes = 1000\n")
    monkeypatch.chdir(tmp_path)
    paper = tmp_path / "1911.13021.tar.gz"
    shutil.copy(FIXTURES / "1911.13021.tar.gz", paper)
    plan = planning.plan_run([paper], fixture_catalog, tmp_path / "ledger", run_id="small")
    finishing.abandon_run(plan)
    assert plan.references == 0 and {r.reason.split(":")[0] for r in plan.rejects} == {"member_too_large",
                                                                                       "no_bibliography"}
    (tmp_path / "citeledger.toml").write_text("")  # a resume reads as the run started, not as configured now
    again = planning.plan_run([paper], fixture_catalog, tmp_path / "ledger", run_id="small")
    finishing.abandon_run(again)
    assert again.resumed and again.references == 0


def test_two_versions_of_one_paper_are_settled_as_duplicates_and_other_papers_read_once(tmp_path, monkeypatch):
    from citeledger.inputs.dedupe import read_inputs
    from citeledger.inputs.rows import InputLimits

    papers = tmp_path / "papers"
    papers.mkdir()
    shutil.copy(FIXTURES / "1911.13021.tar.gz", papers / "2501.00254v1.tar.gz")
    shutil.copy(FIXTURES / "2006.02250.tar.gz", papers / "2501.00254v2.tar.gz")  # another list, same paper id
    shutil.copy(FIXTURES / "1606.03757.tar", papers / "1606.03757v1.tar")
    shutil.copy(FIXTURES / "1606.03757.tar", papers / "1606.03757v2.tar")  # the same bytes twice
    shutil.copy(FIXTURES / "1202.3665.gz", papers / "1202.3665.gz")
    from papers import reader as paper_reader  # (paper_inputs loads its readers on use)

    reads = []
    real = paper_reader.read_paper

    def counted(name, *args, **kwargs):
        reads.append(Path(name).name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(paper_reader, "read_paper", counted)
    refs, rejects = read_inputs([papers], InputLimits())
    # v1 has 19 references, v2 20: positions 1-19 disagree (all rejected), 20 is v2's alone
    assert sorted({(r.citing_paper, len([x for x in refs if x.citing_paper == r.citing_paper])) for r in refs}) == \
        [("1202.3665", 34), ("1606.03757", 33), ("2501.00254", 1)]
    assert sum("conflicting duplicates" in r.reason for r in rejects) == 2 * 19
    assert reads.count("1202.3665.gz") == 1  # an id no other paper has: read once, not twice


def test_reading_a_directory_of_papers_shows_a_progress_line(tmp_path, monkeypatch, capsys):
    from citeledger import progress
    from citeledger.inputs.dedupe import read_inputs
    from citeledger.inputs.rows import InputLimits

    papers = tmp_path / "papers"
    papers.mkdir()
    for n in range(25):
        shutil.copy(FIXTURES / "1911.13021.tar.gz", papers / f"2601.{n + 1:05d}.tar.gz")
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)  # a line at every step, not every 10 s
    progress.set_bar(False)
    try:
        refs, _ = read_inputs([papers], InputLimits())
    finally:
        progress.set_bar(None)
    assert len(refs) == 25 * 19
    assert "25/25 papers read" in capsys.readouterr().err
