"""Input folders never leave themselves and never block: inside a directory of papers or a paper's
folder a symbolic link is not followed and a FIFO, socket or device is not opened; each is a reject
row saying why, and the rest of the folder is read."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import duckdb
import pytest

from citeledger import cli
from citeledger.inputs.dedupe import read_inputs
from citeledger.inputs.rows import InputLimits

SECRET = "Secretary Outside. A text that lives outside the input folder. J Elsewhere 2001."
BBL = (b"\\begin{thebibliography}{1}\\bibitem{x} A. Author, A real title of a paper, J. Things 12, 2001."
       b"\\end{thebibliography}")


def hostile_folder(root: Path) -> tuple[Path, list[Path]]:
    """A directory of papers with links out of it and FIFOs at the top and inside one paper."""
    outside = root / "outside"
    outside.mkdir()
    (outside / "refs.bib").write_text(f"@misc{{s, title={{{SECRET}}}, year={{2001}}}}\n")
    (outside / "refs.bbl").write_text(f"\\begin{{thebibliography}}{{1}}\\bibitem{{s}} {SECRET}\\end{{thebibliography}}")
    papers = root / "papers"
    papers.mkdir()
    (papers / "2501.00010.bib").symlink_to(outside / "refs.bib")
    (papers / "2501.00011.bib").symlink_to("/etc/passwd")
    (papers / "2501.00012").symlink_to(outside, target_is_directory=True)
    (papers / "2501.00013.bbl").symlink_to(papers / "2501.00014" / "refs.bbl")  # inside, yet a link
    fifos = [papers / "2501.00015.tex"]
    paper = papers / "2501.00014"
    paper.mkdir()
    (paper / "refs.bbl").write_bytes(BBL)
    (paper / "more.bib").symlink_to(outside / "refs.bib")
    (paper / "linked").symlink_to(outside, target_is_directory=True)
    (paper / "sub").mkdir()
    fifos.append(paper / "sub" / "x.tex")
    for fifo in fifos:
        os.mkfifo(fifo)
    return papers, fifos


def bounded(call, fifos: list[Path], seconds: float = 30.0):
    """``call()`` in a thread given ``seconds``; a blocked FIFO open is released (a writer opens it)
    so the thread ends, and the test fails instead of hanging."""
    got: dict[str, object] = {}
    worker = threading.Thread(target=lambda: got.setdefault("result", call()), daemon=True)
    worker.start()
    worker.join(seconds)
    blocked = worker.is_alive()
    for _ in range(20 if blocked else 0):
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        worker.join(0.5)
        if not worker.is_alive():
            break
    assert not blocked, "reading the folder blocked on a FIFO"
    return got["result"]


def test_links_out_of_a_directory_of_papers_and_fifos_are_rejects_never_read(tmp_path):
    papers, fifos = hostile_folder(tmp_path)
    refs, rejects = bounded(lambda: read_inputs([papers], InputLimits()), fifos)
    assert not any(SECRET[:20] in r.raw or "root:" in r.raw for r in refs)
    assert not any(SECRET[:20] in r.excerpt or "root:" in r.excerpt for r in rejects)
    assert [(r.citing_paper, r.reference_index) for r in refs] == [("2501.00014", 1)]
    why = {r.file.replace(f"{papers}/", ""): r.reason for r in rejects}
    for name in ("2501.00010.bib", "2501.00011.bib", "2501.00012", "2501.00013.bbl",
                 "2501.00014!more.bib", "2501.00014!linked"):
        assert "a symbolic link" in why[name] and "not followed" in why[name], name
    for name in ("2501.00015.tex", "2501.00014!sub/x.tex"):
        assert "a FIFO" in why[name], name
    assert len(rejects) == 8 and all(r.message.count("\n") == 0 for r in rejects)


def test_a_paper_folder_given_alone_reads_no_link_and_opens_no_fifo(tmp_path):
    papers, fifos = hostile_folder(tmp_path)
    refs, rejects = bounded(lambda: read_inputs([papers / "2501.00014"], InputLimits()), fifos)
    assert [r.raw for r in refs] == ["A. Author, A real title of a paper, J. Things 12, 2001."]
    assert sorted(r.file.rsplit("!", 1)[1] for r in rejects) == ["linked", "more.bib", "sub/x.tex"]


def test_resolve_of_a_hostile_folder_ends_with_a_reject_row_for_each_entry_not_read(tmp_path, fixture_catalog):
    papers, fifos = hostile_folder(tmp_path)
    ledger = tmp_path / "ledger"
    args = ["resolve", str(papers), "--catalog", str(fixture_catalog), "--ledger", str(ledger)]
    assert bounded(lambda: cli.main(args), fifos, 120.0) == 0
    con = duckdb.connect()
    raws = [r for (r,) in con.sql(f"select raw from read_parquet('{ledger}/observations/**/*.parquet')").fetchall()]
    assert len(raws) == 1 and SECRET[:20] not in raws[0]
    rejects = con.sql(f"select file, reason from read_parquet('{ledger}/rejects/**/*.parquet')").fetchall()
    assert len(rejects) == 8 and all(("symbolic link" in why) != ("FIFO" in why) for _, why in rejects)


@pytest.mark.parametrize("kind", ["socket"])
def test_a_socket_in_a_directory_of_papers_is_a_reject(tmp_path, kind):
    import socket

    papers = tmp_path / "p"
    papers.mkdir()
    (papers / "2501.00014.bbl").write_bytes(BBL)
    cwd = os.getcwd()
    os.chdir(papers)  # a socket's path must be short: bound by its name in the folder
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind("2501.00016.tex")
            refs, rejects = read_inputs([papers], InputLimits())
    finally:
        os.chdir(cwd)
    assert len(refs) == 1 and [r.reason.split(":")[0] for r in rejects] == ["a socket"]
