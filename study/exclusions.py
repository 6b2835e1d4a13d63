"""The study's pre-declared exclusion rule: participants with more failed attention checks than allowed.

Applied to the trial log before every analysis (``exclusions.max_failed_attention_checks`` in the
study file; docs/study-mode.md, "Exclusions").
"""

from __future__ import annotations

import pandas as pd

__all__ = ["exclusions", "apply_exclusions"]


def exclusions(trials: pd.DataFrame, max_failed: int | None) -> pd.DataFrame:
    """Participants the pre-declared rule excludes: more than ``max_failed`` failed attention checks.

    Parameters
    ----------
    trials : DataFrame
        Rows of ``trial_log`` (``phase == "attention"`` rows carry ``attention_check_passed``).
    max_failed : int or None
        The study's ``exclusions.max_failed_attention_checks``; None: no rule, nobody is excluded.

    Returns
    -------
    DataFrame
        ``participant_id, condition, failed, checks, reason``, one row per excluded participant.
    """
    cols = ["participant_id", "condition", "failed", "checks", "reason"]
    if max_failed is None or trials.empty or "phase" not in trials:
        return pd.DataFrame(columns=cols)
    att = trials[trials["phase"] == "attention"]
    if att.empty:
        return pd.DataFrame(columns=cols)
    g = att.groupby("participant_id").agg(condition=("condition", "first"), checks=("phase", "size"),
                                          failed=("attention_check_passed", lambda s: int((~s.astype(bool)).sum())))
    out = g[g["failed"] > max_failed].reset_index()
    out["reason"] = [f"failed {f} of {n} attention checks (rule: more than {max_failed})"
                     for f, n in zip(out["failed"], out["checks"])]
    return out[cols]


def apply_exclusions(trials: pd.DataFrame, responses: pd.DataFrame, max_failed: int | None
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Drop the excluded participants' rows; return ``(trials, responses, excluded)`` (see :func:`exclusions`)."""
    ex = exclusions(trials, max_failed)
    if ex.empty:
        return trials, responses, ex
    drop = set(ex["participant_id"])
    keep_t = trials[~trials["participant_id"].isin(drop)]
    keep_r = responses[~responses["participant_id"].isin(drop)] if not responses.empty else responses
    return keep_t, keep_r, ex
