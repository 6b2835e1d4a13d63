"""Oracles T1-T4 and T15(b) of docs/methods.md, "Tests with exact oracles" for the head statistics."""
from collections import Counter

import numpy as np
import pytest

from explainers.attention import RoleAccumulator, head_roles, normalize_per_layer, rarest_position


def _prev_token_head(t: int) -> np.ndarray:
    a = np.zeros((t, t))
    a[0, 0] = 1.0
    a[np.arange(1, t), np.arange(t - 1)] = 1.0
    return a


def _one(*heads) -> np.ndarray:
    return np.stack(heads)[None]  # (1 layer, n heads, T, T)


def test_t1_positional_boundary_inclusive():
    ten = head_roles([_one(_prev_token_head(10), np.eye(10))])
    assert ten.modal_share[0, 0] == pytest.approx(0.9, abs=1e-9)
    assert ten.modal_offset[0, 0] == -1
    assert ten.labels[0][0] == ("positional(-1)",)
    assert ten.labels[0][1] == ("self",)
    assert ten.confidence[0].tolist() == pytest.approx([1.0, 1.0], abs=1e-9)
    assert ten.share_prev[0, 0] == pytest.approx(0.9)
    nine = head_roles([_one(_prev_token_head(9))])
    assert nine.modal_share[0, 0] == pytest.approx(8 / 9, abs=1e-9)
    assert nine.labels[0][0] == ()


def test_t2_confidence():
    assert head_roles([_one(np.full((4, 4), 0.25))]).confidence[0, 0] == pytest.approx(0.25, abs=1e-9)
    acc = RoleAccumulator(1, 1)
    acc.add(np.array([0.2, 0.1, 0.7]).reshape(1, 1, 1, 3), valid_targets=np.array([True, True, False]))
    assert acc.finalize().confidence[0, 0] == pytest.approx(0.2, abs=1e-9)


def test_t3_syntactic_vs_positional_baseline():
    # four nsubj arcs dependent -> head with offsets +1, +1, +2, +3 in one 12-word sentence
    n = 12
    heads = [-1] * n
    deprels = ["dep"] * n
    for dep, off in [(0, 1), (2, 1), (4, 2), (7, 3)]:
        heads[dep], deprels[dep] = dep + off, "nsubj"
    gov = np.zeros((n, n))
    nxt = np.zeros((n, n))
    for q in range(n):
        gov[q, heads[q] if heads[q] >= 0 else q] = 1.0
        nxt[q, min(q + 1, n - 1)] = 1.0
    acc = RoleAccumulator(1, 2, relations=("nsubj",), min_arcs=1)
    acc.add(_one(gov, nxt), heads=heads, deprels=deprels)
    roles = acc.finalize()
    assert roles.syntactic_baseline[0].tolist() == pytest.approx([0.5, 0.5])
    assert roles.syntactic_accuracy[0, 0] == pytest.approx(1.0)
    assert "syntactic(nsubj,d2h)" in roles.labels[0][0]
    assert roles.syntactic_accuracy[0, 1] == pytest.approx(0.5)
    assert not any(r.startswith("syntactic") for r in roles.labels[0][1])


def test_t4_rare_word_head():
    words = "the cat sat on the zygote".split()
    counts = Counter(the=1000, cat=50, sat=40, on=900, zygote=1)
    rare = rarest_position(words, counts, [True] * 6)
    assert rare == 5
    to_rare = np.zeros((6, 6))
    to_rare[:, 5] = 1.0
    to_the = np.zeros((6, 6))
    to_the[:, 0] = 1.0
    acc = RoleAccumulator(1, 2)
    acc.add(_one(to_rare, to_the), rare_index=rare)
    roles = acc.finalize()
    assert roles.rare_share[0].tolist() == pytest.approx([1.0, 0.0])
    assert "rare_word" in roles.labels[0][0]
    assert "rare_word" not in roles.labels[0][1]


def test_rarest_position_ties_leftmost_and_punctuation_excluded():
    counts = Counter(a=3, b=1, c=1)
    assert rarest_position(["a", "b", "c"], counts, [True, True, True]) == 1
    assert rarest_position(["a", ",", "b"], Counter(a=3, b=2), [True, False, True]) == 2


def test_t15b_importance_normalised_per_layer():
    out = normalize_per_layer(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.ravel().tolist() == pytest.approx([0.6, 0.8, 0.0, 0.0])


def test_accumulator_rejects_wrong_shape():
    with pytest.raises(ValueError, match="weights must have shape"):
        RoleAccumulator(2, 2).add(np.ones((1, 2, 3, 3)))
