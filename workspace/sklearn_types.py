"""scikit-learn's estimator classes by name, without importing all of scikit-learn (issue 23: start-up).

``sklearn.utils.all_estimators`` imports every scikit-learn module to list the estimator classes: 2.3 s of a
``python -m app`` start on this machine (measured after scikit-learn's ensembles, pandas and SciPy were already
imported) and the memory of every module, for a server that explains one model. Two callers need only the
classes' names: ``import skops.io`` (its default trusted types, ``SKLEARN_ESTIMATOR_TYPE_NAMES``) and
:func:`workspace.model_safety.allowed_types`. :data:`RECORD` holds the names ``all_estimators`` gives for the
pinned scikit-learn (requirements.txt); for that version :func:`estimator_names` reads it and
:func:`import_skops_io` hands skops stand-in classes that carry only those names, so both lists are the same
strings as before. Any other scikit-learn version lists them live. ``tests/workspace/test_sklearn_types.py``
compares the record with ``all_estimators`` and skops's own list with the one skops builds unaided, so a
scikit-learn upgrade that changes the list fails a test (``python -m workspace.sklearn_types`` writes it again).
"""
from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

RECORD = Path(__file__).with_name("sklearn_estimators.json")
"""``{"sklearn": version, "estimators": [[name, module, qualname, is BaseEstimator subclass], ...]}``."""

_LOCK = threading.Lock()


def live_estimator_names() -> list[list]:
    """``[name, module, qualname, is_base_estimator]`` of every class ``sklearn.utils.all_estimators`` lists, in its
    order (imports every scikit-learn module)."""
    from sklearn.base import BaseEstimator
    from sklearn.utils import all_estimators

    return [[name, cls.__module__, cls.__qualname__, isinstance(cls, type) and issubclass(cls, BaseEstimator)]
            for name, cls in all_estimators()]


def estimator_names() -> list[list]:
    """:func:`live_estimator_names` as recorded in :data:`RECORD` for the installed scikit-learn, else live."""
    import sklearn

    try:
        record = json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return live_estimator_names()
    return record["estimators"] if record.get("sklearn") == sklearn.__version__ else live_estimator_names()


def import_skops_io():
    """``import skops.io``, its ``all_estimators`` call answered from :func:`estimator_names`.

    skops keeps only ``module.name`` of each class it is given (``SKLEARN_ESTIMATOR_TYPE_NAMES``, built once as
    it is imported), so stand-in classes with the recorded ``__module__`` and ``__name__`` give it the same list
    without importing the modules. ``sklearn.utils.all_estimators`` is put back before this returns.
    """
    if "skops.io" in sys.modules:
        return sys.modules["skops.io"]
    with _LOCK:
        import sklearn.utils

        names = estimator_names()
        stand_ins = [(name, type(qualname.rpartition(".")[2], (), {"__module__": module, "__qualname__": qualname}))
                     for name, module, qualname, _ in names]
        real = sklearn.utils.all_estimators
        sklearn.utils.all_estimators = lambda *args, **kwargs: list(stand_ins)
        try:
            import skops.io
        finally:
            sklearn.utils.all_estimators = real
    return skops.io


def write_record() -> Path:
    """Write :data:`RECORD` for the installed scikit-learn (after an upgrade of the pin)."""
    import sklearn

    rows = ",\n".join(json.dumps(row) for row in live_estimator_names())
    RECORD.write_text(f'{{"sklearn": {json.dumps(sklearn.__version__)}, "estimators": [\n{rows}\n]}}\n', encoding="utf-8")
    return RECORD


if __name__ == "__main__":
    print(write_record())
