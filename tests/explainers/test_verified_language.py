"""Verified language (O9): every sentence the templater can produce is accepted on the explanation it
describes and rejected when the sign of one attribution it talks about is flipped."""
import dataclasses

import numpy as np
import pytest

import explainers.persuasive as P
from explainers import Explanation

NAMES = ("age", "priors", "income", "juv", "charge", "sex")
PHI = np.array([0.20, -0.12, 0.09, 0.06, -0.05, 0.03])
X = np.array([25.0, 4.0, 1.5, 0.0, 1.0, 1.0])
REF = np.array([31.0, 1.0, 1.5, 0.0, 0.0, 1.0])
CTX = P.Context(lambda a: np.asarray(a, float).sum(axis=1), np.zeros((1, 6)), np.zeros(6), REF, ("no", "yes"))
E = Explanation("shap", NAMES, PHI, 0.40, 0.40 + PHI.sum(), X, "probability", "yes", "test")

# every variant the template has: exact numbers, a rounding step, qualitative strength, direction only,
# a merged group, with and without hidden features
VARIANTS = {
    "exact, all": dict(k=6),
    "exact, top 3": dict(k=3),
    "step 0.05": dict(k=4, rounding=0.05),
    "qualitative": dict(k=3, rounding="qualitative"),
    "direction": dict(k=2, rounding="direction"),
    "group": dict(k=3, groups={"history": ["priors", "juv"]}),
    "group, direction": dict(k=2, rounding="direction", groups={"history": ["priors", "juv"]}),
}


def _sentences():
    for name, kw in VARIANTS.items():
        s = P.simplify(E, CTX, **kw)
        for check in s.sentences:
            yield name, s, check.sentence


def _flip(e, j):
    v = e.values.copy()
    v[j] = -v[j]
    return dataclasses.replace(e, values=v)


def _verify(sentence, e, s):
    return P.verify_sentence(sentence, e, partition=P.partition_of(s), class_names=CTX.class_names)


def _flip_targets(sentence, e):
    slots = dict(sentence.slots)
    members = list(slots.get("members", range(e.values.size)))
    if sentence.kind == "summary":  # items; flip the largest member of each
        return [max(m, key=lambda j: abs(e.values[j])) for m in members]
    if sentence.kind == "item" and len(members) > 1:
        # a group's direction-only claim survives a small member's flip (it is still true): flip its largest
        return [max(members, key=lambda j: abs(e.values[j]))] if "amount" not in slots else members
    return members


def test_every_template_kind_is_exercised():
    kinds = {sent.kind for _, _, sent in _sentences()}
    assert kinds == set(P.KINDS)
    items = [dict(sent.slots) for _, _, sent in _sentences() if sent.kind == "item"]
    assert any("strength" in i for i in items) and any("amount" in i for i in items)
    assert any("n_members" in i for i in items) and any("amount" not in i and "strength" not in i for i in items)


@pytest.mark.parametrize("variant, s, sentence", list(_sentences()), ids=lambda v: v if isinstance(v, str) else "")
def test_sentence_accepted_on_its_explanation_and_rejected_after_a_sign_flip(variant, s, sentence):
    ok = _verify(sentence, E, s)
    assert ok.ok, [c for c in ok.checks if not c.ok]
    for j in _flip_targets(sentence, E):
        bad = _verify(sentence, _flip(E, j), s)
        assert not bad.ok, f"{variant}: flipping {NAMES[j]} not caught in {sentence.text!r}"


def test_statement_shows_only_accepted_sentences_and_reads_well():
    s = P.simplify(E, CTX, k=2, rounding=0.05)
    assert s.statement == (
        "The model predicts yes: its features move the probability of yes from 0.40 on average to 0.61. "
        "Strongest factor: age is low (25 vs median 31), which pushes towards yes by about 0.20. "
        "2nd factor: priors is high (4 vs median 1), which pushes towards no by about 0.10. "
        "The named factors that support yes carry 36% of the total |attribution|, so the prediction rests partly "
        "on them. 4 features not named here carry 42% of the total |attribution| and together push towards yes "
        "by 0.13.")


def test_a_failing_claim_is_withheld_from_the_statement():
    s = P.simplify(E, CTX, k=2)
    again = P.summarize(dataclasses.replace(s.previous, parent=_flip(E, 0)), CTX)
    failed = [c for c in again.sentences if not c.ok]
    assert failed and all(c.sentence.text not in again.statement for c in failed)
    assert any(ch.claim == "direction" and not ch.ok for c in failed for ch in c.checks)


def test_free_text_is_rejected():
    s = P.simplify(E, CTX, k=1)
    item = next(c.sentence for c in s.sentences if c.sentence.kind == "item")
    edited = dataclasses.replace(item, text=item.text.replace("pushes", "strongly pushes"))
    check = _verify(edited, E, s)
    assert not check.ok and [c.claim for c in check.checks if not c.ok] == ["template"]


def test_mainly_needs_half_the_mass():
    s = P.simplify(E, CTX, k=6)
    summary = next(c.sentence for c in s.sentences if c.sentence.kind == "summary")
    assert dict(summary.slots)["word"] == "mainly"
    forged = dataclasses.replace(summary, slots=tuple((k, "partly" if k == "word" else v) for k, v in summary.slots))
    forged = dataclasses.replace(forged, text=forged.text.replace("mainly", "partly"))
    check = _verify(forged, E, s)
    assert [c.claim for c in check.checks if not c.ok] == ["magnitude word"]


def test_categorical_and_missing_values_are_named_and_checked():
    e = dataclasses.replace(E, feature_values=np.array([25.0, 4.0, np.nan, 0.0, 1.0, 1.0]))
    ctx = dataclasses.replace(CTX, categories={4: ("misdemeanour", "felony")})
    s = P.simplify(e, ctx, k=6)
    assert "charge is felony, which pushes towards no" in s.statement
    assert "income is missing, which pushes towards yes" in s.statement
    assert all(c.ok for c in s.sentences)
    charge = next(c.sentence for c in s.sentences if dict(c.sentence.slots).get("name") == "charge")
    other = dataclasses.replace(e, feature_values=np.array([25.0, 4.0, np.nan, 0.0, 0.0, 1.0]))
    bad = P.verify_sentence(charge, other, partition=P.partition_of(s), class_names=CTX.class_names)
    assert [c.claim for c in bad.checks if not c.ok] == ["value"]


def test_a_log_odds_explanation_is_said_in_log_odds_and_its_class_flips_at_zero():
    """A logistic model explained in its margin: a first user read "move the probability of 1 from -0.14 on
    average to -3.26", and a margin of +0.3 (P = 0.57, class "yes") was called "no" (it is below 0.5)."""
    phi = np.array([0.30, 0.10, -0.05, 0.05, -0.04, 0.08])
    e = Explanation("shap", NAMES, phi, -0.14, -0.14 + phi.sum(), X, "log_odds", "yes", "test")
    assert e.prediction == pytest.approx(0.30) and 1 / (1 + np.exp(-e.prediction)) > 0.5
    s = P.simplify(e, CTX, k=3)
    first = s.sentences[0].sentence
    assert first.text == "The model predicts yes: its features move the log-odds of yes from -0.14 on average to 0.30."
    assert all(c.ok for c in s.sentences[0].checks)
    said_no = dataclasses.replace(first, slots=tuple((k, "no" if k == "label" else v) for k, v in first.slots))
    assert not _verify(said_no, e, s).ok
