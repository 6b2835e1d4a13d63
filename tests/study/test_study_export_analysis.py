"""Issue 16: the researcher export carries ``analysis.py``, which reruns the analysis on the unzipped
CSV or Parquet files without Candor; its figures equal the product's (the script is an independent
implementation: its own CSV reader, Wilson interval and a formula-built mixed model)."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
import zipfile

import pandas as pd
import pytest

from study import analysis, export, mixed, runtime
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import DATA, STUDY, serve_study


@pytest.mark.parametrize("fmt,arm", [("csv", "prediction"), ("parquet", "prediction"), ("csv", "none")])
def test_export_script_reproduces_the_product(db_url, tmp_path, monkeypatch, fmt, arm):  # noqa: F811
    from app.views.study_research import export_zip
    from app.cli.study_simulate import run_one
    from study.simulate import RelianceModel

    text = (DATA / "small_study.yaml").read_text().replace("explanation: prediction}", f"explanation: {arm}}}") \
        + "exclusions:\n  max_failed_attention_checks: 0\n"
    study = serve_study(db_url, tmp_path, monkeypatch, text=text)
    for i, passes in enumerate((1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0)):
        run_one(study, i, 21, RelianceModel(attention_pass=passes))
    payload = export_zip(STUDY, fmt)
    folder = tmp_path / "export"
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(payload["content"]))) as zf:
        assert "analysis.py" in zf.namelist()
        zf.extractall(folder)
    out = subprocess.run([sys.executable, str(folder / "analysis.py"), str(folder)], capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])

    trials = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    kept, _, ex = analysis.apply_exclusions(trials, pd.DataFrame(), 0)
    assert got["excluded"] == sorted(ex["participant_id"]) and len(got["excluded"]) == 1
    product = analysis.reliance_by_condition(kept)
    for row in product.itertuples(index=False):
        if row.measure == "forward_accuracy":
            continue
        est, lo, hi, n = got["reliance"][row.condition][row.measure]
        assert n == row.n
        for a, b in ((est, row.mean), (lo, row.ci_low), (hi, row.ci_high)):
            assert (pd.isna(a) and pd.isna(b)) or a == pytest.approx(b, abs=1e-12), (row.condition, row.measure)
    responses = pd.DataFrame(export.table_rows(runtime.engine(), "questionnaire_responses", STUDY))
    scores = analysis.questionnaire_scores(responses[~responses["participant_id"].isin(got["excluded"])])
    for (cond, qid), g in scores.groupby(["condition", "questionnaire_id"]):
        assert got["questionnaires"][cond][qid] == pytest.approx([g["sum"].mean(), g["total"].mean(), len(g)])
    if arm == "none":  # two advised arms on 7 people separate perfectly; the mixed fit is compared above
        return
    for c in mixed.over_reliance_contrast(kept):
        b, sd = got["mixed"][c.condition]
        assert b == pytest.approx(c.effect, abs=0.05) and sd == pytest.approx(c.sd, rel=0.1)
