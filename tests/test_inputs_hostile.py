"""Hostile input found by an independent probe: pipes and stdin, inputs that cannot be
read at all, out-of-range indexes, unclosed CSV quotes, byte order marks and old line endings,
gzip bombs, large .bib/.bbl files, and duplicates across files. Each ends as a reject or as a
one-line ``InputError`` before any run begins; nothing is lost silently."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeledger.app_errors import InputError
from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import MAX_REFERENCE_INDEX, InputLimits, InputReject
from citeledger.run import batches, finishing, planning
from citeledger.storage import locking
from resolvers.errors import CiteledgerError
from resolvers.model import Reference


def split(items):
    items = list(items)
    return ([i for i in items if isinstance(i, Reference)], [i for i in items if isinstance(i, InputReject)])


def rows_jsonl(n: int, paper: str = "p") -> bytes:
    return "".join(json.dumps({"citing_paper": paper, "reference_index": i, "raw": f"Smith J. Title {i}. 2001."})
                   + "\n" for i in range(1, n + 1)).encode()


def no_run_began(ledger: Path) -> bool:
    return not (ledger / "_runs").exists() and not locking._held


# --- pipes, /dev/stdin, "-" -------------------------------------------------------------


def feed_pipe(data: bytes) -> str:
    """An anonymous pipe as ``<(cat f)`` gives it: ``/dev/fd/N`` with a writer on the other end."""
    read_fd, write_fd = os.pipe()

    def write() -> None:
        with os.fdopen(write_fd, "wb") as fh:
            fh.write(data)

    threading.Thread(target=write, daemon=True).start()
    return f"/dev/fd/{read_fd}"


def test_a_pipe_is_read_and_hashed_like_the_file_and_resumes(tmp_path, fixture_catalog):
    """Before: "0 references, 0 rejected rows" (the hash read the pipe before parsing)."""
    data = rows_jsonl(12)
    plan = planning.plan_run([feed_pipe(data)], fixture_catalog, tmp_path / "l", run_id="piped", batch_size=5)
    assert plan.references == 12 and not plan.rejects
    assert plan.inputs[0]["sha256"] == hashlib.sha256(data).hexdigest()
    batches.run_batch(plan.pending[0])
    finishing.abandon_run(plan)
    again = planning.plan_run([feed_pipe(data)], fixture_catalog, tmp_path / "l", run_id="piped", batch_size=5)
    assert again.resumed and len(again.pending) == len(again.jobs) - 1
    finishing.abandon_run(again)
    assert not list((tmp_path / "l" / ".input-spool").iterdir())  # spooled copies are gone


def test_stdin_dash_is_read_with_its_format_found_by_content(tmp_path, fixture_catalog, monkeypatch):
    csv_data = b"citing_paper,reference_index,raw\np,1,Smith J. A title. 2001.\np,2,Doe A. Other. 1999.\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(csv_data)))
    plan = planning.plan_run(["-"], fixture_catalog, tmp_path / "l", run_id="stdin")
    finishing.abandon_run(plan)
    assert plan.references == 2 and plan.inputs[0]["path"] == "<stdin>"
    refs = plan.jobs[0].references
    assert [(r.file, r.line, r.raw) for r in refs] == [("<stdin>", 2, "Smith J. A title. 2001."),
                                                      ("<stdin>", 3, "Doe A. Other. 1999.")]


def test_a_named_pipe_nobody_writes_to_is_an_error_without_the_lock(tmp_path, fixture_catalog):
    """Before: ``open()`` blocked for ever while holding the ledger lock."""
    fifo = tmp_path / "refs.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="no writer"):
        planning.plan_run([fifo], fixture_catalog, tmp_path / "l", run_id="fifo", open_timeout=0.3)
    assert no_run_began(tmp_path / "l")


def waiting_on_a_pipe(pid: int) -> bool:
    """Whether a thread of ``pid`` is blocked opening a named pipe nobody writes to (the kernel's
    ``wait_for_partner``; False where /proc does not name wait channels)."""
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            if (task / "wchan").read_text().strip() == "wait_for_partner":
                return True
        except OSError:
            continue
    return False


def test_the_command_line_waiting_on_a_named_pipe_leaves_the_ledger_free(tmp_path, fixture_catalog):
    """Before: the CLI took the ledger lock in its checks, then waited on the pipe holding it."""
    import subprocess
    import sys
    import time

    fifo, ledger = tmp_path / "refs.jsonl", tmp_path / "l"
    os.mkfifo(fifo)
    repo = Path(__file__).parent.parent
    proc = subprocess.Popen([sys.executable, "-m", "citeledger.cli", "resolve", str(fifo), "--catalog",
                             str(fixture_catalog), "--ledger", str(ledger)], cwd=repo,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # once the command is seen waiting on the pipe (its checks, which probe the lock for an
        # instant, are behind it), or where /proc cannot show that after 8 s more (well past the
        # checks), the ledger must be free for as long as it waits; the pipe waits 60 s for a writer
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not waiting_on_a_pipe(proc.pid):
            time.sleep(0.1)
        if time.monotonic() >= deadline:
            time.sleep(8)
        until = time.monotonic() + 1
        while time.monotonic() < until:
            locking.acquire_ledger(ledger, timeout=0)  # LockTimeout if the command held it
            locking.release_ledger(ledger)
            time.sleep(0.1)
        assert proc.poll() is None  # still waiting on the pipe, not holding the ledger
    finally:
        proc.kill()
        proc.wait()


def test_a_named_pipe_with_a_writer_is_read_by_its_name(tmp_path, fixture_catalog):
    fifo = tmp_path / "refs.jsonl"
    os.mkfifo(fifo)
    threading.Thread(target=fifo.write_bytes, args=(rows_jsonl(3),), daemon=True).start()
    plan = planning.plan_run([fifo], fixture_catalog, tmp_path / "l", run_id="fifo2")
    finishing.abandon_run(plan)
    assert plan.references == 3 and plan.jobs[0].references[0].file == str(fifo)


# --- inputs that cannot be read at all are errors before the run ---------------------------


@pytest.mark.parametrize("what", ["missing", "empty directory", "bib without paper", "bbl by content without paper"])
def test_unreadable_inputs_stop_before_the_run_begins(tmp_path, fixture_catalog, what):
    """Before: exit 0 and the run marked finished (a directory: a raw IsADirectoryError; a
    directory of papers is an input now, an empty one is an error)."""
    path = {"missing": tmp_path / "nope.jsonl", "empty directory": tmp_path / "papers",
            "bib without paper": tmp_path / "refs.bib", "bbl by content without paper": tmp_path / "refs.txt"}[what]
    if what == "empty directory":
        path.mkdir()
    if what == "bib without paper":
        path.write_text("@article{a, title = {T}}\n")
    if what.startswith("bbl"):
        path.write_text("\\begin{thebibliography}{1}\n\\bibitem{a} A. Author. Title. 2001.\n")
    ledger = tmp_path / "ledger"
    with pytest.raises(InputError) as caught:
        planning.plan_run([path], fixture_catalog, ledger, run_id="r")
    assert isinstance(caught.value, CiteledgerError) and "\n" not in str(caught.value)
    assert str(path) in str(caught.value)
    assert no_run_began(ledger)


# --- reference_index out of range ------------------------------------------------------


@pytest.mark.parametrize("big", [2**63, 2**53 + 1, 2**63 - 1])
def test_reference_index_beyond_what_a_record_carries_is_a_reject_in_every_format(tmp_path, big):
    """Beyond int64 the batch's Parquet write failed on every re-run; beyond 2^53 every records
    build of the run failed (a record's JSON numbers are doubles): both are rejects when read."""
    huge = "9" * 5000
    jl = tmp_path / "r.jsonl"
    jl.write_text("".join(json.dumps({"citing_paper": "p", "reference_index": i, "raw": "x y z"}) + "\n"
                          for i in (1, big, MAX_REFERENCE_INDEX)) + f'{{"citing_paper": "p", "reference_index": {huge}}}\n')
    cs = tmp_path / "r.csv"
    cs.write_text(f"citing_paper,reference_index,raw\np,1,a\np,{big},b\np,{huge},c\n")
    pa_path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"citing_paper": ["p", "p"], "reference_index": pa.array([1, big], pa.uint64()),
                             "raw": ["a", "b"]}), pa_path)
    for path, kept, bad_lines in ((jl, [1, MAX_REFERENCE_INDEX], [2, 4]), (cs, [1], [3, 4]), (pa_path, [1], [2])):
        refs, rejects = split(read_references(path))
        assert [r.reference_index for r in refs] == kept, path
        assert [r.line for r in rejects] == bad_lines, path
        assert all(r.field in ("reference_index", None) for r in rejects)
        assert rejects[0].field == "reference_index" and "at most 2^53" in rejects[0].reason
        assert rejects[0].message.startswith(f"{path}:{bad_lines[0]}: field 'reference_index':")


