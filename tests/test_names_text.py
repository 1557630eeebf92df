"""Names and text: a bidi override (U+202E) or another invisible format character in a title or a
reference is shown escaped (``\\u202e``) in text output, never raw, so it cannot reorder or hide what
a reader sees; JSON output escapes it (its value unchanged); no file name holds one; and a paper id
that is a reserved device name (``con``, ``prn``, ``aux``, ``nul``, ``com1``..., ``lpt1``...) never
becomes the stem of a file (``con.html`` cannot be made on Windows)."""
from __future__ import annotations

import json

import pytest

from citeledger.display import json_visible, visible_controls, visible_line
from citeledger.records.render.file_names import record_file_stem

RLO = "\u202e"
HIDDEN = ["\u202a", "\u202b", "\u202c", "\u202d", RLO, "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f",
          "\u061c", "\u200b", "\u2060", "\u2062", "\ufeff", "\u00ad", "\U000e0041", "\ufff9"]


@pytest.mark.parametrize("char", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
def test_an_invisible_format_character_is_shown_escaped(char):
    text = f"Attention is {char}all you need"
    shown = visible_controls(text)
    assert char not in shown and f"{ord(char):04x}" in shown
    assert char not in visible_line(text)
    assert json.loads(json_visible(json.dumps(text, ensure_ascii=False))) == text
    assert char not in json_visible(json.dumps(text, ensure_ascii=False))


def test_joiners_that_scripts_and_emoji_need_stay():
    text = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f469\u200d\U0001f4bb"  # Persian ZWNJ, emoji ZWJ
    assert visible_controls(text) == text


@pytest.mark.parametrize("name", ["con", "CON", "prn", "aux", "nul", "com1", "COM9", "lpt1", "lpt9", "con.1",
                                  "nul.tar", "conin$", "conout$"])
def test_a_reserved_device_name_is_never_a_file_stem(name):
    stem = record_file_stem(name)
    assert stem.split(".")[0].lower() not in {"con", "prn", "aux", "nul", "conin$", "conout$",
                                              *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
    assert stem != record_file_stem(name.swapcase()) or name == name.swapcase()


@pytest.mark.parametrize("name", ["console", "con-2019", "nullable", "com10", "2301.00001"])
def test_names_that_only_start_like_a_device_keep_their_plain_stem(name):
    assert record_file_stem(name) == name


def test_no_file_name_holds_a_bidi_control(tmp_path, fixture_catalog):
    from citeledger.cli import main

    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"citing_paper": f"evil{RLO}lmth.exe", "reference_index": 1,
                                "raw": f"Doe J. {RLO}A reversed title. J. 2020."}, ensure_ascii=False) + "\n")
    assert main(["resolve", str(refs), "--catalog", str(fixture_catalog), "--ledger", str(tmp_path / "ledger"),
                 "--run-id", "r"]) == 0
    assert main(["records", "--ledger", str(tmp_path / "ledger"), "--catalog", str(fixture_catalog)]) == 0
    names = [p.name for p in (tmp_path / "ledger").rglob("*")]
    assert names and not any(RLO in n for n in names)
    texts = [p.read_text() for p in (tmp_path / "ledger" / "records").glob("*.txt")]
    assert texts and all(RLO not in t and "\\u202e" in t for t in texts)


@pytest.mark.parametrize("run_id", ["con", "NUL", "com1.2026", "lpt9"])
def test_a_run_id_that_is_a_device_name_is_refused(run_id, tmp_path, fixture_catalog, capsys):
    from citeledger.cli import main

    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"citing_paper": "p", "reference_index": 1, "raw": "Doe J. A thing. 2020."}) + "\n")
    assert main(["resolve", str(refs), "--catalog", str(fixture_catalog), "--ledger", str(tmp_path / "ledger"),
                 "--run-id", run_id]) == 2
    assert "device" in capsys.readouterr().err and not (tmp_path / "ledger" / "runs").exists()
