"""A first real paper whose works the catalog lacks: ``resolve`` says why each reference stayed
``unresolved`` (counts by reason) and the command that can change it."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

cli = importlib.import_module("citeledger.cli.entry")
PAPER = Path(__file__).parent / "fixtures" / "papers" / "1911.13021.tar.gz"


def test_a_paper_the_catalog_lacks_prints_its_reasons_and_next_steps(default_catalog, tmp_path, capsys):
    ledger = tmp_path / "ledger"
    assert cli.main(["resolve", str(PAPER), "--catalog", str(default_catalog), "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  unresolved +19$", out, re.M), out
    assert "why 19 references stay unresolved, and what next:" in out
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^  ([a-z_]+) +(\d+)  [a-z]", out, re.M)}
    assert set(counts) == {"identifier_not_in_catalog", "below_threshold"} and sum(counts.values()) == 19, out
    assert counts == _reasons(ledger)
    remote = re.search(r"^  \((\d)\) look them up at arXiv and Crossref: (citeledger resolve .*)$", out, re.M)
    build = re.search(r"^  \((\d)\) add the works they cite to the catalog from a snapshot .*: "
                      r"(citeledger catalog build --catalog \S+ SNAPSHOT\.\.\.), then run again: (.*)$", out, re.M)
    assert remote and build, out
    assert remote.group(2) == f"citeledger resolve {PAPER} --catalog {default_catalog} --ledger {ledger} --remote"
    assert build.group(3) == f"citeledger resolve {PAPER} --catalog {default_catalog} --ledger {ledger}"
    assert re.search(rf"identifier_not_in_catalog +2  .*: \({remote.group(1)}\), then \({build.group(1)}\)$", out,
                     re.M), out


def test_nothing_is_said_when_every_reference_is_decided(default_catalog, tmp_path, capsys):
    refs = tmp_path / "one.jsonl"
    refs.write_text('{"citing_paper": "p", "reference_index": 1, "raw": "Yuri N. Kartashov, Invariance principle '
                    'for additive functionals of Markov chains, arXiv:0704.0508, 2007."}\n')
    assert cli.main(["resolve", str(refs), "--catalog", str(default_catalog), "--ledger", str(tmp_path / "l")]) == 0
    assert "unresolved, and what next" not in capsys.readouterr().out


def _reasons(ledger: Path) -> dict[str, int]:
    """The unresolved references' reasons as the ledger holds them."""
    import duckdb

    return dict(duckdb.sql(f"select reason, count(*) from read_parquet('{ledger}/observations/**/*.parquet') "
                           "where status = 'unresolved' group by 1").fetchall())
