"""The mechanism, seen: attention maps of the synthetic model as its token-common
part grows, per RoPE band (docs/structure.md).

``python -m sim.experiments.structure_maps --out docs/figures/structure_maps.png``

One head of Wan2.1's split (D = 128) on the bikes clip at an early step's noise
(sigma 0.9, where the content alone carries almost no structure), on a 4x12x12
grid. Each panel is the head's float attention ``softmax(Q K^T / sqrt(D))``,
queries down, keys across, in token order (t, then y, then x): a temporal
diagonal is a stripe every ``H W`` keys, a spatial tile a block along the
diagonal. Under each: the attention on the keys within one step of the query
along every axis, the ``Q K^T`` oracle and the structured reuse.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from golden import Config, quantize
from golden.structure import structure
from golden.video import video_workload
from golden.workload import token_coords

__all__ = ["STRENGTHS", "BANDS_SHOWN", "attention", "local_mass", "maps", "plot"]

STRENGTHS = (0.0, 0.25, 1.0, 4.0)
#: Every band: the default, low, where RoPE hardly turns over a few tokens, to all of them.
BANDS_SHOWN = ("low", "mid", "high", "all")
GRID = (4, 12, 12)
NOISE = 0.9


def attention(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``q k^T / sqrt(D)`` in float64."""
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def local_mass(p: np.ndarray, grid) -> float:
    """Mean attention of a query on the keys within one step of it along every axis."""
    c = token_coords(grid)
    near = np.abs(c[:, None, :] - c[None, :, :]).max(axis=-1) <= 1
    return float((p * near).sum(axis=1).mean())


def maps(strengths=STRENGTHS, bands=BANDS_SHOWN, grid=GRID, noise=NOISE, seed: int = 3) -> list[dict]:
    """Each (band, strength): its attention map and figures."""
    out = []
    for band in bands:
        for s in strengths:
            cfg = Config.for_model("wan2.1", 128, grid=grid, common_strength=s, common_band=band)
            w = video_workload(cfg, "bikes", noise=noise, seed=seed)
            p = attention(w["q"], w["k"])
            found = structure(quantize(w["q"])[0], quantize(w["k"])[0], cfg)["reuse"]
            out.append({"band": band, "strength": s, "map": p, "local": local_mass(p, grid),
                        "oracle": found["oracle"], "structured": found["structured"]})
    return out


def plot(found: list[dict], path: str, grid=GRID) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bands = list(dict.fromkeys(f["band"] for f in found))
    strengths = list(dict.fromkeys(f["strength"] for f in found))
    fig, axes = plt.subplots(len(bands), len(strengths), figsize=(3.1 * len(strengths), 3.5 * len(bands) + 0.6))
    axes = np.atleast_2d(axes)
    for f in found:
        ax = axes[bands.index(f["band"]), strengths.index(f["strength"])]
        # The map's mass spans decades: a power law shows the weak stripes beside the strong diagonal.
        ax.imshow(f["map"] ** 0.35, cmap="magma", interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{f['band']} band, s = {f['strength']:g}\nnear {100 * f['local']:.0f} %, oracle "
                     f"{100 * f['oracle']:.1f} %, structured {100 * f['structured']:+.1f}", fontsize=8)
    T, H, W = grid
    fig.suptitle(f"Attention of one synthetic head (Wan2.1 split, D=128, bikes at sigma {NOISE}, grid {T}x{H}x{W})\n"
                 f"as the token-common part grows: diagonals every {H * W} keys are the temporal diagonal, "
                 "blocks along them the spatial tiles,\ncolumns keys every query attends to (sinks)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    tmp = f"{path}.{os.getpid()}.tmp"
    fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/figures/structure_maps.png", help="the PNG to write")
    args = ap.parse_args(argv)
    found = maps()
    plot(found, args.out)
    for f in found:
        print(f"{f['band']:>4} band, strength {f['strength']:g}: attention near the query {100 * f['local']:.1f} %, "
              f"oracle {100 * f['oracle']:.1f} %, structured reuse {100 * f['structured']:+.1f} points")
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
