"""A server for a tabular scikit-learn model never imports torch, transformers or captum (issue 14), nor, before
its first request and while answering its landing page, what that page does not need (issue 23): SHAP, LIME,
numba, statsmodels, the study database (SQLAlchemy, Alembic), and what scikit-learn's package walk would drag in
(dask through its array-API shim, pytest through its test helpers, rich through its progress bar), nor
f2py's charset_normalizer (SciPy's wrapper of numpy touches numpy.f2py).

They are imported only when a page that needs them is opened (Text, Attention, a study) or the model is a
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
NOT_BEFORE_FIRST_REQUEST = HEAVY + ("shap", "lime", "numba", "statsmodels", "sqlalchemy", "alembic", "dask", "pytest",
                                   "rich", "charset_normalizer")  # optional imports of scikit-learn and f2py

CREATE_APP = """
import json, sys
from pathlib import Path
from workspace.settings import Settings
from app.serve.server import create_app
from app.services import _core
folder = Path(sys.argv[1])
settings = Settings(model=folder / "model.skops", data=folder / "table.csv", target="target", warm=False,
                    cache_dir=folder / "cache", state_dir=folder / "state", text_dir=folder / "text")
app = create_app(settings=settings)
heavy = {"created": [m for m in %r if m in sys.modules]}
client = app.server.test_client()
for path in ("/", "/_dash-layout", "/_dash-dependencies"):  # the landing page's HTML, layout and callbacks
    assert client.get(path).status_code == 200, path
heavy["first_requests"] = [m for m in %r if m in sys.modules]
print(json.dumps({"heavy": heavy, "warm": list(_core._warm_order)}))
""" % (NOT_BEFORE_FIRST_REQUEST, NOT_BEFORE_FIRST_REQUEST)

ALLOWED = """
import json, sys
if sys.argv[1] == "torch-first":
    import torch, dask, pytest  # noqa: F401  (the shims then import as scikit-learn intends)
else:
    from app.serve.startup import defer_torch
    defer_torch()
from skops.io import _trusted_types
from workspace.model_safety import allowed_types
print(json.dumps({"candor": sorted(allowed_types()), "skops": sorted(_trusted_types.SKLEARN_ESTIMATOR_TYPE_NAMES),
                  "imported": [m for m in ("torch", "dask", "pytest") if m in sys.modules]}))
"""


def _run(code: str, *args: str) -> dict | list:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OMP_NUM_THREADS", None)  # scripts/test sets one thread: the OpenMP test must see the server set it
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
    assert result["heavy"]["created"] == []


def test_the_landing_page_s_first_requests_import_nothing_heavy(user_files):
    """Nothing of :data:`NOT_BEFORE_FIRST_REQUEST` is imported by creating the app nor by the landing page's first
    requests (its HTML, layout and callback list): each would be paid before the first page a user sees."""
    assert _run(CREATE_APP, str(user_files))["heavy"] == {"created": [], "first_requests": []}


def test_the_warm_up_does_not_load_the_text_model_or_the_tabular_transformer(user_files):
    """The warm-up thread runs after the first request; what it computes must not need torch either:
    the text model and the attention page's transformer load when their page is opened."""
    warm = _run(CREATE_APP, str(user_files))["warm"]
    assert "text_model" not in warm and "torch" not in warm
    assert "shap_all" in warm  # the tabular pages' own work is still warmed


def test_keeping_torch_out_leaves_the_trusted_estimator_list_unchanged():
    """The oracle: the same list computed in an interpreter where torch was imported first, so that
    scikit-learn's package walk imports everything it wants (torch, dask and pytest), Candor's list and skops's."""
    deferred, first = _run(ALLOWED, "deferred"), _run(ALLOWED, "torch-first")
    assert deferred["imported"] == [] and first["imported"] == ["torch", "dask", "pytest"]
    assert deferred["candor"] == first["candor"] and deferred["skops"] == first["skops"]
    assert len(deferred["skops"]) > 100


ONE_ROW_THEN_ALL = """
import json, sys
from pathlib import Path
from workspace.settings import Settings
from app.serve.server import create_app
from app import services
folder = Path(sys.argv[1])
settings = Settings(model=folder / "model.skops", data=folder / "table.csv", target="target", warm=False,
                    cache_dir=folder / "cache-one-row", state_dir=folder / "state", text_dir=folder / "text")
create_app(settings=settings)
services.shap_row(0)
one = "numba" in sys.modules
n = len(services.global_importance().values)
print(json.dumps({"one_row": one, "rows": n, "all_rows": "numba" in sys.modules}))
"""


