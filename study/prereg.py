"""A preregistration drafted from a study file, in the sections of the OSF Prereg template.

``python -m app study prereg FILE --effect D`` (:mod:`study.cli`) writes it: the study's hypothesis
(over-reliance, second advised arm against the first), its design and conditions, the planned N with
the power figure of the simulation (:mod:`study.power`), the exclusion rule, the measures, and the
analysis the researcher page and the export's ``analysis.py`` run. The file's SHA-256 is named in it;
the server records the same hash when the study goes live (``studies.spec_sha256``) and refuses a
live study whose file changed, so the registered text and the file run stay one.

The headings follow the OSF Preregistration template (Center for Open Science, "OSF Prereg",
sections Study information, Design plan, Sampling plan, Variables, Analysis plan, Other). What a
file cannot say (authors, the existing-data statement, the theory behind the hypothesis) is left
as a bracketed ``[to complete]``: a draft for the researcher, never a finished registration.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schema import Study

__all__ = ["PowerPlan", "SECTIONS", "document"]

#: The OSF Prereg template's top-level sections, in order.
SECTIONS = ("Study information", "Design plan", "Sampling plan", "Variables", "Analysis plan", "Other")
TODO = "[to complete]"


@dataclass(frozen=True)
class PowerPlan:
    """The power simulation behind the planned N.

    ``points`` are :class:`study.power.PowerPoint`; ``arms`` the two advised conditions compared;
    ``baseline`` their expected over-reliance; ``target`` the power the planned N reaches.
    """

    effect: float
    alpha: float
    simulations: int
    seed: int
    arms: tuple[str, str]
    baseline: tuple[float, float]
    points: tuple
    test: str
    target: float = 0.8

    @property
    def planned(self):
        """The smallest simulated size whose power reaches :attr:`target` (None if none does)."""
        return next((p for p in sorted(self.points, key=lambda p: p.n_per_arm) if p.power >= self.target), None)


def _bullets(items) -> list[str]:
    return [f"- {x}" for x in items]


def document(study: Study, sha256: str, model_wrong: int, plan: PowerPlan, source: str) -> str:
    """The preregistration of ``study`` as Markdown.

    Parameters
    ----------
    study : Study
        The validated study.
    sha256 : str
        SHA-256 (hex) of the study file's bytes as the server reads them.
    model_wrong : int
        Stimuli the model gets wrong (from the data).
    plan : PowerPlan
        The power simulation.
    source : str
        The model and data the design was checked against (``breast_cancer_rf``, a file name).

    Returns
    -------
    str
        One ``#`` title, then a ``##`` heading per :data:`SECTIONS` entry, in order.
    """
    return "\n".join([*_information(study, sha256, plan), *_design(study, model_wrong), *_sampling(study, plan),
                      *_variables(study), *_analysis(study, plan), *_other(source)])


def _information(study: Study, sha256: str, plan: PowerPlan) -> list[str]:
    """The title, the note naming the file's SHA-256, and *Study information* (the hypothesis H1)."""
    c0, c1 = plan.arms
    return [
        f"# Preregistration: {study.title}",
        "",
        f"Drafted by `python -m app study prereg` from study file `{study.id}` "
        f"(SHA-256 `{sha256}`); the server records this hash when the study goes live and refuses to run "
        "the study from a changed file.",
        "",
        "## Study information",
        "",
        f"**Title.** {study.title}",
        "",
        f"**Authors.** {TODO}",
        "",
        f"**Description.** {study.instructions}",
        "",
        "**Hypotheses.**",
        f"H1: participants in condition `{c1}` follow the model's advice when it is wrong (over-reliance) more "
        f"often than participants in condition `{c0}`; a difference of {plan.effect:+g} in the proportion of "
        "model-wrong trials on which the final answer equals the advice is the smallest effect of interest. "
        f"Rationale: {TODO}.",
        "",
    ]