@pytest.mark.parametrize("big", [2**63, 2**53 + 1])
def test_an_out_of_range_index_does_not_fail_the_batch(tmp_path, fixture_catalog, big):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"citing_paper": "p", "reference_index": i, "raw": "Smith J. Title. 2001."})
                            + "\n" for i in (1, big, 2)))
    plan = planning.plan_run([path], fixture_catalog, tmp_path / "l", run_id="big")
    for job in plan.pending:
        batches.run_batch(job)
    finishing.abandon_run(plan)
    assert plan.references == 2 and [r.line for r in plan.rejects] == [2]


# --- an unclosed CSV quote swallows no rows -----------------------------------------------


@pytest.mark.parametrize("closes", [True, False])
def test_an_unclosed_csv_quote_is_one_reject_and_the_rows_after_it_are_read(tmp_path, closes):
    """Before: the next 47 rows became one accepted reference of 4,146 characters."""
    lines = ["citing_paper,reference_index,raw"] + [f"p,{i},Smith J. Title number {i}. J. Things 2001." for i in range(1, 51)]
    lines[3] = 'p,3,"Unclosed quote, Title three. 2001.'
    if closes:
        lines[50] = 'p,50,Stray quote" at the end of row 50.'
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    refs, rejects = split(read_references(path))
    assert [(r.line, r.field) for r in rejects] == [(4, "raw")] and "unclosed quote" in rejects[0].reason
    assert [r.reference_index for r in refs] == [i for i in range(1, 51) if i != 3]
    assert max(len(r.raw) for r in refs) < 60


