"""How much reuse a workload offers: state shares per operand, group and direction.

Two workloads compare at a glance by these numbers: for every operand and
channel group, the share of *partner* values (the ones reuse may replace) that
are full, partial or computed along the group's own direction, and the oracle
reduction of ``Q K^T``.
"""

from __future__ import annotations

import numpy as np

from .config import Config
from .opcount import dense_macs, oracle_macs
from .reuse import FULL, PARTIAL, pair_reuse
from .rope import DIRECTIONS, GROUPS

__all__ = ["AXES", "reuse_stats"]

#: Grid axes by index, as ``DIRECTIONS`` numbers them.
AXES = ("t", "y", "x")


def _partners(cfg: Config, group: str) -> int:
    # Partner values of one group: every second token along its direction, times its channels.
    sl = cfg.group_slices[group]
    axis = DIRECTIONS[group]
    others = cfg.tokens // cfg.grid[axis]
    return (cfg.grid[axis] // 2) * others * (sl.stop - sl.start)


def reuse_stats(operands: dict, cfg: Config) -> dict:
    """Shares of full, partial and compute states among partner values, and the oracle.

    ``operands`` maps names (``q``, ``k``, ``v``, any subset) to int8 ``[N, D]``.
    Returns ``{"operands": {name: {group: {direction, partners, full, partial,
    compute}}}, "oracle_reduction": ...}``; a group with no partners (an empty
    group, or an extent of 1 along its direction) has shares of ``None``. The
    oracle reduction needs ``q`` and ``k``.
    """
    out = {"grid": list(cfg.grid), "partition": list(cfg.partition),
           "full_bits": cfg.full_bits, "partial_bits": cfg.partial_bits, "operands": {}}
    states = {}
    for name, x in operands.items():
        states[name] = st = pair_reuse(x, cfg).states
        groups = {}
        for g in GROUPS:
            sl = cfg.group_slices[g]
            n = _partners(cfg, g)
            full = int(np.count_nonzero(st[:, sl] == FULL))
            partial = int(np.count_nonzero(st[:, sl] == PARTIAL))
            groups[g] = {"direction": AXES[DIRECTIONS[g]], "partners": n,
                         "full": full / n if n else None,
                         "partial": partial / n if n else None,
                         "compute": (n - full - partial) / n if n else None}
        out["operands"][name] = groups
    if "q" in states and "k" in states:
        dense = dense_macs(cfg.tokens, cfg.tokens, cfg.head_dim)
        out["oracle_reduction"] = 1 - oracle_macs(states["q"], states["k"]) / dense
    return out
