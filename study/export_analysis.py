"""Rerun a Candor study's reliance analysis on its export, without Candor.

Shipped as ``analysis.py`` in every researcher export zip. Needs Python 3.10+, pandas, numpy,
scipy, PyYAML and statsmodels (pyarrow for a Parquet export). Usage::

    python analysis.py EXPORT_FOLDER [--study ID] [--max-failed K]

It reads ``trial_log`` and ``studies`` (CSV: a text cell that begins with ``'`` had one ``'``
prepended against spreadsheet formula injection, removed here), applies the study file's
pre-declared exclusion rule (``exclusions.max_failed_attention_checks``; ``--max-failed``
overrides it), and prints, per condition, the reliance proportions over two-stage decision trials
with 95% Wilson intervals (Wilson 1927), RAIR and RSR as defined by Schemmer et al. (2023, IUI,
doi 10.1145/3581641.3584066), then the main contrast: a logistic mixed model of
following wrong advice, ``followed ~ condition + (1|participant) + (1|item)``, by statsmodels'
variational Bayes. The last line is one JSON object ``{"reliance": {condition: {measure:
[estimate, low, high, n]}}, "mixed": {condition: [log_odds, sd]}, "questionnaires": {condition:
{questionnaire: [mean sum, mean item mean, n]}}, "excluded": [...]}``; questionnaire scores code
reverse items (the ``reverse`` column) as ``scale_points + 1 - x``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

BOOL = ("model_correct", "correct", "attention_check_passed")


def read_table(folder: Path, name: str) -> pd.DataFrame:
    """``name`` from ``folder`` as written by Candor's export (CSV or Parquet)."""
    pq, csv = folder / f"{name}.parquet", folder / f"{name}.csv"
    if pq.exists():
        return pd.read_parquet(pq)
    if not csv.exists():
        raise SystemExit(f"analysis.py: error: neither {csv} nor {pq} exists")
    raw = pd.read_csv(csv, dtype=str, keep_default_na=False)
    out = {}
    for col in raw.columns:
        cells = raw[col]
        if col in BOOL:
            out[col] = cells.map({"true": True, "false": False, "": None})
        elif col in ("confidence", "rt_ms", "fidelity"):
            out[col] = pd.to_numeric(cells.replace("", np.nan))
        elif col in ("trial_index", "block_index"):
            out[col] = pd.to_numeric(cells)
        else:
            out[col] = cells.map(lambda c: None if c == "" else (c[1:] if c.startswith("'") else c))
    return pd.DataFrame(out)


def wilson(k: int, n: int, z: float = float(stats.norm.ppf(0.975))) -> tuple[float, float, float]:
    """``k/n`` and its Wilson score interval (NaN when n = 0)."""
    if n == 0:
        return (math.nan,) * 3
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def decisions(log: pd.DataFrame) -> pd.DataFrame:
    """One row per trial: initial and final answers beside the advice and the truth."""
    d = log[log["phase"].isin(["initial", "final"])]
    wide = d.pivot_table(index=["participant_id", "trial_index"], columns="phase", values="response",
                         aggfunc="first")
    meta = d[d["phase"] == "final"].set_index(["participant_id", "trial_index"])[
        ["condition", "item_id", "model_prediction", "truth"]]
    out = wide.join(meta, how="inner")
    if "initial" not in out:
        out["initial"] = None
    return out.dropna(subset=["final"]).reset_index()  # a no-advice trial has a final answer only


def reliance(dec: pd.DataFrame) -> dict:
    """Reliance proportions per condition: ``[estimate, low, high, n trials]``."""
    out = {}
    for cond, g in dec.groupby("condition", sort=True):
        advised = g["initial"].notna() & g["model_prediction"].notna()  # no-advice arm: reliance undefined
        follow = g["final"] == g["model_prediction"]
        known = g["truth"].notna()
        wrong = advised & known & (g["model_prediction"] != g["truth"])
        right = advised & known & (g["model_prediction"] == g["truth"])
        moved = advised & (g["initial"] != g["model_prediction"])
        first_right = known & g["initial"].notna() & (g["initial"] == g["truth"])
        first_wrong = known & g["initial"].notna() & (g["initial"] != g["truth"])
        parts = {"agreement": (follow, advised), "switch_fraction": (follow, moved), "over_reliance": (follow, wrong),
                 "under_reliance": (~follow, right),
                 # Schemmer et al. 2023: RAIR, switched to right advice after a wrong first answer;
                 # RSR, kept a right first answer against wrong advice
                 "rair": (follow, right & first_wrong), "rsr": (g["final"] == g["initial"], wrong & first_right),
                 "initial_accuracy": (g["initial"] == g["truth"], known & g["initial"].notna()),
                 "accuracy": (g["final"] == g["truth"], known)}
        out[cond] = {}
        for m, (hit, den) in parts.items():
            sel = hit if den is None else hit[den]
            k, n = int(sel.sum()), int(len(sel))
            out[cond][m] = [*wilson(k, n), n]
    return out


