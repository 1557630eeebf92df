"""What a package's ``__init__.py`` holds: its docstring and, where the package has a public face,
the imports of that face and its ``__all__``; never logic (no function, class, condition or other
assignment), so reading a package's folder is reading its modules."""
from __future__ import annotations

import ast

from import_graph import ROOT, product_graph

GRAPH = product_graph()
INITS = {module: path for module, path in GRAPH.modules.items() if path.name == "__init__.py"}


def _logic(tree: ast.Module) -> list[str]:
    """The statements of an ``__init__`` that are more than a docstring, imports and ``__all__``."""
    body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) and \
        isinstance(tree.body[0].value, ast.Constant) and isinstance(tree.body[0].value.value, str) else tree.body
    found = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        found.append(f"line {node.lineno}: {type(node).__name__}")
    return found


def test_package_inits_hold_no_logic():
    assert INITS
    logic = {str(path.relative_to(ROOT)): found for path in INITS.values()
             if (found := _logic(ast.parse(path.read_text(encoding="utf-8"))))}
    assert logic == {}


def test_every_package_has_a_docstring():
    assert [str(p.relative_to(ROOT)) for p in INITS.values()
            if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))] == []


def test_a_face_is_named_in_all():
    """An ``__init__`` that imports names for its face lists them in ``__all__``."""
    unlisted = {}
    for path in INITS.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module != "__future__"
                    for a in n.names}
        listed = {elt.value for n in tree.body if isinstance(n, ast.Assign)
                  and [getattr(t, "id", None) for t in n.targets] == ["__all__"]
                  for elt in getattr(n.value, "elts", []) if isinstance(elt, ast.Constant)}
        if imported != listed:
            unlisted[str(path.relative_to(ROOT))] = sorted(imported ^ listed)
    assert unlisted == {}


def test_the_logic_check_sees_logic():
    assert _logic(ast.parse('"""doc"""\nfrom a import b\n__all__ = ["b"]\n')) == []
    assert _logic(ast.parse('"""doc"""\ndef f():\n    pass\nX = 1\n')) == ["line 2: FunctionDef", "line 4: Assign"]