def _design(study: Study, model_wrong: int) -> list[str]:
    """*Design plan*: conditions, cases and randomisation."""
    arms = len(study.conditions)
    n_stim = len(study.stimuli)
    conditions = [f"`{c.id}`: " + {"none": "no advice (the participant decides alone)",
                                   "prediction": "the model's prediction only",
                                   "descriptive": "the prediction with the full SHAP explanation of the case",
                                   "persuasive": "the prediction with a simplified (top-k) explanation and its "
                                                 "sentence"}[c.explanation]
                  + (f" (operators: {', '.join(c.operators)})" if c.operators else "")
                  + ("; the features it leaves out are listed" if c.show_dropped else "")
                  for c in study.conditions]
    r = study.randomisation
    strat = (f", stratified by {r.stratify_by} ({', '.join(r.strata)})" if r.stratify_by else "")
    return [
        "## Design plan",
        "",
        "**Study type.** Experiment: participants are randomly assigned to conditions.",
        "",
        "**Blinding.** Participants are not told which condition they are in or that there are others; the "
        "server assigns the condition, so the researcher running a session does not choose it.",
        "",
        f"**Study design.** {'Between' if study.design == 'between' else 'Within'}-subjects, {arms} conditions:",
        *_bullets(conditions),
        "",
        f"Each participant sees {n_stim} cases ({model_wrong} on which the model is wrong, from the data), "
        + ("first answering alone, then seeing the advice and answering again with a confidence rating."
           if "decision_with_advice" in study.tasks else "answering each once."),
        "",
        f"**Randomization.** Permuted blocks of sizes {list(r.block_sizes) or 'k, 2k'} in random order "
        f"(seed {r.seed}){strat}; the case order is seeded per participant with no model-wrong case among the "
        f"first {r.no_wrong_first}"
        + ("; within-subject condition orders follow a Williams design." if study.design == "within" else "."),
        "",
    ]


def _sampling(study: Study, plan: PowerPlan) -> list[str]:
    """*Sampling plan*: the planned N from the power simulation, its table, the stopping rule."""
    c0, c1 = plan.arms
    arms = len(study.conditions)
    planned = plan.planned
    if planned is not None:
        per_arm = planned.n_per_arm
        n_line = (f"{per_arm} participants per condition ({per_arm * arms} in all, {arms} conditions) after "
                  f"exclusions: the smallest simulated size whose power reaches {plan.target:.0%} "
                  f"(power {planned.power:.3f}, 95% Wilson interval [{planned.low:.3f}, {planned.high:.3f}], "
                  f"{plan.simulations} simulated studies, seed {plan.seed}).")
    else:
        best = max(plan.points, key=lambda p: p.n_per_arm)
        n_line = (f"{TODO}: no simulated size reached {plan.target:.0%} power (at {best.n_per_arm} per condition: "
                  f"{best.power:.3f}); simulate larger sizes (--participants) or a larger effect.")
    table = ["| participants per condition | power | 95% Wilson interval |", "| --- | --- | --- |"]
    table += [f"| {p.n_per_arm} | {p.power:.3f} | [{p.low:.3f}, {p.high:.3f}] |" for p in plan.points]
    return [
        "## Sampling plan",
        "",
        f"**Existing data.** {TODO} (registration prior to the creation of data is expected).",
        "",
        "**Data collection procedures.** Participants take the study online at `/study/"
        f"{study.id}`" + (f" and return to the recruitment site at {study.completion_url}" if study.completion_url
                          else "") + f" after giving consent (consent form version {study.consent_version}).",
        "",
        f"**Sample size.** {n_line}",
        "",
        f"**Sample size rationale.** Power by simulation (`python -m app study power`): {plan.test}, alpha "
        f"{plan.alpha:g}, over-reliance {plan.baseline[0]:.3f} in `{c0}` and {plan.baseline[1]:.3f} in `{c1}` "
        "under the simulated decision-maker's assumptions (study/simulate.py):",
        "",
        *table,
        "",
        "**Stopping rule.** Data collection stops when the planned number of participants has completed "
        + (f"(enrolment is closed at {study.max_participants})." if study.max_participants else
           f"the study; {TODO}: set max_participants in the study file to close enrolment."),
        "",
    ]


