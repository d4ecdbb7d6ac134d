"""Workloads as the experiments and the commands take them: a name (``proxy``,
a bundled clip, or a video file) made into float Q, K and V."""

from __future__ import annotations

from golden import Config, proxy_workload
from golden.video import video_workload

__all__ = ["DEFAULT_CLIP", "OPERANDS", "operands_of", "make_workload"]

#: What a workload gives the attention (the golden workloads also give the
#: embedding ``x`` that Q, K and V are projected from, which the chip model takes).
OPERANDS = ("q", "k", "v")

#: The clip the demo and the report use unless told otherwise: real camera and
#: subject motion, 250 frames of 640x272, enough for every grid they use (up to
#: 16x16 tokens, 256x256 pixels), which carphone's 176x144 is not.
DEFAULT_CLIP = "bikes"


def operands_of(workload: dict) -> dict:
    """A golden workload's :data:`OPERANDS`."""
    return {name: workload[name] for name in OPERANDS}


def make_workload(cfg: Config, workload: str = DEFAULT_CLIP) -> dict:
    """Float Q, K, V of ``workload``: ``proxy``, a bundled clip's name, or a video file."""
    if workload == "proxy":
        return operands_of(proxy_workload(cfg))
    return operands_of(video_workload(cfg, workload))