def test_one_row_of_exact_tree_shap_does_not_import_numba_and_the_global_view_does(user_files):
    """Tree SHAP of one row (a click) sums its leaf games in numpy: numba's import (about 50 MB) is not paid for
    it; a batch of at least ``COMPILED_MIN_ROWS`` rows (the global view of the held-out rows) uses the compiled
    sums (:mod:`explainers.tree_shap._compiled`)."""
    from explainers.tree_shap._interventional import COMPILED_MIN_ROWS

    result = _run(ONE_ROW_THEN_ALL, str(user_files))
    assert result["rows"] >= COMPILED_MIN_ROWS
    assert result == {"one_row": False, "rows": result["rows"], "all_rows": True}


BEFORE_LOAD = """
import json, sys, threading
from pathlib import Path
from workspace.settings import Settings
from app.serve import deferred_load
from app.serve.server import create_app
started = []
deferred_load.start = lambda gate, load, on_loaded=None: started.append(load)  # the load is held, not run
folder = Path(sys.argv[1])
settings = Settings(model=folder / "model.skops", data=folder / "table.csv", target="target", warm=False,
                    cache_dir=folder / "cache", state_dir=folder / "state", text_dir=folder / "text")
app = create_app(settings=settings, defer_load=lambda: None)
status = app.server.test_client().get("/").status_code
print(json.dumps({"status": status, "held": len(started),
                  "imported": [m for m in ("sklearn", "scipy", "skops", "shap", "lime") if m in sys.modules]}))
"""


def test_python_m_app_serves_its_first_page_before_importing_scikit_learn_or_scipy(user_files):
    """``python -m app`` answers ``/`` while the model loads on a thread (:mod:`app.serve.deferred_load`); what the
    process imports before that answer is what a user waits for. scikit-learn and the scipy it pulls in were 1.7 s
    of a 2.7 s first HTTP 200 (issue 23): the explainers and services that need them import them at first use. With
    the load held, creating the app and answering ``/`` import none of them."""
    result = _run(BEFORE_LOAD, str(user_files))
    assert result == {"status": 200, "held": 1, "imported": []}


OPENMP = """
import json, sys
from pathlib import Path
from threadpoolctl import threadpool_info
from workspace.settings import Settings
from app.serve.server import create_app
folder = Path(sys.argv[1])
settings = Settings(model=folder / "model.skops", data=folder / "table.csv", target="target", warm=False,
                    cache_dir=folder / "cache", state_dir=folder / "state", text_dir=folder / "text")
create_app(settings=settings)
print(json.dumps([lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "openmp"]))
"""


def test_the_server_s_openmp_runtime_has_one_thread_though_it_loads_with_the_model(user_files):
    """One OpenMP thread a server process (request threads already share the cores; oversubscribed pools stall).
    threadpoolctl limits only the libraries loaded at its call, and scikit-learn's OpenMP runtime now loads with the
    model, not at the server's start: the limit is set after the load (it was set before, and then limited nothing)."""
    threads = _run(OPENMP, str(user_files))
    assert threads and threads == [1] * len(threads)


SCIPY_DOCS = """
import json, sys
if sys.argv[1] == "server":
    from app.serve.startup import defer_torch
    defer_torch()
import scipy.stats
from scipy._lib._array_api import xp_capabilities_table
doc = scipy.stats.ttest_ind.__doc__
print(json.dumps({"note": "Array API Standard Support" in doc, "start": doc[:40],
                  "table": scipy.stats.ttest_ind in xp_capabilities_table and len(xp_capabilities_table)}))
"""


def test_a_server_leaves_scipy_s_docstrings_as_written_and_its_capabilities_table_filled():
    """SciPy's decorator rewrote 474 docstrings with numpydoc as scikit-learn imported scipy.stats: 0.19 s of the
    landing page's path (issue 23). In a server the docstring stays as written; the table SciPy reads is the same."""
    server, plain = _run(SCIPY_DOCS, "server"), _run(SCIPY_DOCS, "plain")
    assert plain["note"] and not server["note"]
    assert server["start"] == plain["start"] and server["start"].startswith("Calculate the T-test")
    assert server["table"] == plain["table"] and server["table"] > 300
