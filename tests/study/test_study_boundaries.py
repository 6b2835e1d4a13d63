"""The study package (top-level, beside app/) imports neither dash nor anything from app/."""

from __future__ import annotations

import subprocess
import sys


def test_study_package_is_dash_free():
    code = ("import sys; import study.schema, study.cli, study.store, study.analysis, "
            "study.export, study.simulate, study.flow, study.runtime, study.auth, study.ids; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'dash', 'dash_bootstrap_components', 'flask', 'plotly'} "
            "or m.split('.')[0] == 'app'); print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
