"""Directed benches of one PE action each, for energy per action.

Each bench repeats one action for a number of cycles in Amaranth's simulator
and records, for every bit of every input port and every flip-flop output
(every register of a PE is one of its output ports), how often it toggles and
how often it is 1. Operands are seeded random bytes where the action moves
data, and held where it does not:

- ``full_mac``: a full 8x8 product into R0 (pass A, nothing reused);
- ``nibble_mac``: one nibble-lane product (pass B, a partially reused key);
- ``paired_nibbles``: two channel steps in one cycle, one nibble lane each;
- ``idle``: a slot with no step, operands held (the clock still runs);
- ``hand_over``: a full product in the cycle a register hands over (R0 takes
  R1 or R2, as at the start of passes B, C and D);
- ``drain_shift``: no product; the drain chain moves a score up one PE.

The baseline PE has ``full_mac``, ``idle``, ``hand_over`` (a clear) and
``drain_shift``.
"""

from __future__ import annotations

import random

from amaranth.lib import data, wiring
from amaranth.sim import Simulator

from golden.config import Config
from golden.pe import NIBBLES, Load, Mode
from hw.pe import PE, BaselinePE

__all__ = ["ACTIONS", "activity"]

ACTIONS = {
    "pe": ("full_mac", "nibble_mac", "paired_nibbles", "idle", "hand_over", "drain_shift"),
    "baseline-pe": ("full_mac", "idle", "hand_over", "drain_shift"),
}


def _augmented(action: str, rnd: random.Random) -> tuple[dict, dict, dict]:
    # (row_in, col_in, drain_in) of one cycle of the action.
    byte = lambda: rnd.randrange(256)
    sbyte = lambda: rnd.randrange(-128, 128)
    held = dict(a0=37, a1=-5, sq0=0, sq1=0, mode=Mode.A, steps=0, load=Load.KEEP, drain=0)
    row, col, drain = dict(held), dict(b=0x5A, sk0=0, sk1=0, byte=NIBBLES), dict(score=0, valid=0)
    if action == "full_mac":
        row.update(a0=sbyte(), steps=1)
        col.update(b=byte())
    elif action == "nibble_mac":
        row.update(a0=sbyte(), mode=Mode.B, steps=1)
        col.update(b=byte(), sk0=1)
    elif action == "paired_nibbles":
        row.update(a0=sbyte(), a1=sbyte(), mode=Mode.B, steps=0b11)
        col.update(b=byte(), sk0=1, sk1=1, byte=NIBBLES)
    elif action == "hand_over":
        # Every register collects (sk = sq = 2 in pass A), and each cycle R0 takes R1 or R2.
        row.update(a0=sbyte(), steps=1, sq0=2, load=rnd.choice([Load.R1, Load.R2]))
        col.update(b=byte(), sk0=2)
    elif action == "drain_shift":
        drain.update(score=rnd.randrange(-(1 << 15), 1 << 15), valid=1)
    elif action != "idle":
        raise ValueError(f"no action {action!r} for the augmented PE")
    return row, col, drain


def _baseline(action: str, rnd: random.Random) -> tuple[dict, int, dict]:
    row, col, drain = dict(a=37, valid=0, clear=0, drain=0), 0x5A - 256 * 0, dict(score=0, valid=0)
    if action in ("full_mac", "hand_over"):
        row.update(a=rnd.randrange(-128, 128), valid=1, clear=int(action == "hand_over"))
        col = rnd.randrange(-128, 128)
    elif action == "drain_shift":
        drain.update(score=rnd.randrange(-(1 << 15), 1 << 15), valid=1)
    elif action != "idle":
        raise ValueError(f"no action {action!r} for the baseline PE")
    return row, col, drain


def _bits(flat, ctx):
    # {netlist bit name: 0/1} of the flattened members, named as Yosys's splitnets names them.
    out = {}
    for path, value in flat:
        name = "__".join(str(p) for p in path)
        value = value.as_value() if isinstance(value, data.View) else value
        width = len(value)
        raw = int(ctx.get(value)) & ((1 << width) - 1)
        if width == 1:
            out[name] = raw
        else:
            for i in range(width):
                out[f"{name}_{i}_"] = (raw >> i) & 1
    return out


def activity(block: str, cfg: Config, action: str, cycles: int = 256, seed: int = 1) -> dict:
    """Toggle rate and duty of every input bit and flip-flop output of ``block`` under ``action``.

    Returns ``{"inputs": {bit: (toggles per cycle, duty)}, "flops": {...}, "cycles": n}``,
    bits named as in the gate netlist (``row_in_3_``, ``drain_in__valid``).
    """
    if block not in ACTIONS:
        raise ValueError(f"energy per action is measured for {', '.join(ACTIONS)}, not {block!r}")
    if action not in ACTIONS[block]:
        raise ValueError(f"{block} has no action {action!r}; it has {', '.join(ACTIONS[block])}")
    dut = PE(cfg) if block == "pe" else BaselinePE(cfg)
    members = list(dut.signature.flatten(dut))
    ins = [(p, v) for p, m, v in members if m.flow == wiring.In]
    outs = [(p, v) for p, m, v in members if m.flow == wiring.Out and p[0] not in ("lanes", "acc_en")]
    rnd = random.Random(seed)
    samples = []

    async def bench(ctx):
        for _ in range(cycles + 1):
            if block == "pe":
                row, col, drain = _augmented(action, rnd)
                for k, v in row.items():
                    ctx.set(getattr(dut.row_in, k), int(v))
                for k, v in col.items():
                    ctx.set(getattr(dut.col_in, k), int(v))
            else:
                row, col, drain = _baseline(action, rnd)
                for k, v in row.items():
                    ctx.set(getattr(dut.row_in, k), int(v))
                ctx.set(dut.col_in, col)
            ctx.set(dut.drain_in.score, drain["score"])
            ctx.set(dut.drain_in.valid, drain["valid"])
            await ctx.tick()
            samples.append((_bits(ins, ctx), _bits(outs, ctx)))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    # The first sample only sets the starting values; count from there.
    def rates(index):
        names = samples[0][index].keys()
        res = {}
        for n in names:
            seq = [s[index][n] for s in samples]
            toggles = sum(a != b for a, b in zip(seq, seq[1:]))
            res[n] = (toggles / cycles, sum(seq[1:]) / cycles)
        return res
    return {"inputs": rates(0), "flops": rates(1), "cycles": cycles, "action": action, "block": block}