@pytest.mark.parametrize("next_row", ['p,3,"Quoted row three. 2001."', '"p",3,Quoted row three. 2001.',
                                      'p,3,"Quoted, row three." ', 'p,"3",Quoted row three. 2001.'])
def test_an_unclosed_csv_quote_before_a_quoted_row_merges_no_rows(tmp_path, next_row):
    """Before: the quoted row after the unclosed quote closed it and was swallowed into it (9 rows
    in, 8 references and no reject)."""
    lines = ["citing_paper,reference_index,raw", "p,1,Row one. 2001.", 'p,2,"Unclosed quote, row two. 2001.',
             next_row, *(f"p,{i},Row {i}. 2001." for i in range(4, 10))]
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    refs, rejects = split(read_references(path))
    assert [(r.line, r.field) for r in rejects] == [(3, "raw")] and "unclosed quote" in rejects[0].reason
    assert [(r.reference_index, r.line) for r in refs] == [(1, 2)] + [(i, i + 1) for i in range(3, 10)]
    assert refs[1].raw.startswith("Quoted") and all("\n" not in r.raw for r in refs)


def test_a_csv_quote_open_over_more_than_a_hundred_lines_is_rejected(tmp_path):
    body = "\n".join(f"text line {i}" for i in range(150))  # no line looks like a row, but it runs on
    path = tmp_path / "r.csv"
    path.write_text(f'citing_paper,reference_index,raw\np,1,"{body}\np,2,After. 2001.\n')
    refs, rejects = split(read_references(path))
    assert rejects[0].line == 2 and "more than 100 lines" in rejects[0].reason
    # every line 2-152 is accounted for: the opening line, 149 quoted lines re-read (ragged rows), row 2
    assert refs[-1].reference_index == 2 and len(refs) + len(rejects) == 151


@pytest.mark.parametrize("blanks", ["", "  "])
def test_a_genuine_quoted_line_break_stays_one_reference(tmp_path, blanks):
    path = tmp_path / "r.csv"
    path.write_text(f'citing_paper,reference_index,raw\np,1,"Smith J.\nA title\nin three lines. 2001."{blanks}\np,2,b\n')
    refs, rejects = split(read_references(path))
    assert not rejects and refs[0].raw.rstrip() == "Smith J.\nA title\nin three lines. 2001." and refs[1].line == 5


# --- byte order marks and line endings ------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_bom_and_every_line_ending_read_the_same(tmp_path, newline, bom, kind):
    """Before: a BOM rejected the first JSONL row; CR-only endings made the file one reject."""
    rows = [{"citing_paper": "p", "reference_index": i, "raw": f"Ref {i}. 2001."} for i in (1, 2, 3)]
    text = newline.join(json.dumps(r) for r in rows) if kind == "jsonl" else \
        newline.join(["citing_paper,reference_index,raw"] + [f"p,{r['reference_index']},{r['raw']}" for r in rows])
    path = tmp_path / f"r.{kind}"
    path.write_bytes(bom + (text + newline).encode())
    refs, rejects = split(read_references(path))
    assert not rejects and [r.raw for r in refs] == ["Ref 1. 2001.", "Ref 2. 2001.", "Ref 3. 2001."]
    assert [r.line for r in refs] == ([1, 2, 3] if kind == "jsonl" else [2, 3, 4])


