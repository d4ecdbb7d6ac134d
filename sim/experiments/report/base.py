"""What every figure of the report shares: its workload, the float attention output,
the parallel sweep, and how a figure is saved."""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from golden import int_gemm, quantize
from golden.attention import attention_output

from ...workload import make_workload

__all__ = ["quantized", "output", "sweep", "pyplot", "save", "legend", "workload_words"]


def quantized(cfg, workload):
    """``{name: (int8 operand, scale)}`` of the workload's q, k and v at ``cfg``."""
    w = make_workload(cfg, workload)
    return {n: quantize(w[n]) for n in "qkv"}


def output(cfg, ops, q, k, v):
    """The float attention output of int8 ``q``, ``k``, ``v`` at the workload's scales."""
    (_, sq), (_, sk), (_, sv) = ops["q"], ops["k"], ops["v"]
    scale = sq * sk / math.sqrt(cfg.head_dim)
    return attention_output(int_gemm(q, k), v, scale) * sv


def sweep(fn, points, label, jobs):
    """``fn`` over ``points`` in ``jobs`` processes, with a progress bar named ``label``."""
    from tqdm import tqdm

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(tqdm(pool.map(fn, points), total=len(points), desc=label, leave=False))


def pyplot():
    """matplotlib's pyplot on the file-only backend: a report draws where no display is."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def legend(ax1, ax2, loc):
    # One legend for both axes of a twin plot, so no line goes unnamed.
    h1, l1 = ax1.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax1.legend(h1 + h2, l1 + l2, loc=loc, fontsize=8)


def workload_words(workload: str) -> str:
    if workload == "proxy":
        return ("the **proxy** workload (a photograph panned and zoomed, patch-embedded, with "
                "3-D RoPE; not a vDiT's activations).")
    return (f"the video **{workload}** through `kaleido workload video` (real motion through a "
            "VAE-like latent and a synthetic, seeded model with 3-D RoPE; not a vDiT's activations).")
