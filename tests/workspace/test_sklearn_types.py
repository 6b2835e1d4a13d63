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


def test_skops_trusts_the_same_ufunc_names_and_gets_its_own_search_back():
    """skops names each SciPy ufunc by the first loaded module holding it (issue 23: 0.35 s of a server's start);
    :func:`first_holder` answers instead while skops is imported, and skops's own search is the oracle after."""
    names = _skops_names(
        "import json, app.serve.server, sklearn.ensemble, numpy as np, scipy.special\n"  # a server's modules first
        "from workspace.sklearn_types import first_holder, import_skops_io\n"
        "import_skops_io(); import skops.io._trusted_types as t, skops.io._utils as u\n"
        "assert u.whichmodule is not first_holder and u.whichmodule.__module__ == 'skops.io._utils'\n"
        "own = u.get_public_type_names(module=scipy.special, oftype=np.ufunc)\n"
        "assert own == t.SCIPY_UFUNC_TYPE_NAMES, sorted(set(own) ^ set(t.SCIPY_UFUNC_TYPE_NAMES))\n"
        "assert u.get_public_type_names(module=np, oftype=np.ufunc) == t.NUMPY_UFUNC_TYPE_NAMES\n"
        "print(json.dumps(own))")
    assert len(names) > 200 and all(n.startswith("scipy.special.") for n in names)


def test_first_holder_is_skops_search_for_every_object_and_kind_of_module(monkeypatch):
    import types

    import numpy as np
    import scipy.special
    from skops.io._utils import whichmodule  # skops's own (put back after the import)

    from workspace.sklearn_types import first_holder, import_skops_io

    import_skops_io()
    objects = [getattr(scipy.special, n) for n in dir(scipy.special)] + [getattr(np, n) for n in dir(np)
                                                                         if n not in ("f2py", "testing")]
    objects = [o for o in objects if hasattr(o, "__name__")]
    no_module = [o for o in objects if getattr(o, "__module__", None) is None]
    assert len(no_module) > 200  # the ufuncs skops searches for
    assert [first_holder(o, o.__name__) for o in objects] == [whichmodule(o, o.__name__) for o in objects]

    erf = scipy.special.erf
    lazy = types.ModuleType("candor_lazy_holder")  # a module-level __getattr__ (asked, as skops asks it)
    lazy.__getattr__ = lambda name: erf if name == "erf" else (_ for _ in ()).throw(AttributeError(name))
    plain = types.ModuleType("candor_plain_holder")
    plain.erf = erf
    other = types.ModuleType("candor_other_erf")
    other.erf = np.sin  # same name, another object: not a holder
    for mods in ([other, lazy, plain], [other, plain, lazy]):
        for m in mods:
            monkeypatch.delitem(sys.modules, m.__name__, raising=False)
        saved = dict(sys.modules)
        sys.modules.clear()
        sys.modules.update({m.__name__: m for m in mods}, **saved)  # in front of every loaded module
        try:
            assert first_holder(erf, "erf") == whichmodule(erf, "erf") == mods[1].__name__
            assert first_holder(np.cos, "no_such_name") == whichmodule(np.cos, "no_such_name") == "numpy"
            orphan = type("Orphan", (), {"__module__": None})()  # no __module__ and held by no module
            orphan.__name__ = "candor_orphan"
            assert first_holder(orphan, "candor_orphan") == whichmodule(orphan, "candor_orphan") == "__main__"
        finally:
            sys.modules.clear()
            sys.modules.update(saved)
