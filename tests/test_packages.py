"""What a package's ``__init__.py`` holds: its docstring and, where the package has a public face,
the imports of that face and its ``__all__``; never logic (no function, class, condition or other
assignment), so reading a package's folder is reading its modules."""
from __future__ import annotations

import ast
import re

from import_graph import ROOT, product_graph, room
from test_layering import LAYERS

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


# --- docstrings true -------------------------------------------------------------------------------
# A package's docstring names its modules (``name``) and says what it may import ("May import: ...").
# Both are held against the code: every module it names is one of its own (or named by a dotted path
# that exists), every module of its own is named, and every import its modules make is one it says
# it may make, each of which the layers allow.

NAMED = re.compile(r"``([A-Za-z_][\w.]*)``")
BELOW = re.compile(r"``([A-Za-z_][\w.]*)``(?: \([^)]*\))? and (?:the packages|everything|the top-level modules) below (?:it|them)")
PRODUCT = ("citeledger", "resolvers", "papers", "flows")


def _children(package: str) -> dict[str, str]:
    """The package's own modules and subpackages by their last name."""
    depth = package.count(".") + 1
    return {m.split(".")[-1]: m for m in GRAPH.modules if m.startswith(package + ".") and m.count(".") == depth}


def _resolve(name: str, package: str) -> list[str] | None:
    """The product modules a docstring's ``name`` stands for (a module, or every module of a
    package), looked up in the package, its parent, ``citeledger`` and from the top; None when
    it names no module."""
    parent = package.rsplit(".", 1)[0] if "." in package else package
    for base in (package, parent, "citeledger", ""):
        full = f"{base}.{name}" if base else name
        if full in GRAPH.modules:
            return [m for m in GRAPH.modules if m == full or m.startswith(full + ".")]
    return None


def _may_import_clause(text: str) -> str:
    """The sentence that says what a package may import (to its first full stop)."""
    return re.split(r"\.(?:\s|$)", text.split("May import", 1)[1], maxsplit=1)[0]


def _may_import(package: str, text: str) -> set[str] | None:
    """The modules the "May import" sentence allows (None: the docstring has none)."""
    if "May import" not in text:
        return None
    said = _may_import_clause(text)
    rank = {name: i for i, name in enumerate(LAYERS)}
    allowed = {m for m in GRAPH.modules if m == package or m.startswith(package + ".")}
    for name in NAMED.findall(said):
        allowed |= set(_resolve(name, package) or ())
    for name in BELOW.findall(said):
        top = room(_resolve(name, package)[0]) if _resolve(name, package) else None
        if top in rank:
            allowed |= {m for m in GRAPH.modules if rank.get(room(m), len(LAYERS)) <= rank[top]}
    return allowed


def _docstring(module: str) -> str:
    return ast.get_docstring(ast.parse(INITS[module].read_text(encoding="utf-8"))) or ""


def _unsaid_imports(package: str) -> list[str]:
    allowed = _may_import(package, _docstring(package))
    if allowed is None:
        return []
    return sorted({f"{m} imports {t}" for m, ts in GRAPH.edges.items() if m.startswith(package + ".") or m == package
                   for t in ts if t.split(".")[0] in PRODUCT and t not in allowed and not t.startswith(package)})


def test_every_package_names_its_own_modules_and_only_them():
    wrong = {}
    for package in INITS:
        text = _docstring(package)
        body = text.split("May import", 1)[0]
        children = _children(package)
        leaves = {m.split(".")[-1] for m in GRAPH.modules}
        said = NAMED.findall(body)
        elsewhere = [n for n in said if "." not in n and n in leaves and n not in children and n not in PRODUCT]
        missing_paths = [n for n in said if "." in n and n.split(".")[0] in PRODUCT and not _names_something(n)]
        unnamed = [c for c in children if c != "__main__" and not re.search(rf"``[\w.]*\b{c}\b", text)]
        if elsewhere or missing_paths or unnamed:
            wrong[package] = {"names a module of another package": elsewhere, "names no module": missing_paths,
                              "leaves unnamed": unnamed}
    assert wrong == {}


def _names_something(dotted: str) -> bool:
    """A dotted name that is a module, or a module's attribute."""
    parts = dotted.split(".")
    return any(".".join(parts[:i]) in GRAPH.modules for i in range(len(parts), 0, -1))


def test_every_package_may_import_what_it_imports():
    assert {p: u for p in INITS if (u := _unsaid_imports(p))} == {}


def test_what_a_package_may_import_the_layers_allow():
    """A room a docstring says its package may import lies below the package in ``LAYERS``."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for package in INITS:
        text = _docstring(package)
        if "May import" not in text:
            continue
        here = rank[room(package)]
        for name in NAMED.findall(_may_import_clause(text)):
            targets = _resolve(name, package) or []
            wrong += [f"{package} may import {name}" for t in targets[:1]
                      if rank.get(room(t), -1) > here]
    assert wrong == []
