"""Where the real public test data lives (``shared/data``: COMPAS, Adult, UCI sentences, UD EWT).

Tests and benchmarks may read it; the app never needs it. Looked up in order:
``CANDOR_SHARED_DATA``, ``../shared/data`` beside the checkout, ``/work/shared/data``.
"""
from __future__ import annotations

import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path | None:
    """The first existing candidate folder, or ``None``."""
    candidates = [os.environ.get("CANDOR_SHARED_DATA"), _ROOT.parent / "shared" / "data", "/work/shared/data"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    return None
