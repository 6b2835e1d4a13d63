"""A server for a tabular scikit-learn model never imports torch, transformers or captum (issue 14).

They are imported only when a page that needs them is opened (Text, Attention) or the model is a
PyTorch one. Each check runs in a fresh interpreter (``sys.modules`` of the test process is shared
with every other test) that creates the app the way ``python -m app --model --data --target`` does.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "captum")

CREATE_APP = """
import json, sys
from pathlib import Path
from workspace.settings import Settings
from app.server import create_app
from app.services import _core
folder = Path(sys.argv[1])
settings = Settings(model=folder / "model.skops", data=folder / "table.csv", target="target", warm=False,
                    cache_dir=folder / "cache", state_dir=folder / "state", text_dir=folder / "text")
create_app(settings=settings)
print(json.dumps({"heavy": [m for m in %r if m in sys.modules], "warm": list(_core._warm_order)}))
""" % (HEAVY,)

ALLOWED = """
import json, sys
if sys.argv[1] == "torch-first":
    import torch  # noqa: F401  (the shim then imports as scikit-learn intends)
else:
    from app.startup import defer_torch
    defer_torch()
from workspace.model_safety import allowed_types
print(json.dumps(sorted(allowed_types())))
"""


def _run(code: str, *args: str) -> dict | list:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def user_files(tmp_path_factory):
    import skops.io as sio
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    folder = tmp_path_factory.mktemp("lazy-imports")
    frame = load_breast_cancer(as_frame=True).frame
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(frame.drop(columns=["target"]), frame["target"])
    sio.dump(model, folder / "model.skops")
    frame.to_csv(folder / "table.csv", index=False)
    return folder


def test_creating_the_app_for_a_sklearn_model_imports_no_torch(user_files):
    result = _run(CREATE_APP, str(user_files))
    assert result["heavy"] == []


def test_the_warm_up_does_not_load_the_text_model_or_the_tabular_transformer(user_files):
    """The warm-up thread runs after the first request; what it computes must not need torch either:
    the text model and the attention page's transformer load when their page is opened."""
    warm = _run(CREATE_APP, str(user_files))["warm"]
    assert "text_model" not in warm and "torch" not in warm
    assert "shap_all" in warm  # the tabular pages' own work is still warmed


def test_keeping_torch_out_leaves_the_trusted_estimator_list_unchanged():
    """The oracle: the same list computed in an interpreter where torch was imported first, so that
    scikit-learn's package walk imports everything it wants."""
    assert _run(ALLOWED, "deferred") == _run(ALLOWED, "torch-first")
