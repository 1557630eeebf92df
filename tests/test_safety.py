"""Safety: ids become file names safely, user SQL cannot change the ledger or read outside it,
input text is never interpolated into SQL, and input size limits are enforced with clear errors.

Decided for ``citeledger query``: one or more SELECT/EXPLAIN statements only (anything else is
refused before DuckDB runs it, also behind EXPLAIN ANALYZE, which executes its statement), on a
connection with no file access at all (the views are pyarrow datasets; external access off, no
allowed directory, no temp directory, configuration locked), so ``read_csv('/etc/passwd')`` and
``COPY ... TO`` fail even where the statement check would let them through. Each attack below is
run twice: through ``run_query`` and straight on the sandbox connection, skipping the check; the
ledger's and catalog's bytes must not change either way.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeledger.app_errors import QueryFailed, QueryRefused
from citeledger.catalog.catalog_store import CatalogStore
from citeledger.config import QueryLimits, load_config
from citeledger.inputs.read_input import read_references
from citeledger.inputs.rows import InputLimits, InputReject
from citeledger.ledger.ledger_store import LEDGER_PARTS, WORKS_VIEW_SCHEMA
from citeledger.ledger.query import check_read_only, run_query, sandbox, user_query
from citeledger.options import check_run_id
from citeledger.records import record_files
from citeledger.run import batches, finishing, planning
from resolvers.errors import ConfigError

REPO = Path(__file__).parent.parent

REFUSED = [
    "delete from observations", "DROP VIEW observations", "drop table works",
    "copy observations to '/tmp/stolen.csv'", "COPY (select * from observations) TO 'x.parquet'",
    "attach '/tmp/other.duckdb' as o", "install httpfs", "load httpfs", "pragma database_list",
    "set enable_external_access = true", "SET lock_configuration = false", "call pragma_version()",
    "export database '/tmp/dump'", "select 1; delete from observations", "select 1; drop view observations",
    "create table t as select 1", "insert into observations select * from observations",
    "update observations set status = 'x'", "vacuum", "checkpoint", "detach memory", "", "   ;  ",
]
OUTSIDE = ["select * from read_csv('/etc/passwd')", "select * from read_text('/etc/hostname')",
           "select * from read_parquet('/etc/*.parquet')", "select * from glob('/etc/*')"]


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".lock"}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, fixture_catalog):
    base = tmp_path_factory.mktemp("safety")
    path = base / "refs.jsonl"
    rows = [{"citing_paper": "p'); DROP TABLE observations; --", "reference_index": 1,
             "raw": "Robert'); DROP TABLE works;-- et al. Sparsity-certifying graph decompositions. arXiv:0704.0002"},
            {"citing_paper": "q\"quoted\"", "reference_index": 2, "raw": "x' OR '1'='1 ; COPY works TO '/tmp/x'"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ledger = base / "led'ger"  # a quote in the path itself: paths go through sql_literal
    plan = planning.plan_run([path], fixture_catalog, ledger, run_id="safe")
    for job in plan.pending:
        batches.run_batch(job)
    finishing.finish_run(plan)
    return ledger, fixture_catalog, rows


def test_input_text_is_stored_verbatim_never_executed(ledger):
    ledger_dir, catalog, rows = ledger
    got = run_query("select citing_paper, raw, status from observations order by reference_index",
                    ledger_dir, catalog).fetchall()
    assert [(r["citing_paper"], r["raw"]) for r in rows] == [g[:2] for g in got]
    assert got[0][2] == "verified_exact"
    assert run_query("select count(*) from works", ledger_dir, catalog).fetchall()[0][0] > 0


@pytest.mark.parametrize("sql", REFUSED)
def test_writes_and_settings_are_refused_and_the_ledger_is_unchanged(ledger, sql):
    ledger_dir, catalog, _ = ledger
    before = snapshot(ledger_dir)
    with pytest.raises((QueryRefused, duckdb.Error)):
        run_query(sql, ledger_dir, catalog).fetchall()
    assert snapshot(ledger_dir) == before
    assert run_query("select count(*) from observations", ledger_dir, catalog).fetchall() == [(2,)]


@pytest.mark.parametrize("sql", OUTSIDE)
def test_select_cannot_read_outside_the_ledger_and_catalog(ledger, sql):
    ledger_dir, catalog, _ = ledger
    with pytest.raises(duckdb.Error):
        run_query(sql, ledger_dir, catalog).fetchall()


def test_cli_query_refuses_delete_and_the_ledger_is_unchanged(ledger, capfd):
    ledger_dir, catalog, _ = ledger
    before = snapshot(ledger_dir)
    for run, sql in ((cli, "delete from observations"), (partial(cli_here, capfd), "drop view observations"),
                     (partial(cli_here, capfd), "copy observations to '/tmp/x.csv'")):
        out = run("query", sql, "--ledger", str(ledger_dir), "--catalog", str(catalog))
        assert out.returncode != 0 and "only read-only queries" in out.stderr, out.stderr
    assert snapshot(ledger_dir) == before
    out = cli_here(capfd, "query", "select count(*) as n from observations", "--ledger", str(ledger_dir),
                   "--catalog", str(catalog), "--format", "json")
    assert out.returncode == 0 and json.loads(out.stdout) == {"n": 2}


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.sampled_from(["hep-th/9901001", "../../etc/passwd", "..", ".", "/", "",
                                                          "a" * 5000, "é/ü", "CON", ".hidden", "x\x00y"])))
def test_record_file_stem_is_a_safe_single_name(paper_id):
    stem = record_files.record_file_stem(paper_id)
    assert stem and "/" not in stem and "\x00" not in stem and not stem.startswith(".")
    assert len(stem.encode()) <= 120 and stem.isascii()
    out = Path("/records")
    assert (out / f"{stem}.json").parent == out


@given(st.text(max_size=40), st.text(max_size=40))
def test_distinct_paper_ids_get_distinct_file_names(a, b):
    if a != b and record_files.record_file_stem(a) == record_files.record_file_stem(b):
        # only the leading dots that are stripped may collide (".x" and "x"): never two real ids
        assert a.lstrip(".") == b.lstrip(".") or not a.strip(".") or not b.strip(".")


@pytest.mark.parametrize("run_id", ["../x", "a/b", "..", "", "x" * 129, "ünï", "a b", "-lead", ".hidden", "a\x00"])
def test_unsafe_run_ids_are_refused(run_id):
    with pytest.raises(ConfigError):
        check_run_id(run_id)


def test_file_and_string_size_limits_are_enforced_with_clear_errors(tmp_path):
    path = tmp_path / "refs.jsonl"
    path.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "x" * 50}) + "\n")
    (reject,) = read_references(path, InputLimits(max_raw_chars=10))
    assert isinstance(reject, InputReject) and "max_raw_chars" in reject.reason and reject.field == "raw"
    (reject,) = read_references(path, InputLimits(max_file_bytes=10))
    assert isinstance(reject, InputReject) and "max_file_bytes" in reject.reason


def test_configured_file_size_limit_reaches_the_pipeline(tmp_path, fixture_catalog, monkeypatch):
    """``limits.max_input_bytes`` of the configuration (here its environment variable) is
    enforced by ``plan_run``: the file is one reject naming the limit, the run goes on."""
    monkeypatch.delenv("CITELEDGER_CONFIG", raising=False)
    monkeypatch.setenv("CITELEDGER_MAX_INPUT_BYTES", "10")
    path = tmp_path / "refs.jsonl"
    path.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "x" * 50}) + "\n")
    plan = planning.plan_run([path], fixture_catalog, tmp_path / "ledger", run_id="limited")
    finishing.finish_run(plan)
    assert plan.references == 0 and len(plan.rejects) == 1 and "max_file_bytes" in plan.rejects[0].reason


# --- a query can never write ----------------------------------------


def cli(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "citeledger.cli", *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=120, env={**os.environ, **(env or {})})


def cli_here(capfd, *argv: str) -> subprocess.CompletedProcess:
    """``cli`` run in this process, for the further commands of a test whose first runs as its own
    process: the same exit status (``python -m citeledger.cli`` exits with ``main``'s return) and
    what reaches file descriptors 1 and 2, without 1.5 s of interpreter and import start-up each."""
    import contextlib

    from citeledger.cli.entry import main

    capfd.readouterr()
    with contextlib.chdir(REPO):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's own exits
            code = exc.code
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(list(argv), code, out, err)


@pytest.fixture(scope="module")
def site(ledger, tmp_path_factory):
    """The module's ledger beside a private copy of the catalog (an attack that got through must
    not spoil the session's shared catalog), and the paths the probe aimed at."""
    import shutil

    ledger_dir, catalog, _ = ledger
    own_catalog = tmp_path_factory.mktemp("attacked") / "catalog"
    shutil.copytree(catalog, own_catalog)
    part = sorted((ledger_dir / "observations").rglob("*.parquet"))[0]
    return {"ledger": ledger_dir, "catalog": own_catalog, "part": part,
            "works": CatalogStore(own_catalog).current() / "works.parquet"}


FORGED = ("(select * replace ('verified_exact' as status, '10.9999/forged' as doi) from observations)")
PERMISSION, LOCKED = duckdb.PermissionException, duckdb.InvalidInputException
# (attack, what the sandbox alone raises: file access is not permitted, or the configuration is
# locked; None: it touches memory only, and may run)
ATTACKS = [
    ("explain analyze copy (select * from observations where false) to '{part}' (format parquet)", PERMISSION),
    (f"explain analyze copy {FORGED} to '{{part}}' (format parquet)", PERMISSION),
    (f"copy {FORGED} to '{{part}}' (format parquet)", PERMISSION),
    ("explain analyze copy (select * from observations) to '{ledger}/observations' "
     "(format parquet, partition_by (run_id), overwrite_or_ignore true, filename_pattern 'dup_{{i}}')", PERMISSION),
    ("explain analyze copy (select * from works where false) to '{works}' (format parquet)", PERMISSION),
    ("explain analyze copy (select '<script>alert(1)</script>') to '{ledger}/records/p.html' (header false)",
     PERMISSION),
    ("explain analyze copy (select 1) to '{ledger}/ledger.duckdb'", PERMISSION),
    ("attach '{ledger}/evil.duckdb' as evil", PERMISSION),
    ("export database '{ledger}/dump'", PERMISSION),
    ("install httpfs", PERMISSION),
    ("explain analyze load httpfs", PERMISSION),
    ("select * from read_csv('/etc/passwd')", PERMISSION),
    ("select * from read_parquet('{part}')", PERMISSION),  # only the views read files
    ("select * from read_text('{works}')", PERMISSION),
    ("select * from glob('{ledger}/*')", PERMISSION),
    # a write through a table function: its statement must be a SELECT
    ("select * from query('copy (select 1) to ''{ledger_in_literal}/q.csv''')", duckdb.ParserException),
    ("set enable_external_access = true", LOCKED),
    ("SET lock_configuration = false", LOCKED),
    ("reset allowed_directories", LOCKED),
    ("set allowed_directories = ['/']", LOCKED),
    ("set temp_directory = '{ledger}'", LOCKED),
    ("explain analyze create table t as select 1", None),
    ("create or replace view observations as select * from observations where false", None),
    ("explain analyze delete from observations", None),
]


def digests(site: dict) -> dict[str, str]:
    return {f"{name}/{path}": digest for name in ("ledger", "catalog") for path, digest in snapshot(site[name]).items()}


def attack_sql(attack: str, site: dict) -> str:
    """The attack aimed at this site's files (the ledger's path has a quote in it)."""
    quoted = {k: str(v).replace("'", "''") for k, v in site.items()}
    return attack.format(**quoted, ledger_in_literal=quoted["ledger"].replace("'", "''"))


@pytest.mark.parametrize("attack,sandbox_raises", ATTACKS)
def test_a_query_cannot_write_even_past_the_statement_check(site, attack, sandbox_raises):
    sql = attack_sql(attack, site)
    before = digests(site)
    with pytest.raises((QueryRefused, duckdb.Error)):  # a write is refused by the check, a read by the sandbox
        run_query(sql, site["ledger"], site["catalog"]).fetchall()
    con, _ = sandbox(site["ledger"], site["catalog"])  # the second line alone, as if the check missed it
    try:
        if sandbox_raises:
            with pytest.raises(sandbox_raises):
                con.execute(sql).fetchall()
        else:
            with contextlib.suppress(duckdb.Error):
                con.execute(sql).fetchall()
    finally:
        con.close()
    assert digests(site) == before
    assert run_query("select count(*), count(*) filter (where doi = '10.9999/forged') from observations",
                     site["ledger"], site["catalog"]).fetchall() == [(2, 0)]


def test_the_probes_explain_analyze_copy_fails_through_the_cli_and_the_ledger_holds(site):
    before = digests(site)
    out = cli("query", attack_sql(ATTACKS[0][0], site), "--ledger", str(site["ledger"]), "--catalog", str(site["catalog"]))
    assert out.returncode == 2 and "refused a COPY statement" in out.stderr and len(out.stderr.splitlines()) == 1
    assert digests(site) == before


@pytest.mark.parametrize("sql", [
    "explain analyze select count(*) from current", "EXPLAIN select * from observations", "select 1;",
    "PIVOT (SELECT citing_paper, status FROM current) ON status USING count(*);",  # the README's example
    "pivot current on status using count(*)", "summarize works", "describe observations",
])
def test_reading_statements_pass_the_check(sql):
    check_read_only(sql)


@pytest.mark.parametrize("sql", [
    "explain analyze copy (select 1) to 'x.csv'", "explain analyze delete from observations",
    "EXPLAIN ANALYZE insert into observations select * from observations", "explain analyze attach 'x.db'",
    "explain /* hidden */ analyze copy (select 1) to 'x.csv'", "explain explain analyze copy (select 1) to 'x'",
    "create table t as pivot (select 1 a, 'x' s) on s using count(*)",
])
def test_explain_analyze_of_anything_but_reading_is_refused(sql):
    with pytest.raises(QueryRefused):
        check_read_only(sql)


def test_the_readme_pivot_runs(site):
    sql = "PIVOT (SELECT citing_paper, status FROM current) ON status USING count(*);"
    pivoted = run_query(sql, site["ledger"], site["catalog"]).fetchall()
    assert sorted((row[0], sum(n or 0 for n in row[1:])) for row in pivoted) == sorted(run_query(
        "select citing_paper, count(*) from current group by 1", site["ledger"], site["catalog"]).fetchall())


def test_old_part_files_lacking_newer_columns_still_read(tmp_path, fixture_catalog):
    """Runs written before ``trigger`` and the other newer columns existed read them as null."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    old = pa.table({"run_id": ["old"], "references": [3]})
    (tmp_path / "runs" / "old").mkdir(parents=True)
    pq.write_table(old, tmp_path / "runs" / "old" / "run.parquet")
    assert run_query("select run_id, \"references\", trigger, catalog_seq from runs", tmp_path,
                     fixture_catalog).fetchall() == [("old", 3, None, None)]


# --- limits ------------------------------------------------------------------


def test_a_runaway_query_stops_at_its_time_limit_with_one_line(site):
    out = cli("query", "select count(*) from range(1e12::bigint)", "--ledger", str(site["ledger"]),
              "--catalog", str(site["catalog"]), env={"CITELEDGER_QUERY_TIMEOUT_SECONDS": "1"})
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr
    assert "time limit" in out.stderr and "query.timeout_seconds" in out.stderr


def test_a_query_stops_at_its_memory_limit(site):
    with pytest.raises(QueryFailed, match="memory"):
        with user_query("select length(list(range)) from range(50000000)", site["ledger"], site["catalog"],
                        QueryLimits(memory_limit="64MB")) as result:
            list(result.rows()[1])


def test_query_limits_are_configured_in_the_file_and_the_environment(tmp_path):
    (tmp_path / "citeledger.toml").write_text('[query]\ntimeout_seconds = 5\nmemory_limit = "2GB"\n')
    assert load_config(cwd=tmp_path, env={}).query == QueryLimits(timeout_seconds=5.0, memory_limit="2GB")
    assert load_config(cwd=tmp_path, env={"CITELEDGER_QUERY_MEMORY_LIMIT": "10%"}).query.memory_limit == "10%"
    assert load_config(cwd=tmp_path / "none", env={}).query == QueryLimits(300.0, "25%")
    for bad in ({"CITELEDGER_QUERY_TIMEOUT_SECONDS": "0"}, {"CITELEDGER_QUERY_MEMORY_LIMIT": "lots"},
                {"CITELEDGER_QUERY_MEMORY_LIMIT": "150%"}, {"CITELEDGER_QUERY_MEMORY_LIMIT": "4"}):
        with pytest.raises(ConfigError, match="query"):
            load_config(cwd=tmp_path, env=bad)


# --- what reaches the terminal -----------------------------------------------

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x7f"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, fixture_catalog):
    base = tmp_path_factory.mktemp("hostile")
    path = base / "refs.jsonl"
    path.write_text(json.dumps({"citing_paper": "esc-paper", "reference_index": 1,
                                "raw": f"Devlin {ESCAPES} BERT. arXiv:1810.04805"}) + "\n")
    plan = planning.plan_run([path], fixture_catalog, base / "ledger", run_id="esc")
    for job in plan.pending:
        batches.run_batch(job)
    finishing.finish_run(plan)
    return base / "ledger", fixture_catalog


def raw_controls(text: str) -> set[str]:
    return {c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f}


@pytest.mark.parametrize("argv", [["record", "esc-paper", "--format", "ledger"],
                                  ["record", "esc-paper", "--format", "html"],
                                  ["record", "esc-paper", "--format", "json"],
                                  ["query", "select citing_paper, raw from observations"],
                                  ["query", "select raw, [raw] as l from observations", "--format", "json"]])
def test_control_characters_of_the_input_never_reach_the_terminal_raw(hostile, argv, capfd):
    ledger_dir, catalog = hostile
    # the first case as its own process (what reaches a real stdout), the others in this process
    run = cli if argv[-1] == "ledger" else partial(cli_here, capfd)
    out = run(*argv, "--ledger", str(ledger_dir), "--catalog", str(catalog))
    assert out.returncode == 0, out.stderr
    assert "Devlin" in out.stdout and raw_controls(out.stdout) == set()
    if argv[-1] == "json":  # escaped, not changed: the value read back is the input's
        value = (json.loads(out.stdout)["raw"] if argv[0] == "query"
                 else json.loads(out.stdout)["outbound"]["items"][0]["cited_as"]["raw"])
        assert ESCAPES in value


def test_csv_lines_end_with_a_newline_only(site):
    sql = "select citing_paper, reference_index from observations order by 2"
    out = subprocess.run([sys.executable, "-m", "citeledger.cli", "query", sql, "--format", "csv", "--ledger",
                          str(site["ledger"]), "--catalog", str(site["catalog"])], capture_output=True, cwd=REPO,
                         timeout=120)
    assert out.returncode == 0 and b"\r" not in out.stdout and out.stdout.count(b"\n") == 3


# --- a mistyped --ledger or --catalog -----------------------------------------


def test_a_query_needs_the_ledger_or_catalog_it_reads_and_no_other(site, tmp_path, capfd):
    ledger, catalog = str(site["ledger"]), str(site["catalog"])
    gone = str(tmp_path / "no-such-ledger")
    works = cli("query", "select count(*) as n from works", "--catalog", catalog, "--ledger", gone, "--format", "json")
    assert works.returncode == 0 and json.loads(works.stdout)["n"] > 0, works.stderr  # check_contract.py does this
    obs = cli_here(capfd, "query", "select count(*) as n from observations", "--ledger", ledger, "--catalog", gone,
                   "--format", "json")
    assert obs.returncode == 0 and json.loads(obs.stdout) == {"n": 2}, obs.stderr
    (tmp_path / "not-a-ledger").mkdir()
    (tmp_path / "file").write_text("x")
    for sql, where, path in [("select count(*) from observations", "--ledger", gone),
                             ("select * from current limit 1", "--ledger", str(tmp_path / "not-a-ledger")),
                             ("with x as (select * from runs) select count(*) from x", "--ledger", gone),
                             ("select count(*) from works", "--ledger", str(tmp_path / "file")),
                             ("select count(*) from works", "--catalog", gone),
                             ("select count(*) from current join works using (work_id)", "--catalog", ledger)]:
        argv = {"--ledger": ledger, "--catalog": catalog, where: path}
        out = cli_here(capfd, "query", sql, *[x for kv in argv.items() for x in kv])
        assert out.returncode == 2 and path in out.stderr and len(out.stderr.splitlines()) == 1, (sql, out.stderr)


def test_record_of_a_missing_ledger_is_an_error(site, tmp_path):
    out = cli("record", "p", "--ledger", str(tmp_path / "nope"), "--catalog", str(site["catalog"]))
    assert out.returncode == 2 and str(tmp_path / "nope") in out.stderr and len(out.stderr.splitlines()) == 1


def test_query_help_lists_every_view_and_column():
    out = cli("query", "--help")
    assert out.returncode == 0
    for name, (_, schema) in [*LEDGER_PARTS.items(), ("works", (None, WORKS_VIEW_SCHEMA))]:
        assert f"  {name}:" in out.stdout
        for column in schema.names:
            assert f" {column} " in out.stdout, column
    for view in ("current", "transitions", "notices"):
        assert f"  {view}:" in out.stdout
    assert "changed_at TIMESTAMPTZ" in out.stdout
