"""``resolvers/`` is the bottom floor: it imports nothing from the application (``citeledger``),
the flows or Prefect, so the resolution core can be used and tested on its own. ``papers/`` (a
paper in, its references out) is a floor of its own beside it: it imports nothing from the
application, the flows or Prefect, and of the resolvers only the identifier grammar
(``resolvers.identifiers.extract``: pure functions), so a paper's name gives an arXiv id by the same rule
as a reference string."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BANNED = ("citeledger", "flows", "prefect")


def banned_imports(source: str, banned: tuple[str, ...] = BANNED) -> list[tuple[int, str]]:
    """(line, module) of every import of a banned package, at any depth of the module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] in banned]
    return found


def package_offenders(package: str, at_least: int, banned: tuple[str, ...] = BANNED) -> list[str]:
    """Every banned import in a package's modules (the walk must find ``at_least`` of them)."""
    modules = sorted((ROOT / package).rglob("*.py"))
    assert len(modules) > at_least  # the walk found the package
    return [f"{path.relative_to(ROOT)}:{line}: imports {name}"
            for path in modules for line, name in banned_imports(path.read_text(encoding="utf-8"), banned)]


def test_resolvers_import_nothing_from_the_app():
    assert package_offenders("resolvers", 10) == []


PAPERS_MAY_IMPORT = ("resolvers.identifiers.extract",)


def test_papers_import_nothing_from_the_app_and_of_the_resolvers_only_the_identifiers():
    offenders = package_offenders("papers", 5, BANNED + ("resolvers",))
    assert [o for o in offenders if not o.endswith(PAPERS_MAY_IMPORT)] == []


@pytest.mark.parametrize(
    "source",
    [
        "from citeledger.config import Config",
        "import prefect",
        "def f():\n    import flows.resolve\n",
        "from prefect.tasks import task as t",
    ],
)
def test_the_check_catches_an_app_import(source):
    assert banned_imports(source)


def test_the_check_leaves_the_floor_alone():
    assert banned_imports("from resolvers.errors import ConfigError\nfrom . import model\nimport httpx") == []
