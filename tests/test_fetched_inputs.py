"""``arXiv:ID`` inputs and files of them, read offline: the e-prints are already in the ledger's
paper cache (where a fetch keeps them), so nothing is asked of arXiv. A file of ids is read as
every input is (gzip, byte order mark, bounded lines); a fetched paper's rejects name file, line
and field as a local paper's do; an ``arXiv:ID`` paper is read once per run."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from archives import tar_bytes

from citeledger.inputs import arxiv_fetch as paper_fetch
from citeledger.inputs.dedupe import iter_unique
from citeledger.inputs.files import prepare_inputs
from citeledger.inputs.pdf_papers import pdf_service
from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import InputLimits, InputReject
from citeledger.storage.remote_state import paper_cache

FIXTURES = Path(__file__).parent / "fixtures"
EPRINT = (FIXTURES / "papers" / "1911.13021.tar.gz").read_bytes()  # .bbl of 19 entries


@pytest.fixture
def ledger(tmp_path):
    """A ledger whose paper cache holds 1911.13021's real e-print and 2501.00001's, which has a
    member named ``../escape.bbl`` (never read)."""
    path = tmp_path / "ledger"
    cache = paper_cache(path)
    cache.put("arxiv", "1911.13021", ".eprint", EPRINT)
    bad = tar_bytes({"ms.tex": rb"\documentclass{article}\begin{document}\begin{thebibliography}{1}"
                            rb"\bibitem{a} A. Author, A title, J. Phys. 1 (2001) 2.\end{thebibliography}\end{document}",
                  "../escape.bbl": b"x"})
    cache.put("arxiv", "2501.00001", ".eprint", bad)
    with pdf_service(None, path):
        yield path


def rows(path: Path, kind: str | None = None, name: str | None = None) -> list:
    return list(read_references(path, InputLimits(), name=name, kind=kind))


@pytest.mark.parametrize("encode", [lambda b: gzip.compress(b), lambda b: b"\xef\xbb\xbf" + b],
                         ids=["gzipped", "byte-order-mark"])
def test_a_file_of_ids_is_read_like_every_input(ledger, tmp_path, encode):
    """Before: the file's raw bytes were split into lines: a gzipped list gave only "not an
    arXiv:ID line" rejects, and a byte order mark made line 1 one."""
    ids = tmp_path / "ids.txt"
    ids.write_bytes(encode(b"arXiv:1911.13021\r\narXiv:0601.1234\n"))
    got = rows(ids)
    references = [r for r in got if not isinstance(r, InputReject)]
    rejects = [r for r in got if isinstance(r, InputReject)]
    assert len(references) == 19 and {r.citing_paper for r in references} == {"1911.13021"}
    assert [(r.file, r.line, r.field) for r in rejects] == [(str(ids), 2, None)]
    assert "arXiv:0601.1234: not a well-formed arXiv id" in rejects[0].reason


def test_an_over_long_line_of_an_id_file_is_a_reject_naming_its_line(ledger, tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_bytes(b"arXiv:" + b"1" * 10_000 + b"\narXiv:1911.13021\n")
    got = rows(ids, kind="arxiv_ids")
    assert [(r.line, r.reason.split(":")[0]) for r in got if isinstance(r, InputReject)] == \
        [(1, "line longer than 4,096 bytes")]
    assert sum(not isinstance(r, InputReject) for r in got) == 19


def test_a_fetched_papers_rejects_name_file_member_and_field_as_a_local_papers_do(ledger, tmp_path):
    """Before: the member's name (``../escape.bbl``) stood in the reject's field slot and the file
    was the bare input; a local e-print names ``file!member``, field None."""
    fetched = [r for r in rows(Path("arXiv:2501.00001"), kind="arxiv_id", name="arXiv:2501.00001")
               if isinstance(r, InputReject)]
    local = tmp_path / "2501.00001.tar.gz"
    local.write_bytes(paper_cache(ledger).get("arxiv", "2501.00001", ".eprint") or b"")
    on_disk = [r for r in rows(local) if isinstance(r, InputReject)]
    assert fetched and [(r.file.split("!", 1)[1], r.line, r.field, r.reason) for r in fetched] == \
        [(r.file.split("!", 1)[1], r.line, r.field, r.reason) for r in on_disk]
    assert all(r.file.startswith("arXiv:2501.00001!") and r.field is None for r in fetched)


def test_an_arxiv_id_input_is_read_once(ledger, monkeypatch):
    """Before: an ``arXiv:ID`` input was not counted a paper, so the duplicates pass read it
    (its e-print unpacked and parsed) before the rows' pass read it again."""
    reads = []
    real = paper_fetch.read_arxiv_paper
    monkeypatch.setattr(paper_fetch, "read_arxiv_paper", lambda *a, **k: reads.append(a[1]) or real(*a, **k))
    sources = prepare_inputs(["arXiv:1911.13021"])
    got = list(iter_unique(sources, InputLimits()))
    assert len(got) == 19 and reads == ["1911.13021"]


def test_two_arxiv_id_inputs_of_one_paper_are_still_settled_as_duplicates(ledger):
    paper_cache(ledger).put("arxiv", "1911.13021v1", ".eprint", EPRINT)
    sources = prepare_inputs(["arXiv:1911.13021", "arXiv:1911.13021v1"])
    got = list(iter_unique(sources, InputLimits()))
    assert sum(not isinstance(r, InputReject) for r in got) == 19
    assert sum(isinstance(r, InputReject) and "duplicate reference" in r.reason for r in got) == 19


@pytest.mark.parametrize("ids", [("arXiv:hep-th/9901001", "arXiv:hep-th/9901001v2"),
                                 ("arXiv:1911.13021", "arXiv:1911.13021v1")], ids=["old-style", "new-style"])
def test_two_arxiv_id_inputs_of_one_paper_are_both_checked_for_duplicates(ids):
    """The duplicates pass sees two ``arXiv:ID`` inputs of one paper as sharing its id; an
    old-style id (``hep-th/9901001``) gave none before, so its rows were never compared."""
    from citeledger.inputs.dedupe import _may_repeat
    from citeledger.inputs.files import ARXIV_ID_KIND, InputSource

    sources = [InputSource(name, Path(name), "", ARXIV_ID_KIND) for name in ids]
    assert _may_repeat(sources, None) == sources
