"""One reference string's way through ``citeledger resolve``, from the calls the command makes.

The command runs in this process (``citeledger.cli.entry.main``, the direct path: no Prefect
API, batches in threads) under ``sys.setprofile`` and ``threading.setprofile``. Every call into a
product module (``resolvers``, ``papers``, ``citeledger``, ``flows``) is recorded as an arrow from
the product module nearest up the stack to the module called; what runs while a module is
imported (a module body and whatever it calls) is not the string's way and is left out. The way is
the modules the command enters, in the order it first enters them; a pair of modules that call
each other both ways is a loop of control across the layers (a callback into a caller, a lower
module handing work back up).

``python tests/call_way.py`` prints the way, its figures (modules, folders, two-way pairs) and the
load average; ``--write`` draws it in ``docs/contributing/architecture.md`` (between the ``call way`` markers).
The catalog is built from ``data/sources/*`` into a temporary folder before the trace starts."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("resolvers", "papers", "citeledger", "flows")
ONE_REFERENCE = {"citing_paper": "way", "reference_index": 1,
                 "raw": "Novembre J, Johnson T, Bryc K, Kutalik Z, Boyko AR, Auton A, Indap A, King KS, Bergmann S, "
                        "Nelson MR, Stephens M, Bustamante CD (2008) Genes mirror geography within Europe. "
                        "Nature 456:98-101"}
BEGIN, END = "<!-- call way: begin (python tests/call_way.py --write) -->", "<!-- call way: end -->"


@dataclass
class Way:
    modules: list[str] = field(default_factory=list)  # in the order first entered
    calls: dict[tuple[str, str], int] = field(default_factory=dict)  # (caller, callee) -> calls
    functions: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (caller, callee) -> "f -> g"

    @property
    def folders(self) -> list[str]:
        return sorted({m.rsplit(".", 1)[0] if m.count(".") else m for m in self.modules})

    @property
    def two_way(self) -> list[tuple[str, str]]:
        return sorted((a, b) for (a, b) in self.calls if a < b and (b, a) in self.calls)


def _product_module(frame: FrameType) -> str | None:
    name = frame.f_globals.get("__name__", "")
    return name if name.split(".")[0] in PRODUCT else None


def trace(argv: list[str]) -> tuple[Way, int]:
    """``citeledger ARGV`` run under the profiler: its way and its exit status."""
    from citeledger.cli.entry import main

    way = Way()
    seen: set[str] = set()
    lock = threading.Lock()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = _product_module(frame)
        if callee is None or frame.f_code.co_name == "<module>":
            return
        caller, caller_function = None, ""
        up = frame.f_back
        while up is not None:
            if up.f_code.co_name == "<module>" and _product_module(up) is not None:
                return  # a module being imported: not the string's way
            if caller is None and (module := _product_module(up)) is not None:
                caller, caller_function = module, up.f_code.co_qualname
            up = up.f_back
        with lock:
            if callee not in seen:
                seen.add(callee)
                way.modules.append(callee)
            if caller is not None and caller != callee:
                way.calls[(caller, callee)] = way.calls.get((caller, callee), 0) + 1
                way.functions.setdefault((caller, callee), set()).add(f"{caller_function} -> {frame.f_code.co_qualname}")

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        status = main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return way, status


def resolve_way(work: Path, catalog: Path | None = None) -> Way:
    """The way of ``ONE_REFERENCE`` through ``citeledger resolve`` into a new ledger under ``work``,
    against ``catalog`` (default: the embedded catalog, built under ``work`` first)."""
    from citeledger.catalog.catalog_store import CatalogStore

    ledger, refs = work / "ledger", work / "one.jsonl"
    if catalog is None:
        catalog = work / "catalog"
        CatalogStore(catalog).build(sorted((ROOT / "data" / "sources").iterdir()))
    refs.write_text(json.dumps(ONE_REFERENCE) + "\n", encoding="utf-8")
    way, status = trace(["resolve", str(refs), "--catalog", str(catalog), "--ledger", str(ledger)])
    if status != 0:
        raise SystemExit(f"citeledger resolve exited {status}")
    return way


def mermaid(way: Way) -> str:
    """The way as a flowchart: a box per module inside a box per folder, an arrow per caller ->
    callee (a pair calling each other both ways drawn ``<-->``)."""
    ids = {m: m.replace(".", "_") for m in way.modules}
    lines = ["```mermaid", f"%% {len(way.modules)} modules in {len(way.folders)} folders, "
             f"{len(way.two_way)} pairs calling each other both ways", "flowchart LR"]
    for folder in way.folders:
        lines.append(f"    subgraph {folder.replace('.', '_')}_[{folder}]")
        lines += [f"        {ids[m]}[{m.rsplit('.', 1)[-1]}]" for m in way.modules
                  if (m.rsplit(".", 1)[0] if m.count(".") else m) == folder]
        lines.append("    end")
    both = set(way.two_way)
    for caller, callee in sorted(way.calls):
        if caller in ids and callee in ids and (callee, caller) not in both:
            lines.append(f"    {ids[caller]} {'<-->' if (caller, callee) in both else '-->'} {ids[callee]}")
    return "\n".join([*lines, "```"])


def with_way(page: str, way: Way) -> str:
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{mermaid(way)}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="draw the way in docs/contributing/architecture.md")
    args = parser.parse_args()
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    with tempfile.TemporaryDirectory(prefix="citeledger-way-") as tmp:
        way = resolve_way(Path(tmp))
    print("the way, in the order first entered:")
    for module in way.modules:
        print(f"  {module}")
    print(f"{len(way.modules)} modules in {len(way.folders)} folders; "
          f"{len(way.two_way)} pairs calling each other both ways")
    for a, b in way.two_way:
        print(f"  {a} <-> {b}: " + "; ".join(sorted(way.functions[(a, b)] | way.functions[(b, a)])))
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)")
    if args.write:
        page = ROOT / "docs" / "contributing" / "architecture.md"
        text = page.read_text(encoding="utf-8")
        if BEGIN not in text:
            raise SystemExit(f"{page}: no {BEGIN!r} marker")
        page.write_text(with_way(text, way), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
