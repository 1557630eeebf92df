"""Names that need no alias: no two modules of the product share a file name (a name found by a
search, in a traceback or in a log line is one module), and no module is imported under another
name in more than one place (when its importers rename it, its name is the one they give it)."""
from __future__ import annotations

import ast
from collections import defaultdict

from import_graph import ROOT, product_graph

GRAPH = product_graph()


def _file_names() -> dict[str, list[str]]:
    names: dict[str, list[str]] = defaultdict(list)
    for path in GRAPH.modules.values():
        if path.name not in ("__init__.py", "__main__.py"):
            names[path.name].append(str(path.relative_to(ROOT)))
    return names


def renamed_imports(modules: dict = GRAPH.modules) -> dict[str, list[str]]:
    """Each product module imported under another name -> ``importer as alias`` of every such import."""
    found: dict[str, list[str]] = defaultdict(list)
    for importer, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pairs = [(a.name, a.asname) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                pairs = [(f"{node.module}.{a.name}", a.asname) for a in node.names]
            else:
                continue
            for module, alias in pairs:
                if module in modules and alias and alias != module.rsplit(".", 1)[-1]:
                    found[module].append(f"{importer} as {alias}")
    return dict(found)


def test_no_two_modules_share_a_file_name():
    assert {name: paths for name, paths in _file_names().items() if len(paths) > 1} == {}


def test_no_module_is_renamed_at_import_in_more_than_one_place():
    assert {module: uses for module, uses in renamed_imports().items() if len(uses) > 1} == {}


def test_the_alias_check_sees_both_forms_of_import(tmp_path):
    from import_graph import product_graph as graph_of

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "store.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from pkg import store as catalog\nimport pkg.store as s\n")
    (tmp_path / "pkg" / "b.py").write_text("from pkg import store\n")
    assert renamed_imports(graph_of(tmp_path, ("pkg",)).modules) == {"pkg.store": ["pkg.a as catalog", "pkg.a as s"]}
