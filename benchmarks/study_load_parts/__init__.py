"""Parts of :mod:`benchmarks.study_load`, and the study they put under load.

``server`` starts gunicorn over a throwaway database; ``ledger`` records what the simulated participants
sent and saw; ``participant`` is one simulated browser; ``database_checks`` reads the database back.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STUDY_FILE = ROOT / "tests" / "study" / "data" / "small_study.yaml"
STUDY_ID = "trust-pilot"
