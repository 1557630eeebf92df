"""The product's import graph, read from the source with ``ast`` (lazy imports inside functions
included): which product module imports which, and which private names (``_name``) cross a
module's border, by ``from M import _name`` or by ``module._name``. Used by the layering test."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("resolvers", "papers", "citeledger", "flows")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@dataclass
class Graph:
    modules: dict[str, Path] = field(default_factory=dict)
    edges: dict[str, set[str]] = field(default_factory=dict)
    private: list[str] = field(default_factory=list)


def _target(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(tree: ast.AST, module: str, is_package: bool, modules: dict[str, Path]):
    """(imported module, bound local name or None, imported name) of every import in a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, (alias.asname if alias.asname else None), None
        elif isinstance(node, ast.ImportFrom):
            target = _target(node, module, is_package)
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in modules:
                    yield full, alias.asname or alias.name, None
                elif target in modules:
                    yield target, None, alias.name


def _private_attributes(tree: ast.AST, bound: dict[str, str]) -> list[tuple[str, str]]:
    return [(bound[n.value.id], n.attr) for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in bound
            and n.attr.startswith("_") and not n.attr.startswith("__")]


def product_graph(root: Path = ROOT, packages: tuple[str, ...] = PRODUCT) -> Graph:
    graph = Graph()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            graph.modules[module_name(path, root)] = path
    for module, path in graph.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges = graph.edges.setdefault(module, set())
        bound: dict[str, str] = {}
        for target, local, name in _imports(tree, module, path.name == "__init__.py", graph.modules):
            if target != module:
                edges.add(target)
            if local:
                bound[local] = target
            if name and name.startswith("_") and not name.startswith("__"):
                graph.private.append(f"{module} imports {target}.{name}")
        graph.private += [f"{module} uses {target}.{attr}" for target, attr in _private_attributes(tree, bound)]
    return graph


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def room(module: str) -> str:
    """A module's room: its subpackage (``citeledger.records``), or itself when it sits at the top of
    ``citeledger`` or ``resolvers`` (``resolvers.model``); ``papers`` and ``flows`` are one room each."""
    parts = module.split(".")
    if parts[0] in ("papers", "flows"):
        return parts[0]
    return ".".join(parts[:2])


def room_edges(graph: Graph) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.edges.items():
        here = room(module)
        rooms.setdefault(here, set()).update(room(t) for t in targets if room(t) != here)
    return rooms


def _reduced(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The transitive reduction of an acyclic graph: an arrow implied by a longer path is left out."""
    def reach(node: str, seen: set[str]) -> set[str]:
        for nxt in edges.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                reach(nxt, seen)
        return seen

    return {n: {t for t in ts if not any(t in reach(o, set()) for o in ts - {t})} for n, ts in edges.items()}


def mermaid(graph: Graph) -> str:
    """The rooms of the product and their imports as a Mermaid flowchart (top: what imports more),
    ``resolvers`` drawn as one box in the application's picture and on its own in a second one."""
    def box(name: str) -> str:
        return name.replace(".", "_")

    rooms = room_edges(graph)
    app: dict[str, set[str]] = {}
    for here, theirs in rooms.items():
        if not here.startswith("resolvers"):
            app.setdefault(here, set()).update("resolvers" if t.startswith("resolvers") else t for t in theirs)
    core = {h: {t for t in ts if t.startswith("resolvers")} for h, ts in rooms.items() if h.startswith("resolvers")}
    parts = []
    for title, edges in (("application", app), ("resolvers", core)):
        lines = [f"%% {title}: an arrow is a direct import; one implied by a longer path is left out", "flowchart TD"]
        for here, theirs in sorted(_reduced(edges).items()):
            lines += [f"    {box(here)}[{here}] --> {box(t)}[{t}]" for t in sorted(theirs)]
            if not theirs:
                lines.append(f"    {box(here)}[{here}]")
        parts.append("```mermaid\n" + "\n".join(lines) + "\n```")
    return "\n\n".join(parts)


BEGIN, END = "<!-- import graph: begin (python tests/import_graph.py --write) -->", "<!-- import graph: end -->"


def with_picture(doc: str, graph: Graph) -> str:
    head, rest = doc.split(BEGIN, 1)
    return f"{head}{BEGIN}\n{mermaid(graph)}\n{END}{rest.split(END, 1)[1]}"


if __name__ == "__main__":
    import sys

    page = ROOT / "docs" / "contributing" / "architecture.md"
    if "--write" in sys.argv:
        page.write_text(with_picture(page.read_text(encoding="utf-8"), product_graph()), encoding="utf-8")
    else:
        print(mermaid(product_graph()))
