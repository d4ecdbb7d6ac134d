"""A vDiT block on the array, with reuse in attention only or in every layer:
the analog of the paper's Fig. 20 (§7, "Algorithmic Ablation").

The block, on activations ``X [N, C]`` (``C = heads * D``):

* ``Q K V = X W_qkv``, 3-D RoPE on Q and K per the partition (as the models do);
* per head, attention with a float softmax: ``softmax(S~ sQ sK / sqrt(D)) V~``;
* ``Y1 = X + O W_o``; ``Y = Y1 + gelu(Y1 W_1) W_2`` (an MLP of ``4C``).

There are no normalization layers, and the weights are **seeded random**
(Gaussian, scaled by ``1/sqrt(fan_in)``), not a trained model's: the figure
measures what reuse does to this computation, not to a video model's output.
Every product runs on int8 operands quantized per tensor, like the array's; a
linear layer's activations are quantized before its window reuse.

``scope`` says where reuse applies: ``"none"`` (the reference, every product
exact on the int8 operands), ``"attention"`` (``S~`` and ``V~`` only), ``"all"``
(also ``X~ W`` in the four linear layers). The quality figure is the PSNR of
the block's output against ``"none"``, so quantization is not counted as reuse
error. Cycles come from the cycle models: the heads' three stages
(:mod:`golden.head_cycles`) and the linear layers (:mod:`golden.linear_cycles`),
against the baseline array on the same products.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import attention_output, head_probs, int_gemm, quality
from .config import Config
from .head_cycles import baseline_head_cycles, kaleido_head_cycles
from .linear_cycles import baseline_linear_cycles, kaleido_linear_cycles
from .reuse import pair_reuse, window_reuse
from .workload import quantize, rope

__all__ = ["SCOPES", "LAYERS", "block_weights", "run_block", "block_figures"]

#: Where reuse applies.
SCOPES = ("none", "attention", "all")

#: The block's linear layers, in order.
LAYERS = ("qkv", "proj", "mlp1", "mlp2")


def block_weights(channels: int, seed: int = 0, expand: int = 4) -> dict:
    """Seeded random float weights of the four linear layers."""
    rng = np.random.default_rng(seed)
    shapes = {"qkv": (channels, 3 * channels), "proj": (channels, channels),
              "mlp1": (channels, expand * channels), "mlp2": (expand * channels, channels)}
    return {name: rng.standard_normal(shape) / math.sqrt(shape[0]) for name, shape in shapes.items()}


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def run_block(x: np.ndarray, cfg: Config, weights: dict, scope: str) -> dict:
    """The block on float activations ``x [N, heads*D]``: its output (float
    ``[N, C]``) and, per layer and per head, Kaleido's and the baseline's cycles.
    (With reuse in every layer the heads see other Q, K and V, so their cycles differ.)"""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; choose one of {', '.join(SCOPES)}")
    n, c = x.shape
    D = cfg.head_dim
    heads = c // D
    T, H, W = cfg.grid
    coords = np.stack(np.meshgrid(np.arange(T), np.arange(H), np.arange(W), indexing="ij"),
                      axis=-1).reshape(-1, 3).astype(np.float64)
    cycles = {"kaleido": {}, "baseline": {}}

    def linear(name: str, a: np.ndarray) -> np.ndarray:
        aq, sa = quantize(a)
        wq, sw = quantize(weights[name])
        cycles["baseline"][name] = baseline_linear_cycles(n, wq.shape[1], cfg, aq.shape[1] // D).cycles
        if scope == "all":
            cycles["kaleido"][name] = kaleido_linear_cycles(aq, wq.shape[1], cfg).cycles
            aq = window_reuse(aq, cfg).approx
        else:
            cycles["kaleido"][name] = cycles["baseline"][name]
        return int_gemm(aq, np.ascontiguousarray(wq.T)) * (sa * sw)

    qkv = linear("qkv", x)
    out = np.zeros((n, c))
    for h in range(heads):
        sl = slice(h * D, (h + 1) * D)
        q, sq = quantize(rope(qkv[:, sl], cfg, coords))
        k, sk = quantize(rope(qkv[:, c + h * D:c + (h + 1) * D], cfg, coords))
        v, sv = quantize(qkv[:, 2 * c + h * D:2 * c + (h + 1) * D])
        base = baseline_head_cycles(cfg)
        cycles["baseline"][f"head{h}"] = sum(base.values())
        if scope == "none":
            s, values = int_gemm(q, k), v
            cycles["kaleido"][f"head{h}"] = cycles["baseline"][f"head{h}"]
        else:
            s, values = int_gemm(pair_reuse(q, cfg).approx, pair_reuse(k, cfg).approx), pair_reuse(v, cfg).approx
            # P V~ folds V's full reuse where it pays, on the head's own codes.
            probs = head_probs(s, cfg, sq * sk / math.sqrt(D))
            cycles["kaleido"][f"head{h}"] = sum(kaleido_head_cycles(q, k, cfg, v=v, probs=probs).values())
        out[:, sl] = attention_output(s, values, sq * sk / math.sqrt(D)) * sv
    y1 = x + linear("proj", out)
    y = y1 + linear("mlp2", _gelu(linear("mlp1", y1)))
    return {"output": y, "cycles": cycles,
            "kaleido_cycles": sum(cycles["kaleido"].values()),
            "baseline_cycles": sum(cycles["baseline"].values())}


def block_figures(x: np.ndarray, cfg: Config, seed: int = 0) -> dict:
    """The Fig. 20 analog: per scope (attention only, all layers), the speedup
    over the baseline array and the PSNR of the block output against no reuse."""
    weights = block_weights(x.shape[1], seed)
    ref = run_block(x, cfg, weights, "none")
    rows = {}
    for scope in ("attention", "all"):
        res = run_block(x, cfg, weights, scope)
        rows[scope] = {"speedup": res["baseline_cycles"] / res["kaleido_cycles"],
                       "kaleido_cycles": res["kaleido_cycles"], "baseline_cycles": res["baseline_cycles"],
                       "cycles": res["cycles"]["kaleido"], **quality(ref["output"], res["output"])}
    return rows
