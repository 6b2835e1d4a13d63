"""Parts of :mod:`benchmarks.vs_peer`.

``peer_env`` makes explainerdashboard's own virtual environment; ``datasets`` writes each dataset's table, split
and models; ``cold_start`` starts one tool cold and measures it in Chromium; ``summary`` turns the starts into
medians, percentiles, ratios and the printed table.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
