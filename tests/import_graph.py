"""The project's import graph as Python runs it, for the layer and cycle tests (``tests/test_one_home.py``).

An edge ``A -> B`` means that importing ``A`` makes Python run ``B``, read from the source (``ast``):

- ``A`` imports ``B``, or a name ``B`` defines (``from B import name``), at any depth of the file: an import
  inside a function (a lazy import) is an edge too, as it runs the first time the function is called;
- ``A`` imports a module inside package ``B``: Python runs ``B/__init__.py`` first, so a package's
  ``__init__`` and everything it imports (its children included) count as much as the module asked for;
- a package's ``__init__`` importing its own children is an edge like any other.

Left out: the packages ``A`` itself lives in, when reached only because ``A`` imports one of their modules (they
are already being imported when ``A`` runs). A name imported from one of them (``from app.services import f``
inside ``app/services/x.py``) is an edge, since that package's ``__init__`` imports ``A``.
"""
from __future__ import annotations

import ast
import itertools
import sys
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("explainers", "workspace", "accounts", "study", "store", "app")


def module_files(packages=PACKAGES, root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``packages`` (a package is its ``__init__.py``)."""
    files = {}
    for pkg in packages:
        for p in sorted((root / pkg).rglob("*.py")):
            files[module_name(p, root)] = p
    return files


def module_name(path: Path, root: Path = ROOT) -> str:
    """``app/services/__init__.py`` -> ``app.services``; ``app/serve/access.py`` -> ``app.serve.access``."""
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def from_base(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` reads, relative ones resolved against ``package`` (the importer's)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    return ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))


def imported(path: Path, module: str) -> list[tuple[str, str | None]]:
    """``(base, name)`` of every import in ``path`` (``name`` None for ``import base``), at any depth of the file,
    relative ones resolved; ``module`` is the file's dotted name."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found += [(from_base(node, package), a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names]
    return found


def _ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph(packages=PACKAGES, root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project's modules (of ``packages``) that importing it runs; see the module docstring."""
    files = module_files(packages, root)

    def resolve(name):
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for module, path in files.items():
        own = _ancestors(module)
        deps = set()
        for base, name in imported(path, module):
            if base.split(".")[0] not in packages:
                continue
            target = resolve(f"{base}.{name}" if name and name != "*" else base)
            if target and target != module:
                deps.add(target)
                deps |= _ancestors(target) - own - {module}
        graph[module] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index, low, stack, on, found, counter = {}, {}, [], set(), [], itertools.count()

    def visit(v):
        index[v] = low[v] = next(counter)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest cycle through the first module of ``component`` (a strongly connected one), as a path that
    ends where it starts: ``["a", "b", "a"]``."""
    inside, start = set(component), component[0]
    before, queue, seen = {}, deque([start]), {start}
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v] & inside):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(before[path[-1]])
                return path[::-1] + [start]
            if w not in seen:
                seen.add(w)
                before[w] = v
                queue.append(w)
    raise ValueError(f"{component} is not strongly connected")
