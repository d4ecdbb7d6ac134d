"""The chip model on a real model's activations: what an estimate reads from an
activation archive (:mod:`golden.archive`, written by ``kaleido capture``).

* :func:`archive_model`: the captured model's shape as the chip model takes it
  (its layers, heads and widths, its RoPE split, the token grid, the sampler's
  steps), with the resolution :data:`RESOLUTION`.
* :func:`archive_operands`: one captured head's int8 Q, K and V, its softmax
  scale, and the head's slice of each linear layer's captured input.
* :func:`captured_cells`: which (layer, head) each captured step offers the
  estimate's draw.

Each product whose input was captured reuses at its own level: Q K^T and P V~
on the head's own tensors, each linear layer on the head's slice of its own
input (the MLP's second layer, ``mlp`` channels wide, by the slice the head's
index picks among its ``mlp / D`` slices). The captured steps stand for the
model's other steps and the captured heads for the other heads, as the sampled
heads of a synthetic workload do.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from golden.archive import Archive, open_archive

from .vdits import VDiT

__all__ = ["head_slices", "RESOLUTION", "archive_model", "archive_operands", "captured_cells", "archive"]

#: The resolution an archive's model has: its own token grid.
RESOLUTION = "archive"


@lru_cache(maxsize=4)
def archive(path: str) -> Archive:
    """The archive at ``path``, validated once per process (a Dask worker reads many heads)."""
    return open_archive(path)


def archive_model(a: Archive) -> VDiT:
    """The captured model's shape: its grid is the archive's, its partition the
    model's own RoPE split, one forward pass a step (the capture runs no guidance)."""
    s = a.shape
    t, h, w = a.grid
    # VDiT.grid folds pixels into tokens: the video that makes exactly this grid.
    video = {RESOLUTION: (4 * (t - 1) + 1, 16 * h, 16 * w)}
    return VDiT(a.family, layers=s["layers"], heads=s["heads"], head_dim=s["head_dim"], hidden=s["hidden"],
                mlp=s["mlp"], steps=a.manifest["total_steps"], passes_per_step=1, text_tokens=s["text_tokens"],
                joint_text=s["joint_text"], video=video, flow_shift=float(a.manifest.get("flow_shift", 1.0)),
                partition=a.partition)


def captured_cells(a: Archive) -> dict[int, list[tuple[int, int]]]:
    """Per captured step, the (layer, head) captured."""
    return {step: [(layer, head) for layer in a.layers for head in a.heads] for step in a.steps}


def archive_operands(path: str, step: int, layer: int, head: int, head_dim: int):
    """``q, k, v`` (int8 ``[N, D]``), the softmax scale ``sQ sK / sqrt(D)``, and
    ``{role: int8 [N, D]}``, the head's slice of each captured linear input."""
    a = archive(path)
    q, sq, k, sk, v, _ = a.operands(step, layer, head)
    inputs = {role: a.linear_input(step, layer, role)[0] for role in a.roles(step, layer)}
    return q, k, v, sq * sk / math.sqrt(head_dim), head_slices(inputs, head, head_dim)


def head_slices(inputs: dict, head: int, head_dim: int) -> dict:
    """``{role: int8 [N, D]}``: the slice of each linear layer's input (``{role:
    int8 [N, C]}``) that head ``head`` stands for, a head's width of it."""
    slices = {}
    for role, x in inputs.items():
        pick = head % max(1, x.shape[1] // head_dim)
        slices[role] = np.ascontiguousarray(x[:, pick * head_dim:(pick + 1) * head_dim])
    return slices
