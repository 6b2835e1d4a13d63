"""A library module patched as it is imported: one mechanism for Candor's few such patches (issue 23, start-up).

:class:`AfterImport` is a ``sys.meta_path`` finder that lets the module named :attr:`AfterImport.MODULE` be found
and executed by its own loader, then calls :meth:`AfterImport.patch` on it before anything else can use it. Used
by ``workspace.sklearn_types`` (skops's ``whichmodule`` while ``skops.io`` is imported) and ``app.serve.startup``
(SciPy's docstrings left as written in a server).
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery


class AfterImport(importlib.abc.MetaPathFinder):
    """Find :attr:`MODULE` as Python would, and call :meth:`patch` on it right after its own loader executed it.

    Subclasses set ``MODULE`` (a dotted name) and define ``patch(module)``. Every other name is left to the finders
    after this one (``find_spec`` returns None).
    """

    MODULE = ""

    def find_spec(self, name, path=None, target=None):
        if name != self.MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            self.patch(module)

        spec.loader.exec_module = exec_module
        return spec

    def patch(self, module) -> None:
        """Change ``module`` just after it was executed (subclasses)."""
        raise NotImplementedError
