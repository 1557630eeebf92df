"""One error tree: every exception citeledger raises on purpose is defined in resolvers/errors.py
(the root and the resolution core's errors) or citeledger/app_errors.py (the application's), under
``TransientError`` (retried) or ``PermanentError`` (a reject or an exit code)."""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import citeledger
import resolvers
from citeledger import app_errors
from resolvers import errors
from resolvers.errors import CiteledgerError, PermanentError, TransientError

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("citeledger", "flows", "resolvers")
HOMES = {"resolvers/errors.py", "citeledger/app_errors.py"}
# modules whose import needs Prefect (flows/) are read as source below, not imported
IMPORTED = (citeledger, resolvers)


def _product_modules() -> list[str]:
    names = []
    for package in IMPORTED:
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return names


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def test_every_citeledger_error_is_defined_in_errors_py():
    for name in _product_modules():
        importlib.import_module(name)
    strays = sorted(f"{c.__module__}.{c.__qualname__}" for c in _subclasses(CiteledgerError)
                    if c.__module__ not in (errors.__name__, app_errors.__name__) and not c.__module__.startswith("test"))
    assert strays == [], f"define these in resolvers/errors.py or citeledger/app_errors.py: {strays}"


def test_no_exception_class_is_defined_outside_errors_py():
    """Read as source, so flows/ (Prefect) and classes that do not derive from CiteledgerError
    (a bare ``Exception`` subclass) are caught too; ``Terminated`` is a signal, not an error."""
    allowed = {("citeledger/processes.py", "Terminated")}
    strays = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in HOMES:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef) and (rel, node.name) not in allowed and any(
                        _names_an_exception(base) for base in node.bases):
                    strays.append(f"{rel}:{node.name}")
    assert strays == [], f"define these in resolvers/errors.py or citeledger/app_errors.py: {strays}"


def _names_an_exception(base: ast.expr) -> bool:
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    return name.endswith(("Error", "Exception", "Interrupt", "Unavailable", "Failed", "Timeout")) or \
        name in {n for module in (errors, app_errors) for n, c in inspect.getmembers(module, inspect.isclass)
                 if issubclass(c, BaseException)}


def test_every_error_is_on_one_branch_with_a_docstring():
    for cls in _subclasses(CiteledgerError):
        assert issubclass(cls, TransientError) != issubclass(cls, PermanentError), cls
        assert cls.__doc__ and cls.__doc__ != CiteledgerError.__doc__, cls


def test_the_resolution_core_defines_only_what_it_raises():
    """An error of ``resolvers/errors.py`` is raised or caught by the core itself (the resolvers
    or the papers); the application's errors live beside the application."""
    used: set[str] = set()
    for package in ("resolvers", "papers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.relative_to(ROOT).as_posix() == "resolvers/errors.py":
                continue
            used |= {n.id for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Name)}
    defined = {n for n, c in inspect.getmembers(errors, inspect.isclass)
               if issubclass(c, CiteledgerError) and c.__module__ == errors.__name__}
    bases = {c.__name__ for c in (CiteledgerError, TransientError, PermanentError)}
    assert sorted(defined - used - bases) == []
