"""``mapped_pages.take_chunked`` takes rows of a many-batch mapped table batch by batch (Arrow's own take
concatenates every chunk first); it must give exactly ``Table.take``'s rows, in the asked order."""
import random

import pyarrow as pa

from citeledger.storage.mapped_files import map_ipc, take_chunked


def test_take_chunked_equals_arrow_take_on_a_mapped_table_of_many_batches(tmp_path):
    path = tmp_path / "t.arrow"
    schema = pa.schema([("title", pa.string()), ("authors", pa.list_(pa.string())), ("year", pa.int64())])
    with pa.ipc.new_file(str(path), schema) as writer:
        for b in range(7):
            n = [5, 1, 13, 2, 9, 4, 6][b]
            writer.write_table(pa.table({"title": [f"t{b}-{i}" if i % 4 else None for i in range(n)],
                                         "authors": [[f"a{b}{i}"] * (i % 3) for i in range(n)],
                                         "year": list(range(n))}, schema=schema))
    table = map_ipc(path)
    assert len(table.to_batches()) == 7
    rng = random.Random(3)
    for rows in ([0], [39], [39, 0, 5, 5, 6, 18, 17, 1], [rng.randrange(40) for _ in range(200)]):
        assert take_chunked(table, rows).to_pylist() == table.take(pa.array(rows, pa.int64())).to_pylist()
