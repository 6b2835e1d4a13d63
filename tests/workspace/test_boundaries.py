"""workspace/ reads files and settings without the web stack or the app: it sits below app/."""
import pkgutil
import subprocess
import sys
from pathlib import Path

import workspace

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("dash", "dash_bootstrap_components", "flask", "plotly", "app")


def test_workspace_imports_no_web_stack_and_no_app():
    """Importing every workspace module loads no dash/flask/plotly and nothing from app/ (imports run one way)."""
    modules = [m.name for m in pkgutil.walk_packages(workspace.__path__, "workspace.")]
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            f"print(','.join(sorted(k for k in sys.modules if k.split('.')[0] in {FORBIDDEN!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert {"workspace.workspace", "workspace.model_files", "workspace.settings"} <= set(modules)
    assert out.stdout.strip() == ""


def test_no_legacy_shims_left_in_app():
    """The moved modules left no re-export stubs behind in app/ (callers import workspace.* directly)."""
    moved = ["errors", "loading", "model_safety", "loading_torch", "tables", "columns", "probe", "uploads", "limits"]
    assert [m for m in moved if (ROOT / "app" / f"{m}.py").exists()] == []
