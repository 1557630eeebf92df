"""The documentation holds together: every relative link of a Markdown page names a file of the
repository (and, with ``#anchor``, a heading of that page), every ``docs/...`` path a file, code
comment or help text names exists, and every page under ``docs/`` is reached from the README by
links, so a page moved or renamed leaves no reader at a dead end. And the pages stay true to the
code they name: every module, file or folder of the code a page names (``resolvers/resolution.py``,
``citeledger/storage/``, ``citeledger.run.planning.DEFAULT_BATCH_SIZE``) exists, with the name it
names in it.

Third-party material (``tests/fixtures/``) is left as its authors wrote it; the work-log test and
this one name made-up pages as examples."""
from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIRD_PARTY = ("tests/fixtures/",)
EXAMPLES = ("tests/test_docs_links.py", "tests/test_no_worklog.py")  # made-up pages as examples
LINK = re.compile(r"!?\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")  # its text may break lines
CODE = re.compile(r"^(```|~~~).*?^\1[^\n]*$|`[^`\n]*`", re.S | re.M)
DOCS_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]*\w\.(?:md|png)\b")
CODE_ROOTS = ("citeledger", "resolvers", "papers", "flows")
# a path of the code as pages name it: a file or folder, or a module and one of its names
CODE_PATH = re.compile(r"(?<![\w./-])(?:citeledger|resolvers|papers|flows|tests|benchmarks)(?:/[\w.-]*\w)+/?(?![\w*])")
DOTTED = re.compile(r"(?<![\w./-])((?:citeledger|resolvers|papers|flows)(?:\.[A-Za-z_]\w*)+)(?![\w-])")
NOT_CODE = {"citeledger.toml"}  # the settings file, named like a module
FILE_SUFFIXES = {"md", "py", "json", "jsonl", "toml", "yaml", "txt", "html", "csv", "gz", "parquet", "pdf", "tex"}