def _variables(study: Study) -> list[str]:
    """*Variables*: the manipulated one and the measures."""
    measures = ["Agreement with the advice, switch fraction (changed the first answer to the advice), "
                "over-reliance (final answer follows wrong advice), under-reliance (final answer rejects right "
                "advice), appropriate reliance, accuracy before and after advice, per trial"
                if "decision_with_advice" in study.tasks else "Accuracy of the participant's answers per trial",
                "Confidence in the final answer on the scale "
                f"{study.confidence_scale[0]:g}-{study.confidence_scale[1]:g}"]
    if "forward_prediction" in study.tasks:
        measures.append("Forward prediction: whether the participant predicted the model's answer")
    measures += [f"Questionnaire `{q.id}` ({q.instrument}, {len(q.items)} items, {q.scale_points}-point scale, "
                 f"edition {q.instrument_version}): sum and mean per participant" for q in study.questionnaires]
    measures.append("The fidelity of every explanation shown (share of |attribution| kept, and the other fidelity "
                    "measures), logged with each trial")
    return [
        "## Variables",
        "",
        "**Manipulated variables.** The explanation shown with the model's advice: "
        + ", ".join(f"`{c.id}`" for c in study.conditions) + ".",
        "",
        "**Measured variables.**",
        *_bullets(measures),
        "",
        "**Indices.** Questionnaire scores are the sum and mean of their items after reverse-coding "
        "(scale points + 1 - x); for Jian et al. (2000) also the trust (items 6-12) and distrust (items 1-5) means.",
        "",
    ]


def _analysis(study: Study, plan: PowerPlan) -> list[str]:
    """*Analysis plan*: the model of H1, its inference criterion, exclusions."""
    c0, c1 = plan.arms
    checks = study.attention_checks
    exclusion = (f"Participants who fail more than {study.max_failed_attention_checks} of the {len(checks)} "
                 "attention check(s) are excluded from every analysis, before any outcome is looked at."
                 if study.max_failed_attention_checks is not None else
                 f"{TODO}: the study file declares no exclusion rule (exclusions: max_failed_attention_checks).")
    return [
        "## Analysis plan",
        "",
        f"**Statistical models.** H1 is tested on the model-wrong trials with a logistic mixed-effects model, "
        "`followed ~ condition + (1|participant) + (1|item)` (crossed random intercepts, variational Bayes, "
        f"statsmodels' BinomialBayesMixedGLM); the effect is the log-odds ratio of `{c1}` against `{c0}` with its "
        "95% interval (posterior mean ± 1.96 SD). Proportions by condition are reported with 95% Wilson "
        "intervals and questionnaire means with percentile bootstrap intervals over participants (2,000 "
        "resamples, seed 0).",
        "",
        "**Transformations.** Reverse-coded questionnaire items as above; no other transformation.",
        "",
        f"**Inference criteria.** H1 is supported when the 95% interval of the `{c1}` vs `{c0}` log-odds ratio "
        "lies above 0 (one contrast: no correction for multiple comparisons).",
        "",
        f"**Data exclusion.** {exclusion}",
        "",
        "**Missing data.** A participant who does not finish contributes the trials they completed; the "
        "analysis uses every stored trial of every participant not excluded.",
        "",
        "**Exploratory analyses.** Trust scores against the mean fidelity of the explanations a participant "
        "saw (Pearson r with its Fisher-z interval); confidence when the advice was right against wrong.",
        "",
    ]


def _other(source: str) -> list[str]:
    """*Other*: what the design was checked against."""
    return [
        "## Other",
        "",
        f"The design was checked against {source}. The exported data (`analysis.py` in the researcher "
        "page's download) recompute every figure above without Candor.",
        "",
    ]
