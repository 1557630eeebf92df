"""One reference string's way through ``citeledger resolve`` (``call_way``, from the calls the
command makes): no module on it calls back into a module that called it, so control flows one way
down the layers, from the command to the run's steps, to the resolution core and the ledger."""
from __future__ import annotations

from call_way import resolve_way


def test_no_two_modules_on_the_way_call_each_other(tmp_path, default_catalog):
    way = resolve_way(tmp_path, default_catalog)
    assert {"citeledger.run.planning", "citeledger.run.batches", "citeledger.run.finishing",
            "resolvers.resolution", "citeledger.records.record"} <= set(way.modules)
    assert way.two_way == []
