"""Finish Dash's set-up before the server takes requests.

Dash 4.4 sets itself up on the first request, in ``before_request`` hooks (``Dash._setup_server``:
the callback map, scripts, cancel callbacks; Dash Pages' router: the page-content callback). Each
hook marks itself done *before* it does the work, so the other first requests that a fresh gunicorn
worker takes at the same moment skip it and are answered 500 (no callback, no layout). Running the
hooks once here, in ``create_app`` (the gunicorn master with ``--preload``), makes them no-ops in
every request of every worker.

:func:`defer_torch` (also called by ``create_app``) keeps torch, dask, pytest, rich and charset_normalizer out of a
server whose model and pages do not need them: loading a scikit-learn model otherwise imports them through
scikit-learn's package walk and imports.
"""
from __future__ import annotations

import importlib.abc
import sys

import dash
from dash import _callback

from workspace.import_hooks import AfterImport

_INLINE_SCRIPTS: list[str] = []
"""Every clientside callback's code registered in this process, given to each app set up."""


def setup_dash_now(app: dash.Dash) -> None:
    """Run Dash's first-request hooks now, in a request context of ``/``.

    Dash moves the module-level ``@callback`` registrations and the clientside callbacks' inline
    scripts into the first app set up; every app created in the same process (tests) gets them too.
    """
    saved_map = {k: ({**v, "background": dict(v["background"])} if v.get("background") else dict(v))
                 for k, v in _callback.GLOBAL_CALLBACK_MAP.items()}
    saved_list = list(_callback.GLOBAL_CALLBACK_LIST)
    _INLINE_SCRIPTS.extend(s for s in _callback.GLOBAL_INLINE_SCRIPTS if s not in _INLINE_SCRIPTS)
    with app.server.test_request_context("/"):
        for hook in list(app.server.before_request_funcs.get(None, ())):
            hook()
    _callback.GLOBAL_CALLBACK_MAP.update(saved_map)
    _callback.GLOBAL_CALLBACK_LIST[:] = saved_list
    # clientside callbacks' code: Dash moves it into the first app that renders a page, so a second app
    # in the process (tests) served none and every clientside callback failed ("reading 'apply'")
    for script in [*app._inline_scripts, *_callback.GLOBAL_INLINE_SCRIPTS]:  # incl. the set-up's own (pages)
        if script not in _INLINE_SCRIPTS:
            _INLINE_SCRIPTS.append(script)
    _callback.GLOBAL_INLINE_SCRIPTS.clear()
    app._inline_scripts[:] = list(_INLINE_SCRIPTS)


class _NoTorchShimWithoutTorch(importlib.abc.MetaPathFinder):
    """Refuse scikit-learn's vendored array-API shims for torch, dask and cupy while that library itself is not
    imported, and pytest inside scikit-learn's test helpers while pytest is not imported.

    ``sklearn.utils.all_estimators`` (called by ``import skops.io`` and by
    :func:`workspace.model_safety.allowed_types`) walks every scikit-learn package with
    ``pkgutil.walk_packages``, which imports each package to find its sub-packages, including
    ``sklearn.externals.array_api_compat.torch`` (that imports torch: about 200 MB and 2-4 s) and
    ``...array_api_compat.dask`` (dask, jinja2, toolz, yaml: 0.13 s of CPU and 10 MB) in a server whose model is
    a plain scikit-learn estimator. ``walk_packages`` skips a package that raises ImportError, and
    ``all_estimators`` ignores ``externals`` anyway, so the list of estimators is unchanged. With no torch (dask)
    imported there is no torch tensor (dask array) for the shim to serve; once it is imported (a PyTorch model,
    the Text or Attention page) the shim imports normally. ``all_estimators`` also imports
    ``sklearn.utils._testing``, which tries ``import pytest`` for its test marks (0.05 s, 6 MB): refused only
    while that module is being imported and pytest is not (a test run has it imported, and gets the marks).
    The same rule (:data:`OPTIONAL`) keeps out two optional imports a server never uses, on the landing page's
    path (issue 23): ``rich``, for scikit-learn's progress-bar callback, imported by every estimator module
    through ``sklearn.callback`` (0.12 s), and ``charset_normalizer``, with which f2py's Fortran reader guesses a
    file's encoding, imported because SciPy's array-API wrapper of numpy touches ``numpy.f2py`` (0.09 s). Each
    importer catches the ImportError and works without it: scikit-learn's progress bar then needs rich imported
    first (``check_rich_support`` says so), f2py reads Fortran files as UTF-8 or ASCII.
    """

    SHIMS = {f"sklearn.externals.array_api_compat.{lib}": lib for lib in ("torch", "dask", "cupy")}
    OPTIONAL = {"pytest": "sklearn.utils._testing", "rich": "sklearn.callback._progressbar",
                "charset_normalizer": "numpy.f2py.crackfortran"}
    """Optional module: the module whose import tries it (in a ``try``/``except ImportError``)."""

    def find_spec(self, name, path=None, target=None):
        for shim, lib in self.SHIMS.items():
            if (name == shim or name.startswith(shim + ".")) and lib not in sys.modules:
                raise ModuleNotFoundError(f"{name} is not imported while {lib} is not (Candor imports it lazily)",
                                          name=name)
        importer = self.OPTIONAL.get(name)
        if importer is not None and name not in sys.modules and _initializing(importer):
            raise ModuleNotFoundError(f"{name} is not imported by {importer} in a server", name=name)
        return None


def _initializing(module: str) -> bool:
    """Whether ``module`` is being imported right now (in ``sys.modules``, its code still running)."""
    spec = getattr(sys.modules.get(module), "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


class _ScipyDocsAsWritten(AfterImport):
    """SciPy's functions keep their docstrings as written in a server: ``scipy._lib._array_api.xp_capabilities``,
    the decorator of 474 functions that scikit-learn's import of ``scipy.stats`` loads, parses each docstring with
    numpydoc to add a table of the array libraries it supports and writes it back (0.19 s of CPU on the path to the
    landing page, issue 23). Once that module is loaded, its ``FunctionDoc`` is :class:`_DocAsWritten`; the
    capabilities table the decorator fills (which SciPy's tests and array-API dispatch read) is unchanged.
    """

    MODULE = "scipy._lib._array_api"

    def patch(self, module) -> None:
        if isinstance(getattr(module, "FunctionDoc", None), type):  # SciPy's own is a class (1.17)
            module.FunctionDoc = _DocAsWritten


class _DocAsWritten:
    """What ``xp_capabilities`` reads of numpydoc's ``FunctionDoc(f)``: sections to append to, and ``str()`` (a first
    line it drops, then the text it writes back, less leading blanks): here the docstring as written, without the
    added note."""

    def __init__(self, f):
        self._doc, self._sections = getattr(f, "__doc__", None) or "", {}

    def __getitem__(self, section: str) -> list:
        return self._sections.setdefault(section, [])

    def __str__(self) -> str:
        return "\n" + self._doc


def defer_torch() -> None:
    """Keep torch (and dask, pytest, rich, charset_normalizer) out of a server that does not need them, and SciPy's
    docstrings as written (idempotent); see :class:`_NoTorchShimWithoutTorch` and :class:`_ScipyDocsAsWritten`."""
    for finder in (_NoTorchShimWithoutTorch, _ScipyDocsAsWritten):
        if not any(isinstance(f, finder) for f in sys.meta_path):
            sys.meta_path.insert(0, finder())
