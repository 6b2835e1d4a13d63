"""Habits as tests (issue 24): function bodies of at most 60 lines of code, classes of at most 200, modules of at
most 400 lines, in every package of the project and in tests/.

How it counts:

- a **line of code** is a line holding part of a statement: blank lines, comment-only lines and docstrings (of
  the module, classes and functions) are not counted, so a numpydoc docstring never pushes code over a limit;
- a **function's body** runs from its first statement (after the ``def`` line or lines) to its last line; a
  method is a function (``Class.method``) and a function nested in another is counted on its own and inside
  its parent;
- a **class** runs from its ``class`` line to its last line, methods included;
- a **module** is counted in physical lines, every line, as ``wc -l`` does and as the house rule reads (split past
  400 lines).

tests/ is held to the same rules: its functions and classes already fit, and one module is listed.

Today's offenders are listed in ``tests/size_allowlist.txt`` with their sizes then. The list only shrinks: the
test fails when something over a limit is not listed, when a listed one grew past its listed size, and when a
listed one fits now (or is gone: renamed or moved), so that its line is deleted. A listed one that shrank but
is still over may keep its line (or have its size lowered).
"""
from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "explainers", "workspace", "store", "accounts", "study", "benchmarks", "tests")
LIMITS = {"function": 60, "class": 200, "module": 400}
ALLOWLIST = ROOT / "tests" / "size_allowlist.txt"


def _code_lines(text: str, tree: ast.Module) -> set[int]:
    """Numbers of the lines holding part of a statement (not blank, not only a comment, not a docstring)."""
    lines = set()
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines -= set(range(first.lineno, first.end_lineno + 1))
    return lines


def measure(path: Path, name: str) -> dict[str, tuple[str, int]]:
    """``{key: (kind, size)}`` of the module at ``path`` (``name``: its path as listed) and of every function and
    class in it; keys are ``name`` and ``name::Qual.name``."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    code = _code_lines(text, tree)
    found = {name: ("module", len(text.splitlines()))}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                if isinstance(child, ast.ClassDef):
                    kind, start = "class", child.lineno
                else:
                    kind, start = "function", child.body[0].lineno
                size = sum(1 for n in range(start, child.end_lineno + 1) if n in code)
                key = f"{name}::{qual}"
                if key in found:  # the same name defined twice (under if/else): keep the larger
                    size = max(size, found[key][1])
                found[key] = (kind, size)
                visit(child, qual + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def project_sizes() -> dict[str, tuple[str, int]]:
    """:func:`measure` of every ``.py`` file of :data:`PACKAGES`."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "node_modules" not in path.parts:
                found.update(measure(path, path.relative_to(ROOT).as_posix()))
    return found


def read_allowlist(text: str) -> dict[str, int]:
    """``{key: size}`` of an allowlist: one ``<size> <key>`` a line; ``#`` starts a comment."""
    listed = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        size, _, key = line.partition(" ")
        if not size.isdigit() or not key.strip() or key.strip() in listed:
            raise ValueError(f"{ALLOWLIST.name}:{number}: expected '<size> <path[::Qual.name]>' once, not {line!r}")
        listed[key.strip()] = int(size)
    return listed


def judge(sizes: dict[str, tuple[str, int]], listed: dict[str, int]) -> list[str]:
    """What is wrong, one line each: over a limit and not listed, listed and grown, listed and fitting (or gone)."""
    wrong = []
    for key, (kind, size) in sorted(sizes.items()):
        if size > LIMITS[kind] and key not in listed:
            wrong.append(f"{key}: {kind} of {size} lines, over {LIMITS[kind]}: split it")
        elif key in listed and size > listed[key]:
            wrong.append(f"{key}: {size} lines, grown past its listed {listed[key]}: split it, or shrink it back")
        elif key in listed and size <= LIMITS[kind]:
            wrong.append(f"{key}: fits now ({size} <= {LIMITS[kind]}): delete its line from {ALLOWLIST.name}")
    wrong += [f"{key}: listed but gone (renamed or moved?): delete or update its line" for key in sorted(listed)
              if key not in sizes]
    return wrong


def test_sizes_are_counted_as_the_docstring_says(tmp_path):
    """Planted: a function of 3 code lines among a docstring, a comment and blank lines; a class of 7; a module
    of 17 physical lines."""
    path = tmp_path / "m.py"
    path.write_text('"""Doc."""\n\n\nclass C:\n    """Doc\n    on two lines."""\n\n'
                    '    def f(self, a,\n          b):\n        """Doc."""\n        # a comment\n        x = (a +\n'
                    '             b)\n\n        return x\n\n    y = 1\n')
    assert measure(path, "m.py") == {"m.py": ("module", 17), "m.py::C": ("class", 7),
                                     "m.py::C.f": ("function", 3)}


def test_allowlist_only_shrinks():
    """Oracle of the real test: each kind of wrong is reported, and a listed one that shrank but is still over
    is not."""
    sizes = {"a.py": ("module", 420), "a.py::f": ("function", 70), "a.py::g": ("function", 61),
             "a.py::h": ("function", 60), "a.py::K": ("class", 250), "b.py": ("module", 10)}
    listed = {"a.py": 430, "a.py::g": 60, "a.py::h": 65, "a.py::K": 260, "gone.py::x": 80}
    assert judge(sizes, listed) == [
        "a.py::f: function of 70 lines, over 60: split it",
        "a.py::g: 61 lines, grown past its listed 60: split it, or shrink it back",
        "a.py::h: fits now (60 <= 60): delete its line from size_allowlist.txt",
        "gone.py::x: listed but gone (renamed or moved?): delete or update its line",
    ]
    with pytest.raises(ValueError, match="once"):
        read_allowlist("70 a.py::f\n71 a.py::f\n")


def test_functions_classes_and_modules_fit_or_are_listed():
    """Nothing over a limit unless listed, nothing listed grows, nothing listed fits (see the module docstring)."""
    sizes = project_sizes()
    assert len(sizes) > 1000
    wrong = judge(sizes, read_allowlist(ALLOWLIST.read_text(encoding="utf-8")))
    assert wrong == [], "\n".join(wrong)