def questionnaires(resp: pd.DataFrame) -> dict:
    """Mean over participants of each questionnaire's ``sum`` and ``mean`` (reverse items coded
    ``scale_points + 1 - x``), per condition: ``{condition: {questionnaire: [mean_sum, mean_mean, n]}}``."""
    if resp.empty:
        return {}
    r = resp.copy()
    x = pd.to_numeric(r["response"]).astype(float)
    rev = r["reverse"].astype(str).str.lower().isin(["true", "1"])
    r["coded"] = np.where(rev, pd.to_numeric(r["scale_points"]) + 1 - x, x)
    per = r.groupby(["condition", "questionnaire_id", "block_index", "participant_id"])["coded"].agg(["sum", "mean"])
    out: dict = {}
    for (cond, qid), g in per.groupby(level=["condition", "questionnaire_id"], sort=True):
        out.setdefault(cond, {})[qid] = [float(g["sum"].mean()), float(g["mean"].mean()), int(len(g))]
    return out


def mixed(dec: pd.DataFrame) -> dict:
    """Log-odds (posterior mean, SD) of following wrong advice, each condition vs the first (sorted)."""
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    d = dec[dec["truth"].notna() & (dec["model_prediction"] != dec["truth"])].copy()
    conds = sorted(d["condition"].unique())
    if len(conds) < 2:
        return {}
    d["followed"] = (d["final"] == d["model_prediction"]).astype(float)
    d["condition"] = pd.Categorical(d["condition"], categories=conds)
    model = BinomialBayesMixedGLM.from_formula(
        "followed ~ C(condition)", {"participant": "0 + C(participant_id)", "item": "0 + C(item_id)"}, d, fe_p=10.0)
    fit = model.fit_vb()
    return {c: [float(fit.fe_mean[i + 1]), float(fit.fe_sd[i + 1])] for i, c in enumerate(conds[1:])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Rerun a Candor study's reliance analysis on its export.")
    ap.add_argument("folder")
    ap.add_argument("--study", help="study id (default: the only one in the export)")
    ap.add_argument("--max-failed", type=int, help="exclude participants with more failed attention checks than this "
                                                   "(default: the study file's exclusions rule)")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    log, studies = read_table(folder, "trial_log"), read_table(folder, "studies")
    sid = args.study or (studies["id"].iloc[0] if len(studies) == 1 else None)
    if sid is None:
        raise SystemExit(f"analysis.py: error: the export holds studies {list(studies['id'])}; pass --study")
    log = log[log["study_id"] == sid]
    rule = args.max_failed
    if rule is None:
        import yaml

        spec = yaml.safe_load(studies.loc[studies["id"] == sid, "spec_yaml"].iloc[0])
        rule = (spec.get("exclusions") or {}).get("max_failed_attention_checks")
    excluded = []
    if rule is not None:
        att = log[log["phase"] == "attention"]
        failed = att.assign(f=~att["attention_check_passed"].astype(bool)).groupby("participant_id")["f"].sum()
        excluded = sorted(failed[failed > rule].index)
        log = log[~log["participant_id"].isin(excluded)]
    dec = decisions(log)
    rel, mix = reliance(dec), mixed(dec)
    try:
        resp = read_table(folder, "questionnaire_responses")
    except SystemExit:
        resp = pd.DataFrame()
    if not resp.empty:
        resp = resp[(resp["study_id"] == sid) & ~resp["participant_id"].isin(excluded)]
    quest = questionnaires(resp)
    print(f"study {sid}: {dec['participant_id'].nunique()} participants analysed, {len(excluded)} excluded "
          f"(rule: more than {rule} failed attention checks)" if rule is not None else f"study {sid}: no exclusion rule")
    for cond, measures in rel.items():
        for m, (est, lo, hi, n) in measures.items():
            print(f"{cond:<14}{m:<22}{est:8.3f}  [{lo:.3f}, {hi:.3f}]  n = {n}")
    for cond, (b, sd) in mix.items():
        print(f"mixed model: {cond} vs reference, log-odds of following wrong advice {b:+.3f} ± {sd:.3f}")
    for cond, qs in quest.items():
        for qid, (total, mean, n) in qs.items():
            print(f"{cond:<14}{qid:<22}sum {total:8.3f}  item mean {mean:.3f}  n = {n} participants")
    print(json.dumps({"reliance": rel, "mixed": mix, "questionnaires": quest, "excluded": excluded}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
