"""Operation counts of ``Q K^T`` (docs/concepts.md, "Operation counts and the oracle bound").

A byte-by-byte MAC costs 1, a nibble-lane product 0.5, a reused product 0.
The oracle cost of query ``i`` against key ``j`` on channel ``c`` collapses to
``min(cost_q, cost_k)`` where an anchor (reference or unpaired token) costs 1 and
a partner costs ``cost(state)``; since anchors carry state 0 and ``cost(0) = 1``,
the cost of a token on a channel is a function of its state code alone.  The sum
over all ``(i, j)`` then only needs, per channel, how many tokens sit at each
cost level: ``O(D)`` work instead of ``O(N^2 D)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["STATE_COST", "dense_macs", "oracle_macs", "pv_oracle_macs", "linear_oracle_macs"]

#: Cost of one operand's product by its state code: compute 1, partial 0.5, full 0.
STATE_COST = np.array([1.0, 0.5, 0.0])


def dense_macs(n_q: int, n_k: int, d: int) -> int:
    """MACs of the plain product: ``N_q * N_k * D``."""
    return int(n_q) * int(n_k) * int(d)


def oracle_macs(q_states: np.ndarray, k_states: np.ndarray) -> float:
    """Ideal-reuse MAC count of ``Q~ K~^T`` from the two states tensors ``[N, D]``."""
    # counts[c, s]: tokens at state s on channel c.
    nq = np.stack([(q_states == s).sum(axis=0) for s in range(3)], axis=1).astype(np.int64)
    nk = np.stack([(k_states == s).sum(axis=0) for s in range(3)], axis=1).astype(np.int64)
    # Costs in half-MAC units keep the sum an exact integer.
    half = (2 * np.minimum.outer(STATE_COST, STATE_COST)).astype(np.int64)   # [3, 3]
    total_half = int(np.einsum("cs,st,ct->", nq, half, nk))
    return total_half / 2


def pv_oracle_macs(n_q: int, v_states: np.ndarray) -> float:
    """Ideal-reuse MAC count of ``P V~`` (docs/concepts.md, "Operation counts and the
    oracle bound"): per query row and channel,
    a key token costs 1 as an anchor and ``cost(state)`` as a partner, because a
    reused partner shares its reference's multiply."""
    return linear_oracle_macs(n_q, v_states)


def linear_oracle_macs(outputs: int, states: np.ndarray) -> float:
    """Ideal-reuse MAC count of a product whose every output sees each value once
    at ``cost(state)`` (``X~ W``: per output column, a window's reference costs 1
    and each other value ``cost(state)``; ``P V~``: per query row)."""
    half = (2 * STATE_COST).astype(np.int64)[np.asarray(states, dtype=np.int64)]
    return int(outputs) * int(half.sum()) / 2
