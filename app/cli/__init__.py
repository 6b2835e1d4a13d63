"""Command lines other than serving: ``python -m app build``, ``check``, their shared model flags, ``study simulate``.

``python -m app`` itself is :mod:`app.__main__` (issue 24's rooms; ``docs/architecture.md``).
"""
