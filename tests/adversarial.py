"""Operands and design points that stress the attention engine: correlated,
nibble-heavy, fully reused, never reused and random operands, on shapes with
empty groups, odd extents, a single PE and exact thresholds. Shared by the
engine's tests in Amaranth's simulator and under cocotb."""

import numpy as np


def operands(kind, cfg, rng):
    N, D = cfg.tokens, cfg.head_dim
    if kind == "correlated":
        base = rng.integers(-128, 128, (1, D))
        make = lambda: np.clip(base + rng.integers(-24, 25, (N, D)), -128, 127).astype(np.int8)
        return make(), make()
    if kind == "partial":                       # neighbours differ below the top 3 bits: nibble work
        base = rng.integers(0, 256, (1, D))
        make = lambda: ((base ^ rng.integers(0, 32, (N, D))) & 0xFF).astype(np.uint8).view(np.int8)
        return make(), make()
    if kind == "equal":                         # everything is reused
        x = np.full((N, D), rng.integers(-128, 128), np.int8)
        return x, x.copy()
    if kind == "alternating":                   # nothing is reused
        sign = np.where(np.arange(N)[:, None] % 2 == 0, 1, -1)
        make = lambda: (sign * rng.integers(1, 128, (N, D))).astype(np.int8)
        return make(), make()
    if kind == "zero-k":                        # valid, and nothing in K ever changes
        return rng.integers(-128, 128, (N, D), dtype=np.int8), np.zeros((N, D), np.int8)
    if kind in ("max", "min"):                  # every operand at one end of int8
        x = np.full((N, D), 127 if kind == "max" else -128, np.int8)
        return x, x.copy()
    return (rng.integers(-128, 128, (N, D), dtype=np.int8),
            rng.integers(-128, 128, (N, D), dtype=np.int8))


CASES = [
    # (partition, grid, rows, cols, F, P, kind)
    ((3, 2, 2), (2, 3, 3), 2, 3, 5, 3, "correlated"),
    ((4, 2, 2), (2, 2, 4), 4, 4, 5, 3, "equal"),
    ((2, 3, 2), (3, 2, 3), 2, 2, 5, 3, "alternating"),
    ((1, 2, 3), (1, 3, 5), 3, 1, 6, 2, "correlated"),       # T = 1, odd extents
    ((0, 3, 2), (2, 3, 2), 1, 2, 4, 4, "correlated"),       # empty t-group, R = 1
    ((5, 0, 0), (1, 1, 5), 2, 2, 3, 1, "random"),           # D not a multiple of anything
    ((2, 2, 3), (3, 3, 1), 3, 3, 8, 8, "correlated"),       # exact
    ((6, 1, 1), (2, 2, 2), 1, 1, 2, 0, "correlated"),       # a single PE
    ((4, 4, 4), (2, 4, 4), 2, 3, 5, 3, "partial"),         # pass B full of nibble pairs
    ((3, 3, 2), (4, 2, 2), 4, 2, 6, 3, "partial"),
]
