"""The batch lookup's Works: made a field at a time by their slots
(``work_rows.works_by_field``), they are the Works ``Work(*values)`` makes: equal, hashed
alike, same fields; and the row file's ``works`` equal the mapped Arrow columns' works."""
from __future__ import annotations

import random
import shutil

from citeledger.index import blocking
from citeledger.works.work_rows import WorkReader, works_by_field
from resolvers.model import Work

ROWS = [["w1", "10.1/a", None, "T\u00eftle", ["A", "B"], 2001, None, "3", "5", None, "journal-article", [], None],
        ["w2", None, "0704.0001", None, [], None, "V", None, None, "123", None, ["10.48550/arxiv.0704.0001"], True],
        ["w3", None, None, "", None, 0, "", "", "", "", "", None, False]]


def _by_init(row: list) -> Work:
    v = list(row)
    v[4], v[11], v[12] = tuple(v[4]) if v[4] else (), tuple(v[11]) if v[11] else (), bool(v[12])
    return Work(*v)


def test_works_by_field_are_the_works_init_makes():
    made = works_by_field(list(zip(*[r + ["form", "more"] for r in ROWS])), len(ROWS))
    want = [_by_init(r) for r in ROWS]
    assert made == want and [hash(w) for w in made] == [hash(w) for w in want]
    assert [repr(w) for w in made] == [repr(w) for w in want]
    assert works_by_field([], 0) == []


def test_row_file_works_equal_the_mapped_columns(default_catalog, tmp_path):
    gen = next(p for p in default_catalog.iterdir() if p.name.startswith("gen-"))
    gen = shutil.copytree(gen, tmp_path / gen.name)
    reader, mapped = WorkReader(gen, blocking.index_stamp(gen)), WorkReader(gen, {"no": "stamp"})
    assert reader.row_file is not None and mapped.row_file is None
    rows = random.Random(5).choices(range(blocking.index_stamp(gen)["n_works"]), k=300)
    assert reader.works(rows) == mapped.works(rows) == reader.works_and_forms(rows)[0]
