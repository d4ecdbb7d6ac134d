"""The experiments: the bench (:mod:`sim.experiments.bench`), the packing study
(:mod:`sim.experiments.study`) and the report (:mod:`sim.experiments.report`),
and the constants they share: they sweep the same points,
so each point list is written here once."""

from __future__ import annotations

from golden.presets import FRAGMENTS

__all__ = ["THRESHOLDS", "SPEED_CASES", "SPEED_DISPATCHERS", "FIGURE_DISPATCHERS"]

#: The ``(F, P)`` reuse thresholds swept by the bench and the report (the paper's Fig. 23).
THRESHOLDS = [(3, 1), (4, 2), (5, 3), (6, 4)]

#: The speed cases: the proxy, F=5 P=3, 4x4 PEs, Wan2.1 splits: ``name: (grid, partition)``.
SPEED_CASES = {
    "demo 2x8x8 D=32": ((2, 8, 8), (12, 10, 10)),
    "4x8x8 D=64": ((4, 8, 8), (24, 20, 20)),
    "8x16x16 D=128": ((8, 16, 16), (44, 42, 42)),
    "narrow 2x4x4 4,4,4": ((2, 4, 4), (4, 4, 4)),
}

#: Kaleido's dispatchers the speed bench compares (:data:`golden.presets.FRAGMENTS`,
#: each ``(issue_window, cluster_rule)``): the paper's (the matcher, pivot
#: clustering), a window of 4 with pivots, and the weight rule behind windows of 4 and 8.
SPEED_DISPATCHERS = tuple(FRAGMENTS.values())

#: The ones the report's speed figure draws: the paper's and the weight rule's two
#: windows (the window of 4 with pivots is a step between them, in the bench only).
FIGURE_DISPATCHERS = tuple(d for name, d in FRAGMENTS.items() if name != "window4-pivots")