def test_crlf_split_across_read_chunks_counts_one_line(tmp_path):
    line = json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "x"}).encode()
    pad = b" " * ((1 << 20) - len(line) - 1)  # the \r ends the first 1 MiB chunk, the \n starts the next
    path = tmp_path / "r.jsonl"
    path.write_bytes(line + pad + b"\r\n" + line.replace(b": 1", b": 2") + b"\r\n")
    refs, rejects = split(read_references(path))
    assert not rejects and [r.line for r in refs] == [1, 2]


# --- decompressed bytes count, batches are compact ---------------------------------------


def test_a_gzip_bomb_is_stopped_at_the_decompressed_limit(tmp_path):
    """Before: only the compressed size was checked (a 10 KB file may expand to gigabytes)."""
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(rows_jsonl(50) + b" " * (20 << 20)))
    assert path.stat().st_size < 100_000
    refs, rejects = split(read_references(path, InputLimits(max_file_bytes=1 << 20)))
    assert len(refs) == 50 and len(rejects) == 1 and "decompressed" in rejects[0].reason
    assert "max_input_bytes" in rejects[0].reason


def test_batches_carry_their_references_exactly(tmp_path, fixture_catalog):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"citing_paper": "p\u00e9", "reference_index": i, "raw": f"R\u00e9f {i} \u2028 x",
                                        "source": "pdf_text"}) + "\n" for i in range(1, 12)))
    plan = planning.plan_run([path], fixture_catalog, tmp_path / "l", run_id="exact", batch_size=4)
    finishing.abandon_run(plan)
    assert [j.size for j in plan.jobs] == [4, 4, 3]
    refs = [r for j in plan.jobs for r in j.references]
    assert refs == [r for r in read_references(path)]


# --- .bib and .bbl with many entries --------------------------------------------------


def test_many_bib_and_bbl_entries_keep_their_line_numbers(tmp_path):
    n = 3000
    bib = tmp_path / "r.bib"
    bib.write_text("".join(f"@article{{k{i},\n  title = {{T{i}}},\n  year = {{2001}}\n}}\n" for i in range(n)))
    refs, rejects = split(read_references(bib, citing_paper="p"))
    assert not rejects and [r.line for r in refs] == [1 + 4 * i for i in range(n)]
    bbl = tmp_path / "r.bbl"
    bbl.write_text("\\begin{thebibliography}{9}\n" + "".join(f"\\bibitem{{k{i}}}\nA. Author. T{i}. 2001.\n\n"
                                                             for i in range(n)) + "\\end{thebibliography}\n")
    refs, rejects = split(read_references(bbl, citing_paper="p"))
    assert not rejects and [r.line for r in refs] == [2 + 3 * i for i in range(n)]
    assert refs[-1].raw == f"A. Author. T{n - 1}. 2001."


# --- duplicates across files: the order of the inputs does not matter ----------------------------


def test_resolve_a_b_and_b_a_give_the_same_observations(tmp_path, fixture_catalog):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(rows_jsonl(6).decode() + json.dumps({"citing_paper": "q", "reference_index": 1, "raw": "Only a."}) + "\n")
    b.write_text(json.dumps({"citing_paper": "p", "reference_index": 2, "raw": "A different string. 1999."}) + "\n"
                 + json.dumps({"citing_paper": "p", "reference_index": 3, "raw": "Smith J. Title 3. 2001."}) + "\n")

    def observations(inputs, name):
        plan = planning.plan_run(inputs, fixture_catalog, tmp_path / name, run_id="r")
        for job in plan.pending:
            batches.run_batch(job)
        finishing.abandon_run(plan)
        return duckdb.sql(f"select citing_paper, reference_index, raw, observation_id, observation_digest from "
                          f"read_parquet('{tmp_path / name}/observations/**/*.parquet') order by all").fetchall()

    ab, ba = observations([a, b], "ab"), observations([b, a], "ba")
    assert ab == ba
    assert [(p, i) for p, i, *_ in ab] == [("p", 1), ("p", 3), ("p", 4), ("p", 5), ("p", 6), ("q", 1)]
