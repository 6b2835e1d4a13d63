"""Permuted blocks are balanced within every block; Williams designs; trial orders."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from study.randomisation import (
    allocate, allocation_sequence, block, derive_seed, item_sets, stimulus_order, williams_design,
)


@pytest.mark.parametrize("arms,sizes", [(["a", "b"], (2, 4)), (["none", "desc", "pers"], (3, 6))])
@pytest.mark.parametrize("stratum", ["", "low", "high"])
def test_blocks_balanced_within_one(arms, sizes, stratum):
    seq = allocation_sequence(arms, sizes, seed=7, stratum=stratum, n=300)
    assert {a.block_size for a in seq} == set(sizes)  # sizes really vary
    k = len(arms)
    by_block: dict[int, list] = {}
    for a in seq:
        by_block.setdefault(a.block_index, []).append(a.arm)
    for b, members in by_block.items():
        complete = len(members) == seq[[x.block_index for x in seq].index(b)].block_size
        counts = Counter(members)
        if complete:
            assert set(counts.values()) == {len(members) // k}, (b, counts)
        # Within a block, counts of any two arms never differ by more than the block's per-arm quota.
        assert max(counts.values()) <= max(sizes) // k
    # At every block boundary the running totals are exactly equal; in between the
    # imbalance is bounded by the largest per-arm quota.
    running = Counter()
    for i, a in enumerate(seq):
        running[a.arm] += 1
        spread = max(running[x] for x in arms) - min(running[x] for x in arms)
        assert spread <= max(sizes) // k
        end_of_block = i + 1 == len(seq) or seq[i + 1].block_index != a.block_index
        if end_of_block and i + 1 < len(seq):  # every complete block
            assert spread == 0


def test_fixed_block_of_k_is_balanced_within_one():
    seq = allocation_sequence(["a", "b", "c"], (3,), seed=1, stratum="", n=99)
    running = Counter()
    for a in seq:
        running[a.arm] += 1
        assert max(running.values()) - min(running[x] for x in "abc") <= 1


def test_allocation_is_seeded_and_position_addressable():
    seq = allocation_sequence(["a", "b"], (2, 4), seed=3, stratum="low", n=40)
    assert [allocate(["a", "b"], (2, 4), 3, "low", i) for i in range(40)] == seq
    assert seq == allocation_sequence(["a", "b"], (2, 4), seed=3, stratum="low", n=40)
    other = allocation_sequence(["a", "b"], (2, 4), seed=4, stratum="low", n=40)
    assert [a.arm for a in other] != [a.arm for a in seq]
    strata = allocation_sequence(["a", "b"], (2, 4), seed=3, stratum="high", n=40)
    assert [a.arm for a in strata] != [a.arm for a in seq]
    assert len({a.seed for a in seq}) == 40


def test_bad_block_sizes_raise():
    with pytest.raises(ValueError, match="multiples of 3 arms"):
        block(["a", "b", "c"], (3, 4), 0, "", 0)


def test_derive_seed_is_stable():
    # A fixed value: changing the derivation would silently change every allocation.
    assert derive_seed(20261130, "low", 0) == 3099171633907972360
    assert derive_seed(20261130, "low", 0) == derive_seed("20261130", "low", "0")
    assert derive_seed(1, "a") != derive_seed(1, "b")
    assert 0 <= derive_seed(1) < 2**63


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_williams_design_balance(n):
    rows = williams_design(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    for row in rows:
        assert sorted(row) == list(range(n))
    for p in range(n):  # each condition equally often in each period
        assert set(Counter(r[p] for r in rows).values()) == {len(rows) // n}
    pairs = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
    assert len(pairs) == n * (n - 1) and len(set(pairs.values())) == 1  # first-order carry-over balanced


def test_williams_two_is_ab_ba():
    assert williams_design(2) == [(0, 1), (1, 0)]
    assert williams_design(4) == [(0, 1, 3, 2), (1, 2, 0, 3), (2, 3, 1, 0), (3, 0, 2, 1)]


def test_item_sets():
    assert item_sets(list("abcdef"), 3) == [("a", "b"), ("c", "d"), ("e", "f")]
    with pytest.raises(ValueError, match="do not split evenly"):
        item_sets(list("abcde"), 2)


def test_stimulus_order_keeps_wrong_items_out_of_first_two():
    items = [f"i{k}" for k in range(8)]
    wrong = {"i0", "i1", "i2"}
    orders = [stimulus_order(items, seed, wrong_ids=wrong, no_wrong_first=2) for seed in range(200)]
    for o in orders:
        assert sorted(o) == sorted(items)
        assert not set(o[:2]) & wrong
    assert len({tuple(o) for o in orders}) > 150  # really random
    firsts = Counter(o[0] for o in orders)
    assert set(firsts) == set(items) - wrong
    assert stimulus_order(items, 5, wrong_ids=wrong) == stimulus_order(items, 5, wrong_ids=wrong)
    with pytest.raises(ValueError, match="model-right"):
        stimulus_order(["a", "b"], 0, wrong_ids={"a"}, no_wrong_first=2)


def test_sequences_are_pairwise_distinct_between_strata():
    seqs = {s: [a.arm for a in allocation_sequence(["x", "y"], (2, 4), 9, s, 24)] for s in ("", "low", "high")}
    assert all(seqs[a] != seqs[b] for a, b in combinations(seqs, 2))
