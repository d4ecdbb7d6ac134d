"""What the matcher's fill slot costs: a head's Q K^T engine cycles with the slot
each paired pass spends loading the matcher's window (``golden.matcher.FILL_SLOTS
= 1``, as built) and with it hidden (0, a what-if: no RTL runs it), against the
dense schedule, and which schedule the head then takes on its own.

``python -m sim.experiments.fill_slot`` measures the bikes head (8x16x16, every
tile group) and two Wan2.1 480p heads of the noised clip at sigma 1 (the
estimate's first step; 20,000 tile groups each), and prints JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

import golden.matcher as matcher
from golden import Config, quantize
from golden.video import video_workload
from sim.chip.chip import CHIPS
from sim.chip.estimate import shard_config, shard_operands
from sim.chip.fast_cycles import estimate_cycles
from sim.chip.vdits import vdit

__all__ = ["fill_slots", "fill_slot_cost", "main"]


@contextlib.contextmanager
def fill_slots(n: int):
    """Every model that counts a paired pass's slots (``paired_pass_slots``) counts
    ``n`` fill slots inside the block."""
    saved = matcher.FILL_SLOTS
    matcher.FILL_SLOTS = n
    try:
        yield
    finally:
        matcher.FILL_SLOTS = saved


def fill_slot_cost(q, k, cfg: Config, samples: int | None = None) -> dict:
    """Per fill (1 as built, 0 hidden): the dense cycles, every paired option's, the
    best paired one and the schedule the head runs on its own."""

    out = {}
    for fill in (1, 0):
        with fill_slots(fill):
            est = estimate_cycles(q, k, cfg, samples=samples, seed=0)
        paired = {n: o["cycles"] for n, o in est.options.items() if n != "dense"}
        best = min(paired, key=paired.get)
        dense = est.options["dense"]["cycles"]
        out[fill] = {"dense": dense, "paired": paired, "best": best, "best_over_dense": paired[best] / dense,
                     "ran_as": est.ran_as, "exact": est.exact}
    return out


def main(argv=None) -> int:

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--samples", type=int, default=20000, help="tile groups a Wan2.1 head (default 20000)")
    args = p.parse_args(argv)
    result = {}
    cfg = Config(grid=(8, 16, 16))
    w = video_workload(cfg, "bikes", seed=1)
    print("fill-slot: bikes ...", file=sys.stderr)
    result["bikes 8x16x16"] = fill_slot_cost(quantize(w["q"])[0], quantize(w["k"])[0], cfg)
    model = vdit("wan2.1")
    cfg = shard_config(model, "480p", CHIPS["paper"])
    for layer, head in ((0, 0), (10, 13)):
        print(f"fill-slot: wan2.1 480p layer {layer} head {head} ...", file=sys.stderr)
        q, k, *_ = shard_operands(model, cfg, "video", 0, layer, head)
        result[f"wan2.1 480p sigma 1 layer {layer} head {head}"] = fill_slot_cost(q, k, cfg, args.samples)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
