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

``import skops.io`` also names the module of each SciPy ufunc it trusts by searching every loaded module, in import
order, for the first that holds it (``skops.io._utils.whichmodule``, pickle's rule): 232 ufuncs times the 1,400
modules a server has loaded before ``scipy.special``, a ``getattr`` each, 0.35 s of CPU on the landing page's path
(issue 23). :func:`first_holder` gives the same answer reading the plain modules' dictionaries; skops's own search
is put back once skops is imported.
"""
from __future__ import annotations

import itertools
import json
import sys
import threading
import types
import warnings
from pathlib import Path

from .import_hooks import AfterImport

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
        finder = _FirstHolderWhileImporting()
        sys.meta_path.insert(0, finder)
        try:
            import skops.io
        finally:
            sklearn.utils.all_estimators = real
            finder.close()
    return skops.io


def first_holder(obj, name: str) -> str:
    """The module skops's ``whichmodule(obj, name)`` names: ``obj.__module__``, else the first module in
    ``sys.modules`` (import order) whose attribute ``name`` is ``obj``, else ``"__main__"``.

    A plain module's attribute is read from its dictionary (what ``getattr`` does for a name its type does not
    define), all of them at once; a module with a module-level ``__getattr__`` and any other object in
    ``sys.modules`` are asked with skops's own ``getattr``, in order, before the first plain module that holds
    ``obj``. If asking one imports something, or the name is dotted or one a module's type defines, this is
    skops's own search, module by module; the answer is skops's either way.
    """
    module_name = getattr(obj, "__module__", None)
    if module_name is not None:
        return module_name
    modules = sys.modules.copy()  # as skops: a module imported by a getattr below is not searched
    if "." in name or hasattr(types.ModuleType, name):
        return _search(modules.items(), obj, name)
    entries, (where, dicts), special = _LOADED.split(modules)
    holders = itertools.compress(where, map(dict.__contains__, dicts, itertools.repeat(name)))  # in C, in order
    at = next((i for i in holders if entries[i][1][name] is obj), len(entries))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # as skops: numpy.core's deprecation on getattr
        for i, module in special:
            if i >= at:
                break
            found = _skops_getattr(module, name)
            if len(sys.modules) != len(modules):  # it imported something, which may add names to later modules
                later = [(n, modules[n]) for n, _ in entries[i + 1:]]
                return entries[i][0] if found is obj else _search(later, obj, name)
            if found is obj:
                return entries[i][0]
    return entries[at][0] if at < len(entries) else "__main__"


class _Split:
    """The loaded modules in import order (name, dictionary or None), the positions and dictionaries of the plain
    ones, and the others with their positions; kept while ``sys.modules`` holds the same objects under the same
    names in the same order (compared element by element, by identity first)."""

    def __init__(self):
        self.key, self.parts = None, None

    def split(self, modules: dict):
        key = (tuple(modules), tuple(modules.values()))
        if key != self.key:
            entries, where, dicts, special = [], [], [], []
            for name, module in modules.items():
                if name in ("__main__", "__mp_main__") or module is None:
                    continue
                own = getattr(module, "__dict__", None) if type(module) is types.ModuleType else None
                if isinstance(own, dict) and "__getattr__" not in own:
                    where.append(len(entries))
                    dicts.append(own)
                else:
                    special.append((len(entries), module))
                    own = None
                entries.append((name, own))
            self.key, self.parts = key, (entries, (where, dicts), special)
        return self.parts


_LOADED = _Split()


def _search(items, obj, name: str) -> str:
    """skops's own search: the first of ``items`` (module name, module) whose attribute ``name`` is ``obj``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for module_name, module in items:
            if module_name not in ("__main__", "__mp_main__") and module is not None \
                    and _skops_getattr(module, name) is obj:
                return module_name
    return "__main__"


def _skops_getattr(module, name: str):
    """``getattr(module, name)`` as skops's ``whichmodule`` reads it (None when absent or failing to import)."""
    try:
        if "." in name:
            from skops.io._utils import _getattribute

            return _getattribute(module, name)[0]
        return getattr(module, name, None)
    except (AttributeError, ImportError):
        return None


class _FirstHolderWhileImporting(AfterImport):
    """While ``skops.io`` is imported: ``skops.io._utils.whichmodule`` is :func:`first_holder` (skops's own is put
    back by :meth:`close`)."""

    MODULE = "skops.io._utils"

    def __init__(self):
        self.module = None

    def patch(self, module) -> None:
        self.module, self.real = module, module.whichmodule
        module.whichmodule = first_holder

    def close(self) -> None:
        """Stop watching imports and give skops its own ``whichmodule`` back."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        if self.module is not None:
            self.module.whichmodule = self.real


def write_record() -> Path:
    """Write :data:`RECORD` for the installed scikit-learn (after an upgrade of the pin)."""
    import sklearn

    rows = ",\n".join(json.dumps(row) for row in live_estimator_names())
    RECORD.write_text(f'{{"sklearn": {json.dumps(sklearn.__version__)}, "estimators": [\n{rows}\n]}}\n', encoding="utf-8")
    return RECORD


if __name__ == "__main__":
    print(write_record())