def tracked(suffixes: tuple[str, ...] | None = None) -> list[Path]:
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    paths = [ROOT / n for n in names.splitlines() if not n.startswith(THIRD_PARTY)]
    return [p for p in paths if p.is_file() and (suffixes is None or p.suffix in suffixes)]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    text = CODE.sub(lambda m: "" if m.group(0).startswith(("```", "~~~")) else m.group(0), page.read_text("utf-8"))
    for heading in re.findall(r"^#{1,6} (.+?)#*\s*$", text, re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    found |= set(re.findall(r"<a (?:name|id)=\"([^\"]+)\"", text))
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every link outside code, in a Markdown page."""
    text = page.read_text(encoding="utf-8")
    prose = CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return [(prose.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(prose)]


def broken(page: Path) -> list[str]:
    out = []
    for line, target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        path_part, _, fragment = target.partition("#")
        where = (page.parent / unquote(path_part)).resolve() if path_part else page
        name = f"{page.relative_to(ROOT)}:{line}: {target}"
        if ROOT not in where.parents and where != ROOT:
            out.append(f"{name} (outside the repository)")
        elif not where.exists():
            out.append(f"{name} (no such file)")
        elif fragment and where.suffix == ".md" and unquote(fragment) not in anchors(where):
            out.append(f"{name} (no heading #{fragment})")
    return out


def test_every_relative_link_of_a_page_leads_somewhere():
    assert [b for page in tracked((".md",)) for b in broken(page)] == []


def test_every_docs_path_named_anywhere_exists():
    missing = []
    for path in tracked():
        if str(path.relative_to(ROOT)) in EXAMPLES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for m in DOCS_PATH.finditer(text):
            if not (ROOT / m.group(0)).exists():
                missing.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}")
    assert missing == []


def _top_names(module: Path) -> set[str]:
    """The names a module defines or imports at its top (and under a top-level ``if`` or ``try``)."""
    names = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        for inner in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(inner.name)
            elif isinstance(inner, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in inner.names}
            elif isinstance(inner, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def code_name_missing(parts: list[str]) -> str | None:
    """Why the dotted parts (``citeledger``, ``run``, ``pipeline``, ``DEFAULT_BATCH_SIZE``) name nothing
    of the code, or None: folders, then a module, then at most one name defined in it."""
    here = ROOT
    for i, part in enumerate(parts):
        if (here / part).is_dir():
            here = here / part
        elif (here / f"{part}.py").is_file():
            module, rest = here / f"{part}.py", parts[i + 1:]
            return f"no {rest[0]} in {module.relative_to(ROOT)}" if rest and rest[0] not in _top_names(module) else None
        elif i and (here / "__init__.py").is_file() and part in _top_names(here / "__init__.py"):
            return None
        else:
            return f"no {'/'.join(parts[:i + 1])}"
    return None


def documentation() -> list[Path]:
    return [p for p in tracked((".md",)) if re.match(r"(README|CONTRIBUTING)\.md$|docs/", str(p.relative_to(ROOT)))]


def test_every_module_file_and_name_a_page_names_exists():
    missing = []
    for page in documentation():
        text = page.read_text(encoding="utf-8")
        for m in CODE_PATH.finditer(text):
            path = m.group(0)
            if (ROOT / path).exists() or not all(re.match(r"[A-Za-z_]", part) for part in path.split("/")):
                continue  # a file or folder of the repository, or an example's (``papers/2501.00001.tar.gz``)
            if why := code_name_missing(re.sub(r"\.py(?=\.|$)", "", path.rstrip("/")).replace("/", ".").split(".")):
                missing.append(f"{page.relative_to(ROOT)}: {path} ({why})")
        for m in DOTTED.finditer(text):
            name = m.group(1)
            if name in NOT_CODE or name.rsplit(".", 1)[1] in FILE_SUFFIXES:  # a page (papers.md), not a module
                continue
            if why := code_name_missing(name.split(".")):
                missing.append(f"{page.relative_to(ROOT)}: {name} ({why})")
    assert missing == []


def test_every_page_of_the_docs_is_reached_from_the_readme():
    reached, todo = set(), [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        if page in reached or not page.is_file() or page.suffix != ".md":
            continue
        reached.add(page)
        for _, target in links(page):
            path_part = target.partition("#")[0]
            if path_part and not re.match(r"^[a-z][a-z0-9+.-]*:", path_part):
                todo.append((page.parent / unquote(path_part)).resolve())
    pages = {p.resolve() for p in tracked((".md",)) if p.relative_to(ROOT).parts[0] == "docs"}
    assert sorted(str(p.relative_to(ROOT)) for p in pages - reached) == []


@pytest.mark.parametrize(("heading", "anchor"), [
    ("## `[search]`: search-based matching", "search-search-based-matching"),
    ("## Which papers cite retracted works?", "which-papers-cite-retracted-works"),
    ("### `observations` (one row per reference per run) and `current`",
     "observations-one-row-per-reference-per-run-and-current"),
])
def test_anchors_are_githubs(tmp_path, heading, anchor):
    page = tmp_path / "x.md"
    page.write_text(f"# Title\n\n{heading}\n\n```sh\n# not a heading\n```\n")
    assert anchor in anchors(page) and "not-a-heading" not in anchors(page)


def test_a_name_of_the_code_is_checked_down_to_the_module_and_its_name(tmp_path, monkeypatch):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("from pkg.sub.mod import FACE\n")
    (tmp_path / "pkg" / "sub" / "mod.py").write_text("FACE = 1\n\ndef _merge():\n    pass\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert code_name_missing(["pkg", "sub", "mod", "_merge"]) is None
    assert code_name_missing(["pkg", "FACE"]) is None
    assert code_name_missing(["pkg", "mod", "_merge"]) == "no pkg/mod"
    assert code_name_missing(["pkg", "sub", "mod", "gone"]) == "no gone in pkg/sub/mod.py"
