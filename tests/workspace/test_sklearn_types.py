"""scikit-learn's estimator names recorded for the pinned version (workspace.sklearn_types): the record, skops's
trusted list and Candor's allowed types are the very lists ``sklearn.utils.all_estimators`` gives."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import sklearn

from workspace import sklearn_types

ROOT = Path(__file__).resolve().parents[2]


def test_the_record_is_what_all_estimators_lists_for_the_installed_scikit_learn():
    record = json.loads(sklearn_types.RECORD.read_text())
    assert record["sklearn"] == sklearn.__version__, "scikit-learn changed: python -m workspace.sklearn_types"
    assert record["estimators"] == sklearn_types.live_estimator_names()  # the oracle: all_estimators itself
    assert len(record["estimators"]) > 150


def _skops_names(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_skops_trusts_the_same_names_and_all_estimators_is_put_back():
    unaided = _skops_names("import json, skops.io._trusted_types as t; print(json.dumps(t.SKLEARN_ESTIMATOR_TYPE_NAMES))")
    ours = _skops_names(
        "import json, sys, sklearn.utils; real = sklearn.utils.all_estimators\n"
        "from workspace.sklearn_types import import_skops_io\n"
        "import_skops_io(); import skops.io._trusted_types as t\n"
        "assert sklearn.utils.all_estimators is real\n"
        "assert 'sklearn.semi_supervised' not in sys.modules  # the modules were not imported to list them\n"
        "print(json.dumps(t.SKLEARN_ESTIMATOR_TYPE_NAMES))")
    assert ours == unaided and len(ours) > 150


def test_allowed_types_are_the_estimator_classes_all_estimators_gives():
    from sklearn.base import BaseEstimator
    from sklearn.utils import all_estimators

    from workspace.model_safety import REVIEWED_FUNCTIONS, REVIEWED_TYPES, allowed_types

    live = {f"{c.__module__}.{c.__qualname__}" for _, c in all_estimators()
            if isinstance(c, type) and issubclass(c, BaseEstimator) and c.__module__.startswith("sklearn.")}
    assert allowed_types() == frozenset(live) | REVIEWED_TYPES | REVIEWED_FUNCTIONS
