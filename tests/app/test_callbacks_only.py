"""``app/callbacks/`` holds only callback registrations (issue 24): view builders live in ``app/views/``.

The rule, read from each module's syntax tree (nothing is imported):

* every module of ``app/callbacks/`` registers at least one callback: a top-level function decorated with
  ``callback``/``clientside_callback`` (``dash.callback`` too), a top-level ``clientside_callback(...)`` call, or a
  ``callback(...)(fn)`` call;
* every top-level public function or class (a name without a leading underscore) is a registered callback:
  decorated so, or named among the arguments of a ``callback(...)(...)`` call. Private helpers are allowed;
* no page (``app/pages/``) imports a name from inside a module of ``app/callbacks/`` (``from app.callbacks import
  upload`` registers that module's callbacks and is allowed; ``from app.callbacks.text import list_texts`` is not).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CALLBACKS = ROOT / "app" / "callbacks"
REGISTERS = {"callback", "clientside_callback"}


def _callee(node: ast.AST) -> str | None:
    """The name a call or decorator calls: ``callback``, ``dash.callback`` -> "callback"."""
    node = node.func if isinstance(node, ast.Call) else node
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def registrations(tree: ast.Module) -> tuple[int, set[str]]:
    """(how many callbacks ``tree`` registers at top level, the names of functions registered by a call)."""
    count, by_call = 0, set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            count += any(_callee(d) in REGISTERS for d in node.decorator_list)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            if _callee(call) in REGISTERS:  # clientside_callback(...)
                count += 1
            elif isinstance(call.func, ast.Call) and _callee(call.func) in REGISTERS:  # callback(...)(fn)
                count += 1
                by_call |= {n.id for a in call.args for n in ast.walk(a) if isinstance(n, ast.Name)}
    return count, by_call


def violations(path: Path) -> list[str]:
    """What in the module at ``path`` breaks the rule (empty: it holds only callback registrations)."""
    tree = ast.parse(path.read_text())
    count, by_call = registrations(tree)
    found = [] if count else [f"{path.name}: registers no callback"]
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name.startswith("_"):
            continue
        decorated = any(_callee(d) in REGISTERS for d in node.decorator_list)
        if isinstance(node, ast.ClassDef) or not (decorated or node.name in by_call):
            found.append(f"{path.name}: {node.name} is not a callback (a view builder goes to app/views/)")
    return found


def test_the_rule_sees_a_helper_and_a_module_without_callbacks(tmp_path):
    """The checker itself: a public helper and a module that registers nothing are found; callbacks pass."""
    good = tmp_path / "good.py"
    good.write_text("from dash import callback, clientside_callback\n"
                    "@callback(1)\ndef shown(x):\n    return _helper(x)\n"
                    "def _helper(x):\n    return x\n"
                    "def kept(k):\n    return k\n"
                    "callback(2)(drawn_once()(kept))\n"
                    "clientside_callback('f', 3)\n")
    assert violations(good) == []
    bad = tmp_path / "bad.py"
    bad.write_text("def render(x):\n    return x\n\nclass View:\n    pass\n")
    assert violations(bad) == ["bad.py: registers no callback",
                               "bad.py: render is not a callback (a view builder goes to app/views/)",
                               "bad.py: View is not a callback (a view builder goes to app/views/)"]


def test_callbacks_hold_only_callback_registrations():
    modules = [p for p in sorted(CALLBACKS.glob("*.py")) if p.name != "__init__.py"]
    assert len(modules) >= 15
    assert [v for p in modules for v in violations(p)] == []


def test_pages_import_no_name_from_callbacks():
    """A page lays out components; what it shares with a callback is a view (``app/views/``)."""
    found = []
    for page in sorted((ROOT / "app" / "pages").glob("*.py")):
        for node in ast.walk(ast.parse(page.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [f"{page.name} imports {n}" for n in names if n.startswith("app.callbacks.")]
    assert len(list((ROOT / "app" / "pages").glob("*.py"))) >= 8
    assert found == []
