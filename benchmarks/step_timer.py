"""CPU seconds spent in named functions of a run, for the benchmarks' ``--steps``: each function is
wrapped where the code under test looks it up (a function imported by name is wrapped in the module
that imported it), so nested steps count inside the step that runs them too."""
from __future__ import annotations

import importlib
import resource
import time
from typing import Iterable


def cpu_with_children() -> float:
    """CPU seconds (user + system) of this process and of the child processes it waited for
    (worker pools, ``pdftotext``)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def time_steps(steps: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Wrap each (module, attribute) of ``steps`` (``Class.method`` for a method) to add its CPU seconds
    (``time.process_time``) under the attribute's name to the dict returned; a missing one is skipped."""
    spent: dict[str, float] = {}
    for module_name, attr in steps:
        owner: object = importlib.import_module(module_name)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        if not hasattr(owner, name):
            continue
        inner = getattr(owner, name)

        def timed(*a, _inner=inner, _key=attr, **k):
            c0 = time.process_time()
            try:
                return _inner(*a, **k)
            finally:
                spent[_key] = spent.get(_key, 0.0) + time.process_time() - c0
        setattr(owner, name, timed)
    return spent
