"""The product's layers, computed from the source with ``ast`` (lazy imports inside functions and
``TYPE_CHECKING`` imports included; ``tests/import_graph.py``):

- no import circle, between modules or between rooms (a room is a subpackage, or a module at the
  top of ``citeledger`` or ``resolvers``);
- no import from a lower room up: every import goes down ``LAYERS`` or stays in its room;
- no private name (``_name``) imported or used across modules;
- no product folder of more than ``MOST_MODULES`` modules.

``resolvers/`` is the bottom: it imports nothing of the application, the flows or Prefect, so the
resolution core can be used and tested on its own. ``papers/`` (a paper in, its references out)
stands beside it and may import only the identifier grammar (``resolvers.identifiers``) of it, so
a paper's name gives an arXiv id by the same rule as a reference string. The flows build on the
library; the command line stands on both and imports a flow where it starts a flow run, so every
link between them is an import this graph sees."""
from __future__ import annotations

from pathlib import Path

import pytest
from import_graph import ROOT, cycles, product_graph, room, room_edges

# bottom first; a room may import the rooms before it
LAYERS = [
    "resolvers.redaction", "resolvers.model", "resolvers.errors", "resolvers.strict_json", "resolvers.jcs",
    "resolvers.canonical", "resolvers.work_fields",
    "resolvers.notices", "resolvers.parsing", "resolvers.identifiers", "resolvers.catalog", "resolvers.openalex",
    "resolvers.verification", "resolvers.remote", "resolvers.candidates", "resolvers.context",
    "resolvers.search_step", "resolvers.resolution", "resolvers.observation", "resolvers",
    "papers",
    "citeledger.app_errors", "citeledger.options", "citeledger.processes", "citeledger.progress", "citeledger.display", "citeledger.config_model",
    "citeledger.config",
    "citeledger.pith", "citeledger.storage", "citeledger.works", "citeledger.sources", "citeledger.index",
    "citeledger.catalog", "citeledger.engine", "citeledger.inputs", "citeledger.ledger", "citeledger.records",
    "citeledger.run",
    "citeledger.nightly", "citeledger.evaluation", "citeledger.site", "citeledger", "flows", "citeledger.cli",
]
MOST_MODULES = 15
GRAPH = product_graph()


def test_every_room_has_a_layer():
    rooms = {room(m) for m in GRAPH.modules}
    assert sorted(rooms - set(LAYERS)) == []


def test_no_import_circle_between_modules_or_rooms():
    assert cycles(GRAPH.edges) == []
    assert cycles(room_edges(GRAPH)) == []


def test_every_import_goes_down_the_layers():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = [f"{here} imports {there}" for here, theirs in room_edges(GRAPH).items() for there in theirs
              if rank[there] > rank[here]]
    assert upward == []


def test_no_private_name_crosses_a_module():
    assert GRAPH.private == []


def test_no_product_folder_holds_more_than_fifteen_modules():
    folders: dict[Path, int] = {}
    for path in GRAPH.modules.values():
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    assert {str(f.relative_to(ROOT)): n for f, n in folders.items() if n > MOST_MODULES} == {}


def test_every_package_says_what_it_owns_and_may_import():
    packages = [p for p in GRAPH.modules.values() if p.name == "__init__.py" and len(p.relative_to(ROOT).parts) > 2]
    unsaid = [str(p.relative_to(ROOT)) for p in packages if "May import" not in p.read_text(encoding="utf-8")]
    assert packages and unsaid == []


def test_resolvers_import_nothing_from_the_app():
    bad = [f"{m} imports {t}" for m, ts in GRAPH.edges.items() if m.startswith("resolvers") for t in ts
           if t.split(".")[0] in ("citeledger", "flows", "papers")]
    assert bad == [] and not _third_party_imports("resolvers", ("prefect",))


def test_papers_import_of_the_resolvers_only_the_identifiers():
    bad = [f"{m} imports {t}" for m, ts in GRAPH.edges.items() if m.startswith("papers") for t in ts
           if t.split(".")[0] in ("citeledger", "flows") or (t.startswith("resolvers")
                                                             and not t.startswith("resolvers.identifiers"))]
    assert bad == [] and not _third_party_imports("papers", ("prefect",))


def test_the_library_never_imports_the_flows():
    """Only the command line starts a flow (``citeledger.cli``, above ``flows`` in ``LAYERS``)."""
    assert [f"{m} imports {t}" for m, ts in GRAPH.edges.items() if m.startswith("citeledger")
            and not m.startswith("citeledger.cli") for t in ts if t.startswith("flows")] == []


def test_the_command_line_starts_the_flows_it_names_by_import():
    """No flow is started by a name string (a link no import graph sees): the command line imports
    every flow module it runs, and loads none by its entrypoint."""
    cli = {t for m, ts in GRAPH.edges.items() if m.startswith("citeledger.cli") for t in ts if t.startswith("flows")}
    assert {"flows.resolve", "flows.records", "flows.nightly", "flows.refresh"} <= cli
    import ast
    import re

    entrypoint = re.compile(r"flows[./]\w+(\.py)?:\w+")
    named = [f"{m}: {n.value}" for m, p in GRAPH.modules.items() if m.startswith("citeledger")
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(n, ast.Constant) and isinstance(n.value, str) and entrypoint.search(n.value)]
    assert named == []


def _third_party_imports(package: str, names: tuple[str, ...]) -> list[str]:
    import ast

    found = []
    for module, path in GRAPH.modules.items():
        if not module.startswith(package):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{module} imports {m}" for m in mods if m.split(".")[0] in names]
    return found


@pytest.mark.parametrize("source, circle", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
])
def test_the_circle_check_finds_circles(source, circle):
    assert cycles(source) == circle


def test_the_graph_sees_lazy_and_private_imports(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from pkg.b import _hidden\n")
    (tmp_path / "pkg" / "b.py").write_text("from pkg import a\n_hidden = 1\ndef g():\n    return a._x\n")
    graph = product_graph(tmp_path, ("pkg",))
    assert cycles(graph.edges) == [["pkg.a", "pkg.b"]]
    assert sorted(graph.private) == ["pkg.a imports pkg.b._hidden", "pkg.b uses pkg.a._x"]


def test_the_architecture_picture_is_drawn_from_the_current_imports():
    from import_graph import with_picture

    page = (ROOT / "docs" / "contributing" / "architecture.md").read_text(encoding="utf-8")
    assert page == with_picture(page, GRAPH), "run `python tests/import_graph.py --write`"


RUN_STEPS = ["citeledger.run.planning", "citeledger.run.batches", "citeledger.run.finishing", "citeledger.run.orchestrate"]


def test_each_step_of_a_run_imports_only_the_steps_before_it():
    """``citeledger/run/``: planning, then batches, then finishing, then orchestrate; the modules
    beside them (the codec, the task runners, the notice check, the summary...) import no step."""
    later = {step: set(RUN_STEPS[i + 1:]) for i, step in enumerate(RUN_STEPS)}
    beside = [m for m in GRAPH.modules if m.startswith("citeledger.run.") and m not in RUN_STEPS]
    assert {s: sorted(GRAPH.edges[s] & later[s]) for s in RUN_STEPS if GRAPH.edges[s] & later[s]} == {}
    assert {m: sorted(GRAPH.edges[m] & set(RUN_STEPS)) for m in beside if GRAPH.edges[m] & set(RUN_STEPS)} == {}
