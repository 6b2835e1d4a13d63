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
