"""The shape the code keeps. Long modules and functions were where concerns fused (a
148-line catalog build doing extract, merge, index and publish at once), and hand-written
temp-then-rename code was where a write lost its fsync: so no product module over 500 lines, no
function over 60, and no file written anywhere but through ``citeledger/storage/atomic.py``."""
import ast
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
PRODUCT = sorted(p for pkg in ("resolvers", "citeledger", "flows", "papers") for p in (REPO / pkg).rglob("*.py"))
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
# Calls that put bytes on disk or move files into place: atomic.py's alone.
WRITING_CALLS = {("os", "replace"), ("os", "rename"), ("shutil", "move"), ("shutil", "copyfile"),
                 ("tempfile", "mkstemp"), ("tempfile", "NamedTemporaryFile"), (None, "write_text"),
                 (None, "write_bytes")}
# The modules that decide what is written, each for its own folder, through storage/atomic.py (named
# by their path under citeledger/). The catalog folder: catalog/ (store, extract parts, pins, sharding)
# and index/ (index files, shards); the ledger folder: ledger/ledger_store; the nightly's own inbox and
# harvest state: nightly/steps, storage/remote_state.
WRITERS = {"storage/atomic", "catalog/catalog_store", "catalog/extract_parts", "catalog/generation_pins", "catalog/sharding",
           "index/blocking", "index/shards", "ledger/ledger_store", "nightly/steps", "storage/remote_state",
           "engine/fuzzy_outcomes",  # the fuzzy outcomes a pool's workers share, in the temp folder
           "storage/external_sort",  # the index files blocking streams (``npy_stream``), through atomic.py
           "site/site_files", "site/folder",
           "site/staging"}  # the static site (``citeledger site OUT``), its own folder
# Scratch, not data: the input spool (a pipe copied once so it can be read twice, deleted after
# planning), the lock files of storage/locking (empty; only their flock matters) and the index build's
# sort runs (storage/external_sort: in the build's run folder, removed when it ends or by the next build).
SCRATCH = {"inputs/files": {"mkstemp", "fdopen"}, "storage/locking": {"open"},
           "storage/external_sort": {"open"}}  # the index build's sort runs, appended, read back and removed


def long_functions(tree: ast.AST) -> list[str]:
    return [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)" for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def writing_calls(tree: ast.AST) -> set[str]:
    """Names of the writing calls in a module, and ``open`` with a writing mode."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        if (owner, name) in WRITING_CALLS or (None, name) in WRITING_CALLS:
            found.add(name)
        modes = [a for a in node.args[1:2] if isinstance(a, ast.Constant)] + \
                [k.value for k in node.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)]
        if name in ("open", "fdopen") and any(set(str(m.value)) & set("wax") for m in modes):
            found.add(name)
    return found


def atomic_imports(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.ImportFrom) and (node.module or "").endswith("atomic")
               and any(a.name != "file_sha256" and a.name != "sql_literal" for a in node.names)
               for node in ast.walk(tree))


@pytest.mark.parametrize("path", PRODUCT, ids=lambda p: str(p.relative_to(REPO)))
def test_product_modules_and_functions_stay_small(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES, f"{path.name}: {len(text.splitlines())} lines"
    assert long_functions(ast.parse(text)) == []


def module_key(path: Path) -> str:
    """``citeledger/catalog/catalog_store.py`` -> ``catalog/catalog_store`` (other packages keep their top folder)."""
    rel = path.relative_to(REPO).with_suffix("")
    return "/".join(rel.parts[1:] if rel.parts[0] == "citeledger" else rel.parts)


@pytest.mark.parametrize("path", PRODUCT, ids=lambda p: str(p.relative_to(REPO)))
def test_files_are_written_only_through_the_atomic_helper(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    key = module_key(path)
    if key != "storage/atomic":
        assert writing_calls(tree) - SCRATCH.get(key, set()) == set()
    if atomic_imports(tree):
        assert key in WRITERS, f"{key} writes files: add it to docs/contributing/architecture.md first"


def test_every_writer_and_scratch_module_named_exists():
    assert {k for k in WRITERS | set(SCRATCH) if not (REPO / "citeledger" / f"{k}.py").exists()} == set()


def test_the_shape_checks_see_what_they_forbid(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(ast.parse(f"def too_long():\n{body}\n")) == [f"too_long ({MAX_FUNCTION_LINES + 1} lines)"]
    sneaky = "import os\ndef f(p):\n    with open(p, 'w') as fh:\n        fh.write('x')\n    os.replace(p, p + '.x')\n"
    assert writing_calls(ast.parse(sneaky)) == {"open", "replace"}
    assert writing_calls(ast.parse("def g(p):\n    return open(p).read()\n")) == set()
