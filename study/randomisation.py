"""Seeded permuted-block randomisation, Williams designs and trial orders.

Everything here is a pure function of the study seed, so the allocation list
can be regenerated and audited from the logged ``(seed, stratum, position)``
(docs/methods.md, "Study mode"). Random numbers come from :class:`random.Random` seeded by
:func:`derive_seed` (SHA-256 of the parts), whose ``shuffle``/``choice`` are
stable across CPython 3 versions.

Assignment is concealed: the allocation for position ``n`` of a stratum is only
computed when the ``n``-th participant of that stratum consents.

References
----------
.. [1] Williams, E. J. (1949). Experimental designs balanced for the estimation
   of residual effects of treatments. Australian J. of Scientific Research A 2(2).
.. [2] Schulz, K. F., Grimes, D. A. (2002). Generation of allocation sequences in
   randomised trials: chance, not choice. Lancet 359 (permuted blocks of random size).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Hashable, Sequence

__all__ = [
    "Allocation", "derive_seed", "block", "allocate", "allocation_sequence",
    "williams_design", "stimulus_order", "item_sets",
]


@dataclass(frozen=True)
class Allocation:
    """One slot of a stratum's allocation list.

    Parameters
    ----------
    arm : Hashable
        The assigned arm (a condition id, or a Williams sequence index).
    position : int
        0-based position in the stratum's allocation list.
    block_index : int
        0-based block number within the stratum.
    block_size : int
        Size of that block.
    seed : int
        The participant's assignment seed (for the stimulus order).
    """

    arm: Hashable
    position: int
    block_index: int
    block_size: int
    seed: int


def derive_seed(*parts: object) -> int:
    """Return a 63-bit seed from ``parts`` (stable across processes and platforms).

    Examples
    --------
    >>> derive_seed(1, "low", 0) == derive_seed(1, "low", 0)
    True
    """
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def block(arms: Sequence[Hashable], block_sizes: Sequence[int], seed: int, stratum: str, block_index: int) -> list:
    """Return block ``block_index`` of stratum ``stratum``: a shuffled balanced list.

    Parameters
    ----------
    arms : sequence of hashable
        The arms (``k`` of them).
    block_sizes : sequence of int
        Candidate sizes, each a positive multiple of ``k``; one is drawn at
        random per block (e.g. ``(2, 4)`` for two arms, ``(3, 6)`` for three).
    seed : int
        Study seed.
    stratum : str
        Stratum name (``""`` when unstratified).
    block_index : int
        0-based block number.

    Returns
    -------
    list
        ``size`` arms, each appearing ``size / k`` times, in random order.

    Raises
    ------
    ValueError
        If a block size is not a positive multiple of the number of arms.
    """
    k = len(arms)
    if k == 0 or any(b <= 0 or b % k for b in block_sizes):
        raise ValueError(f"block sizes must be positive multiples of {k} arms, got {list(block_sizes)}")
    rng = random.Random(derive_seed(seed, stratum, block_index))
    size = rng.choice(sorted(block_sizes))
    out = [a for a in arms for _ in range(size // k)]
    rng.shuffle(out)
    return out


def allocate(arms: Sequence[Hashable], block_sizes: Sequence[int], seed: int, stratum: str, position: int) -> Allocation:
    """Return the allocation at ``position`` (0-based) of a stratum's list.

    The ``n``-th participant to consent in a stratum gets position ``n``; the
    database enforces that each position is used once.
    """
    if position < 0:
        raise ValueError(f"position must be >= 0, got {position}")
    start, b = 0, 0
    while True:
        blk = block(arms, block_sizes, seed, stratum, b)
        if position < start + len(blk):
            return Allocation(blk[position - start], position, b, len(blk), derive_seed(seed, stratum, "p", position))
        start += len(blk)
        b += 1


def allocation_sequence(arms: Sequence[Hashable], block_sizes: Sequence[int], seed: int, stratum: str, n: int) -> list[Allocation]:
    """Return the first ``n`` allocations of a stratum (for audit and logging)."""
    out: list[Allocation] = []
    b = 0
    while len(out) < n:
        blk = block(arms, block_sizes, seed, stratum, b)
        for arm in blk:
            pos = len(out)
            out.append(Allocation(arm, pos, b, len(blk), derive_seed(seed, stratum, "p", pos)))
        b += 1
    return out[:n]


def williams_design(n: int) -> list[tuple[int, ...]]:
    """Condition orders balanced for first-order carry-over (Williams 1949).

    Parameters
    ----------
    n : int
        Number of conditions (>= 2).

    Returns
    -------
    list of tuple of int
        ``n`` sequences when ``n`` is even, ``2n`` (the square and its mirror)
        when ``n`` is odd. Each condition appears equally often in every period
        and each ordered pair of distinct conditions appears equally often as
        neighbours. For ``n = 2`` this is AB/BA.

    Examples
    --------
    >>> williams_design(2)
    [(0, 1), (1, 0)]
    >>> williams_design(4)[0]
    (0, 1, 3, 2)
    """
    if n < 2:
        raise ValueError(f"a Williams design needs at least 2 conditions, got {n}")
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [tuple((c + r) % n for c in first) for r in range(n)]
    if n % 2:
        rows += [tuple(reversed(row)) for row in rows]
    return rows


def item_sets(item_ids: Sequence[str], n_sets: int) -> list[tuple[str, ...]]:
    """Split stimuli (in file order) into ``n_sets`` disjoint, equal item sets.

    In a within-subject study period ``p`` always shows item set ``p``; since the
    Williams square puts every condition in every period equally often, each item
    appears equally often in each condition (docs/methods.md, "Study mode").
    """
    if n_sets <= 0 or len(item_ids) % n_sets:
        raise ValueError(f"{len(item_ids)} stimuli do not split evenly into {n_sets} item sets")
    m = len(item_ids) // n_sets
    return [tuple(item_ids[i * m:(i + 1) * m]) for i in range(n_sets)]


def stimulus_order(item_ids: Sequence[str], seed: int, *, wrong_ids: frozenset[str] | set[str] = frozenset(),
                   no_wrong_first: int = 2) -> list[str]:
    """Return a seeded random order with no model-wrong item in the first trials.

    Parameters
    ----------
    item_ids : sequence of str
        Stimulus ids.
    seed : int
        The participant's assignment seed.
    wrong_ids : set of str, default=frozenset()
        Items the model gets wrong.
    no_wrong_first : int, default=2
        No item of ``wrong_ids`` among the first ``no_wrong_first`` positions
        (docs/methods.md, "Study mode": early trust is not set by an error).

    Returns
    -------
    list of str
        A permutation of ``item_ids``.

    Raises
    ------
    ValueError
        If fewer than ``no_wrong_first`` items are model-right.
    """
    order = list(item_ids)
    rng = random.Random(seed)
    rng.shuffle(order)
    right_later = [i for i in range(no_wrong_first, len(order)) if order[i] not in wrong_ids]
    n_right = sum(o not in wrong_ids for o in order)
    if n_right < min(no_wrong_first, len(order)):
        raise ValueError(f"need {no_wrong_first} model-right items first, only {n_right} exist")
    for i in range(min(no_wrong_first, len(order))):
        if order[i] in wrong_ids:
            j = right_later.pop(rng.randrange(len(right_later)))
            order[i], order[j] = order[j], order[i]
    return order
