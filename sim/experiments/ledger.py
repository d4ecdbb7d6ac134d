"""The energy ledger of one head's ``Q K^T`` on the chip: each unit's joules with
the head run by each schedule the driver may take, against dense.

A head's own cycles say whether pairing is faster; on the chip, where softmax
sets the pace, energy decides (:mod:`sim.chip.qk_schedule`). This prices a
layer whose every head is the one given, as :func:`sim.chip.layer.layer_cost`
prices the estimate's, per head and unit: the PE arrays, the dispatcher, each
memory (the global buffer's operand reads, the accumulation buffer's scores,
the matchers' feature buffers), the wires, DRAM and leakage. Only ``Q K^T``
changes between the schedules, and the layer's time if it bounds it.

``python -m sim.experiments.ledger`` computes Wan2.1 480p's layer 0 head 0 at
the first and the last denoising step (20,000 tile groups each), on the paper's
chip with NanGate45's blocks, and prints JSON (``--out FILE`` writes it too).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from golden.softmax import row_cycles, softmax_spec
from sim.chip.chip import CHIPS, Chip, baseline_head
from sim.chip.estimate import layer_pricer, run_shard, shard_config, signoffs
from sim.chip.memories import feature_pj_per_byte, sram_pj_per_byte
from sim.chip.qk_schedule import as_option, fastest
from sim.chip.vdits import VDiT, vdit
from synth.kits import at_signoff, liberty_of

__all__ = ["head_ledger", "main"]


def head_ledger(model: VDiT, chip: Chip, cfg, head: dict, signs: dict) -> dict:
    """``{option: {unit: joules, ...}}``: a layer of heads like ``head`` (a
    shard's, with its options) on ``chip``, per head, with the head's ``Q K^T``
    run by each schedule, plus ``vs_dense``: each option's joules less dense's.
    Memories are split by the bytes each moves. A schedule that needs a
    dispatcher runs on the arrays that have one; the others run the fastest
    that needs none (:func:`sim.chip.qk_schedule.alone`), as on the chip."""
    tokens = cfg.tokens
    base = baseline_head(tokens, model.head_dim, chip.rows, chip.cols)
    n_all = tokens + (model.text_tokens if model.joint_text else 0)
    per_row = row_cycles(softmax_spec(n_all, cfg.acc_bits), cfg.vector_lanes)
    cross = 0 if model.joint_text else row_cycles(softmax_spec(model.text_tokens, cfg.acc_bits), cfg.vector_lanes)
    cost = layer_pricer(model, tokens, chip, signs, base, per_row, cross)
    sram, feature = sram_pj_per_byte(chip.node) * 1e-12, feature_pj_per_byte(chip.node) * 1e-12
    out = {}
    # The blocks that fill the pipeline run the head's fastest schedule, as the estimate's do.
    fill = as_option(head, fastest(head))
    for name in head["qk_options"]:
        layer = cost([as_option(head, name)], [fill])
        # The whole layer's joules: what runs for all of it (DRAM's standby, leakage,
        # idle clocks) changes only with its time, not with how it is shared out.
        per = {unit: j / model.heads for unit, j in layer["energy_by_unit_j"].items() if unit != "sram"}
        ops = layer["ops"].values()
        gb, acc = sum(o["global_buffer_bytes"] for o in ops), sum(o["acc_bytes"] for o in ops)
        features = sum(o["sram_bytes"] for o in ops) - gb - acc
        per.update(global_buffer=gb * sram / model.heads, acc_buffer=acc * sram / model.heads,
                   feature_buffer=features * feature / model.heads)
        per["total"] = sum(per.values())
        per["layer_s"] = layer["time_s"]
        out[name] = per
    out["vs_dense"] = {name: {u: j - out["dense"][u] for u, j in out[name].items()}
                       for name in head["qk_options"] if name != "dense"}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="wan2.1", help="model (default wan2.1)")
    p.add_argument("--samples", type=int, default=20000, help="tile groups a head (default 20000)")
    p.add_argument("--liberty", default="nangate45", help="the blocks' cell library (default nangate45)")
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args(argv)
    model, chip = vdit(args.model), CHIPS["paper"]
    cfg = shard_config(model, "480p", chip)
    liberty = liberty_of(args.liberty)
    signs = signoffs(at_signoff(cfg, liberty), liberty)
    result = {"model": model.name, "resolution": "480p", "liberty": args.liberty, "unit": "J a head", "steps": {}}
    for step in (0, model.steps - 1):
        print(f"ledger: step {step}, layer 0, head 0", file=sys.stderr)
        shard = run_shard(model, cfg, "video", (step, 0, 0), args.samples)
        result["steps"][step] = {"ran_as": shard["head"]["qk_ran_as"],
                                 **head_ledger(model, chip, cfg, shard["head"], signs)}
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
