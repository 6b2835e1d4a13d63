"""Names a package imports on first use (PEP 562), so that importing the package stays cheap: the one home of the
module ``__getattr__`` that :mod:`explainers`, :mod:`explainers.muse` and :mod:`explainers.attention` use (issue 23:
a server answers its first page before scikit-learn, shap, lime or torch have loaded)."""
from __future__ import annotations

import sys
from importlib import import_module
from typing import Callable, Mapping


def lazy_names(package: str, table: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: a name in ``table`` is imported from its module (relative to
    ``package``) when first asked, then kept in the package's namespace.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    table : mapping of str to str
        Each lazy name to the module that defines it (``".cart"``).

    Returns
    -------
    callable
        ``__getattr__(name)``; raises ``AttributeError`` for a name not in ``table``, as a module does.
    """
    def __getattr__(name: str):
        if name in table:
            value = getattr(import_module(table[name], package), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return __getattr__
