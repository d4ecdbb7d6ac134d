"""Hypothesis strategies for design points and int8 operands, adversarial ones included."""

import numpy as np
from hypothesis import strategies as st

from golden import Config


@st.composite
def configs(draw, max_extent=5, max_group=5):
    grid = tuple(draw(st.integers(1, max_extent)) for _ in range(3))
    partition = tuple(draw(st.integers(0, max_group)) for _ in range(3))
    if sum(partition) == 0:
        partition = (0, 1, 0)
    full = draw(st.integers(0, 8))
    partial = draw(st.integers(0, full))
    return Config(partition=partition, grid=grid, full_bits=full, partial_bits=partial)


@st.composite
def operands(draw, cfg, heads=1):
    """int8 [N, D*heads]: random, constant, alternating signs, extremes, or near-copies."""
    shape = (cfg.tokens, cfg.head_dim * heads)
    kind = draw(st.sampled_from(["random", "constant", "alternating", "extreme", "smooth"]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.integers(-128, 128, shape, dtype=np.int8)
    if kind == "constant":
        return np.full(shape, draw(st.integers(-128, 127)), np.int8)
    if kind == "alternating":
        sign = np.where(np.arange(shape[0])[:, None] % 2 == 0, 1, -1)
        return (sign * rng.integers(1, 128, shape)).astype(np.int8)
    if kind == "extreme":
        return rng.choice(np.array([-128, -1, 0, 127], np.int8), shape)
    # smooth: a base row plus small noise, so every state occurs
    base = rng.integers(-128, 128, (1, shape[1]))
    noise = rng.integers(-20, 21, shape)
    return np.clip(base + noise, -128, 127).astype(np.int8)
