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


def test_t1_positional_boundary_inclusive_over_eligible_queries():
    # query 0 has no -1 neighbour: not eligible for -1; the other 9 of 10 queries are (counted by hand)
    ten = head_roles([_one(_prev_token_head(10), np.eye(10))], level="word")
    assert ten.eligible_prev == 9 and ten.eligible_next == 9
    assert ten.share_prev[0, 0] == pytest.approx(1.0) and ten.modal_offset[0, 0] == -1
    assert ten.labels[0][0] == ("positional(-1)",)
    assert ten.labels[0][1] == ("self",) and ten.modal_share[0, 1] == pytest.approx(1.0)
    assert ten.confidence[0].tolist() == pytest.approx([1.0, 1.0], abs=1e-9)
    # boundary: 9 of 10 eligible queries at -1 is positional (inclusive), 8 of 9 is not
    eleven = _prev_token_head(11)
    eleven[5] = 0.0
    eleven[5, 5] = 1.0
    nine_of_ten = head_roles([_one(eleven)])
    assert nine_of_ten.share_prev[0, 0] == pytest.approx(0.9) and nine_of_ten.labels[0][0] == ("positional(-1)",)
    ten_miss = _prev_token_head(10)
    ten_miss[5] = 0.0
    ten_miss[5, 5] = 1.0
    eight_of_nine = head_roles([_one(ten_miss)])
    assert eight_of_nine.share_prev[0, 0] == pytest.approx(8 / 9) and eight_of_nine.labels[0][0] == ()


def _cls_sep_sentence(n_words: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """[CLS] w1..wn [SEP]; every query puts all its weight on the token at ``offset`` (itself if none)."""
    t = n_words + 2
    a = np.zeros((t, t))
    for q in range(t):
        a[q, q + offset if 0 <= q + offset < t else q] = 1.0
    valid = np.ones(t, bool)
    valid[[0, -1]] = False
    return a, valid


def test_planted_neighbour_heads_on_short_sentences_are_100_percent_positional_at_token_level():
    """Sentences of 1-3 words: the old word-level rule (first/last word in the denominator) gave
    (0 + 1 + 2) / (1 + 2 + 3) = 0.5 for a perfect previous-token head; eligible queries give 1."""
    lengths = [1, 2, 3] * 4
    sentences, valid = [], []
    for n in lengths:
        prev, mask = _cls_sep_sentence(n, -1)
        nxt, _ = _cls_sep_sentence(n, +1)
        sentences.append(_one(prev, nxt))
        valid.append(mask)
    roles = head_roles(sentences, valid)
    # by hand: a sentence of n content tokens has n - 1 queries with a content token before it
    assert roles.eligible_prev == roles.eligible_next == 4 * (0 + 1 + 2)
    assert roles.n_queries == 4 * (1 + 2 + 3) and roles.level == "token"
    assert roles.share_prev[0, 0] == 1.0 and roles.share_next[0, 1] == 1.0
    assert roles.labels[0] == (("positional(-1)",), ("positional(+1)",))
    assert roles.heads_with("positional") == ["0.0", "0.1"]
    # [CLS]/[SEP] are not targets: the first word's weight on [CLS] never counts as a -1 hit
    assert roles.share_next[0, 0] == 0.0


def test_share_standard_error_is_clustered_by_sentence():
    # sentence 1: 3 eligible -1 queries, all hit; sentence 2: 1 eligible, missed (points at itself)
    s1 = _prev_token_head(4)
    s2 = np.eye(2)
    roles = head_roles([_one(s1), _one(s2)])
    assert roles.share_prev[0, 0] == pytest.approx(3 / 4)
    # by hand: p = 3/4; residuals 3 - 3p = 0.75 and 0 - p = -0.75; sqrt(2/1 * 1.125) / 4 = 0.375
    assert roles.share_prev_se[0, 0] == pytest.approx(0.375)


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


def test_every_relation_that_clears_the_margin_is_a_label():
    # three sentences, each with one nsubj and one obj arc; the head looks from every word at its governor
    trees = [(6, [(0, 2, "nsubj"), (4, 2, "obj")], 2), (5, [(0, 1, "nsubj"), (3, 1, "obj")], 1),
             (6, [(1, 4, "nsubj"), (5, 4, "obj")], 4)]
    acc = RoleAccumulator(1, 1, relations=("nsubj", "obj"), min_arcs=1)
    for n, arcs, root in trees:
        heads, deprels = [root] * n, ["dep"] * n
        heads[root], deprels[root] = -1, "root"
        for dep, gov, rel in arcs:
            heads[dep], deprels[dep] = gov, rel
        a = np.zeros((n, n))
        for q in range(n):
            a[q, heads[q] if heads[q] >= 0 else q] = 1.0
        acc.add(a[None, None], heads=heads, deprels=deprels)
    roles = acc.finalize()
    # by hand: nsubj d2h offsets +2, +1, +3 -> baseline 1/3; obj d2h offsets -2, -2, -1 -> baseline 2/3
    assert roles.syntactic["nsubj:d2h"]["baseline"] == pytest.approx(1 / 3)
    assert roles.syntactic["obj:d2h"]["baseline"] == pytest.approx(2 / 3)
    assert roles.syntactic["nsubj:d2h"]["n_arcs"] == roles.syntactic["obj:d2h"]["n_arcs"] == 3
    assert roles.syntactic["obj:d2h"]["accuracy"][0, 0] == pytest.approx(1.0)
    # both clear +0.10; ordered by gain (2/3 before 1/3); head -> dependent never hits (accuracy 0)
    syn = [r for r in roles.labels[0][0] if r.startswith("syntactic")]
    assert syn == ["syntactic(nsubj,d2h)", "syntactic(obj,d2h)"]
    assert roles.syntactic["nsubj:h2d"]["accuracy"][0, 0] == 0.0


def test_token_level_arcs_and_rare_word_map_pieces_to_words():
    # [CLS] w0 w1a w1b w2 [SEP]: word 1 has two pieces; word 0 -nsubj-> word 1
    word_index = np.array([-1, 0, 1, 1, 2, -1])
    valid = word_index >= 0
    a = np.zeros((6, 6))
    a[:, 0] = 0.5  # heavy weight on [CLS], which is never a target
    a[1, 3] = 0.4  # the first piece of w0 looks at the second piece of w1: a hit on word 1
    a[2, 3] = a[3, 2] = a[4, 3] = 0.3
    acc = RoleAccumulator(1, 1, relations=("nsubj",), min_arcs=1)
    acc.add(a[None, None], valid, rare_index=1, heads=[1, -1, 1], deprels=["nsubj", "root", "dep"],
            word_index=word_index)
    roles = acc.finalize()
    assert roles.syntactic["nsubj:d2h"]["accuracy"][0, 0] == 1.0
    # baseline by hand: from position 1, offsets +1 and +2 both land on word 1 -> 1 of 1 arcs
    assert roles.syntactic["nsubj:d2h"]["baseline"] == 1.0
    # argmax targets by query: w0 -> pos 3 (word 1), w1a -> 3, w1b -> 2, w2 -> 3: all on word 1
    assert roles.rare_share[0, 0] == 1.0 and roles.n_queries == 4
    assert roles.confidence[0, 0] == pytest.approx((0.4 + 0.3 + 0.3 + 0.3) / 4)


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
