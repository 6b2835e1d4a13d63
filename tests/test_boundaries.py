"""explainers/ is pure compute: importing it (and every submodule) loads no dash, flask or plotly."""
import pkgutil
import subprocess
import sys
from pathlib import Path

import explainers

FORBIDDEN = ("dash", "dash_bootstrap_components", "flask", "plotly")


def test_explainers_imports_no_web_stack():
    modules = [m.name for m in pkgutil.walk_packages(explainers.__path__, "explainers.")]
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            f"print(','.join(sorted(k for k in sys.modules if k.split('.')[0] in {FORBIDDEN!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert len(modules) >= 10
    assert out.stdout.strip() == ""


def test_app_pages_do_not_import_explainer_backends():
    """Pages lay out components only; computing goes through app.services."""
    root = Path(__file__).resolve().parent.parent / "app"
    for page in list((root / "pages").glob("*.py")) + list((root / "callbacks").glob("*.py")):
        text = page.read_text()
        for backend in ("import shap", "import lime", "import torch", "import captum", ".fit("):
            assert backend not in text, f"{page.name} uses {backend!r}; call app.services instead"


def _module_imports(path: Path, package: str) -> set[str]:
    """Modules of ``package`` that ``path`` imports, at any depth of the file (lazy imports count): each
    ``import a.b``, and for ``from a import b`` both ``a.b`` and ``a``."""
    from tests.import_graph import imported, module_name

    found = set()
    for base, name in imported(path, module_name(path, ROOT)):
        found.update((f"{base}.{name}", base) if name else (base,))
    return {n for n in found if n.split(".")[0] == package}


ROOT = Path(__file__).resolve().parent.parent


def test_explainers_has_no_import_cycle():
    """No module of explainers/ reaches itself through its imports, lazy ones and a package's ``__init__``
    importing its children included (the review found model_adapter <-> shap_explainer); a cycle is reported
    with its path. The graph is :func:`tests.import_graph.import_graph`'s."""
    from tests.import_graph import cycles, import_graph, shortest_cycle

    graph = import_graph(("explainers",))
    assert len(graph) >= 10
    found = [" -> ".join(shortest_cycle(graph, c)) for c in cycles(graph)]
    assert found == [], "import cycles: " + "; ".join(found)


def test_study_imports_no_web_stack_and_nothing_from_app():
    """study/ is the Dash-free study domain beside app/: importing every module of it loads no dash,
    flask or plotly and no module of app/, and no file of it (migrations included) imports one of
    them, even lazily inside a function."""
    import study

    modules = [m.name for m in pkgutil.walk_packages(study.__path__, "study.")]
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            f"print(','.join(sorted(k for k in sys.modules if k.split('.')[0] in {FORBIDDEN + ('app',)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert {"study.runtime", "study.store", "study.auth", "study.cli"} <= set(modules)
    assert out.stdout.strip() == ""
    files = sorted((ROOT / "study").rglob("*.py"))
    assert ROOT / "study" / "migrations" / "env.py" in files
    for path in files:
        for package in FORBIDDEN + ("app",):
            found = _module_imports(path, package)
            assert not found, f"{path.relative_to(ROOT)} imports {sorted(found)}; study/ stays Dash-free and below app/"


def _environ_uses(root: Path):
    """(path, line, kind) of every ``os.environ``/``os.getenv``/``os.putenv`` use in the project's packages."""
    import ast

    for package in ("app", "explainers", "workspace", "study", "accounts", "store"):
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                        and node.attr in ("environ", "getenv", "putenv", "unsetenv"):
                    yield path.relative_to(root).as_posix(), node.lineno, node.attr


def test_settings_are_read_in_one_place_and_no_module_writes_the_environment():
    """Every variable is read by ``workspace/settings.py`` (and the torch options it calls); nobody writes it.

    Fails on a module that reads ``os.environ`` where it uses the value (a second parser, read at a
    different time than the rest) or writes it to talk to another module (``HF_HUB_OFFLINE`` once was).
    """
    root = Path(__file__).resolve().parent.parent
    allowed = {"workspace/settings.py", "workspace/torch_options.py"}
    outside = [f"{p}:{line} os.{kind}" for p, line, kind in _environ_uses(root) if p not in allowed]
    assert outside == [], "read or written outside workspace/settings.py: " + ", ".join(outside)
