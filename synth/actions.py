"""Directed benches of one action each, the stimulus of energy per action.

Each bench repeats one action for a number of cycles on the RTL in Amaranth's
simulator and records every input bit on every cycle, and every output after
each clock edge, bits named as the gate netlist names them. The same inputs
then drive the mapped netlist (:mod:`synth.power`), whose outputs must match.
Operands are seeded random bytes where the action moves data, and held where
it does not:

- ``full_mac``: a full 8x8 product into R0 (pass A, nothing reused);
- ``nibble_mac``: one nibble-lane product (pass B, a partially reused key);
- ``paired_nibbles``: two channel steps in one cycle, one nibble lane each;
- ``idle``: a slot with no step, operands held (the clock still runs);
- ``hand_over``: a full product in the cycle a register hands over (R0 takes
  R1 or R2, as at the start of passes B, C and D);
- ``drain_shift``: no product; the drain chain moves a score up one PE.

The exact PE (``Config.accumulators = 4``) has two more:

- ``row_nibble``: a ``ROW`` step (pass C, a partially reused query): lane 0
  multiplies the column byte by the row operand's low nibble;
- ``tapped_mac``: a pass-A full product whose high parts also collect in
  R1..R3 (``sq = sk = 1``: every register adds, two of them a tap).

The baseline PE has ``full_mac``, ``idle``, ``hand_over`` (a clear) and
``drain_shift``.

The channel window's PE (``window-pe``) has the augmented PE's actions, on its
wide ports: the step's bytes at positions 0 and 1, selected there, and the
other ``W - 2`` broadcast bytes random wherever the action moves data (other
channels of the window pass by).

The dispatcher's blocks and the softmax unit have two: ``busy`` and ``idle``
(inputs held, the clock running). Busy stimulus is seeded random data, which toggles more than a real head's
correlated strings, needs and scores: an upper bound. The matcher and the
scheduler have a third, ``run``, given a trace of a run's own data
(:data:`TRACED`): the same protocol as ``busy``, on what that run gives them.

- ``scheduler``: a string stream that offers a new random string whenever
  the queue takes one, ending a batch at random about once per queue depth;
  the unit fills, draws pivots and assigns as it would on a head;
- ``matcher``: the passes of a tile group as the engine runs them (``busy``):
  pass A writes every channel's table entry (random row and column states),
  one a slot, with its need bits for passes B, C and D, which then each open
  on their random half of the channels and issue slot by slot, each slot given what the last one left
  (``rest``), until the matcher says the pass is over. The protocol is the
  engine's, the states are random: an upper bound on a real head's data;
- ``matcher``, ``run``: the same passes, on whole tile groups of a run
  (:func:`golden.cycle_model.matcher_trace`): pass A writes each channel's real
  row and column states, and B, C and D open on the channels they really
  stream;
- ``scheduler``, ``run``: the run's own string stream (work weights, batches
  ending where its groups do), from its start;
- ``channel-window``: the same writes and passes, and a random set of
  remaining steps for every group;
- ``softmax``: a score beat offered every cycle (random scores whose exponents
  span the unit's table), codes taken every cycle; the unit runs its four
  phases, the divider included, as on a head's rows.
"""

from __future__ import annotations

import random

from amaranth.hdl import Value
from amaranth.lib import wiring
from amaranth.sim import Simulator

from golden.config import Config
from golden.dispatchers import DISPATCHERS
from golden.matcher import PAIRED_MODES
from golden.pe_encoding import Load, Mode, Need
from golden.pe_kinds import ExactPE
from golden.softmax import softmax_cycles, softmax_scale, softmax_spec
from hw import blocks
from hw.core.baseline_pe import BaselinePE
from hw.core.pe import PE

__all__ = ["ACTIONS", "EXACT_ACTIONS", "NIBBLE_ACTIONS", "TRACED", "actions", "stimulus"]

ACTIONS = {
    "pe": ("full_mac", "nibble_mac", "paired_nibbles", "idle", "hand_over", "drain_shift"),
    "baseline-pe": ("full_mac", "idle", "hand_over", "drain_shift"),
    "scheduler": ("busy", "idle"),
    "matcher": ("busy", "idle"),
    "channel-window": ("busy", "idle"),
    "softmax": ("busy", "idle"),
}
ACTIONS["window-pe"] = ACTIONS["pe"]

#: The softmax bench's scores: uniform in +-SOFTMAX_SPAN, at a scale that takes
#: the largest difference to about 2**-24, past the end of any exponent table.
SOFTMAX_SPAN = 1 << 10

#: Blocks with a ``run`` action: one measured on a trace of a run's own data.
TRACED = ("matcher", "scheduler")

#: What only the exact PE does (its kind's own actions).
EXACT_ACTIONS = ExactPE.actions


def actions(block: str, cfg: Config) -> tuple[str, ...]:
    """The actions ``block`` has at ``cfg``: an augmented PE's block has its
    kind's own too (the exact PE's :data:`EXACT_ACTIONS`)."""
    if block not in ACTIONS:
        raise ValueError(f"energy per action is measured for {', '.join(ACTIONS)}, not {block!r}")
    pe_blocks = {unit.pe_block for unit in DISPATCHERS.values()}
    if block not in pe_blocks:
        return ACTIONS[block]
    # A kind whose table never runs a step on one lane has no nibble products to price.
    taken = ACTIONS[block]
    if not _has_nibbles(cfg.pe.kind):
        taken = tuple(a for a in taken if a not in NIBBLE_ACTIONS)
    return taken + cfg.pe.kind.actions


#: The actions that run a step on one lane (the stimulus's pass B, key in state 1).
NIBBLE_ACTIONS = ("nibble_mac", "paired_nibbles")


def _has_nibbles(kind) -> bool:
    """Whether ``kind``'s table runs the nibble stimulus's step (pass B, sq 0, sk 1) on one lane."""
    return kind.step_need(Mode.B, 0, 1)[0] in (Need.LO, Need.HI)


def _augmented(action: str, rnd: random.Random) -> tuple[dict, dict, dict]:
    # (row_in, col_in, drain_in) of one cycle of the action.
    byte = lambda: rnd.randrange(256)
    sbyte = lambda: rnd.randrange(-128, 128)
    held = dict(a0=37, a1=-5, sq0=0, sq1=0, mode=Mode.A, steps=0, load=Load.KEEP, drain=0)
    row, col, drain = dict(held), dict(b0=0x5A, b1=0xA5, sk0=0, sk1=0), dict(score=0, valid=0)
    if action == "full_mac":
        row.update(a0=sbyte(), steps=1)
        col.update(b0=byte())
    elif action == "nibble_mac":
        row.update(a0=sbyte(), mode=Mode.B, steps=1)
        col.update(b0=byte(), sk0=1)
    elif action == "paired_nibbles":
        row.update(a0=sbyte(), a1=sbyte(), mode=Mode.B, steps=0b11)
        col.update(b0=byte(), b1=byte(), sk0=1, sk1=1)
    elif action == "hand_over":
        # Every register collects (sk = sq = 2 in pass A), and each cycle R0 takes R1 or R2.
        row.update(a0=sbyte(), steps=1, sq0=2, load=rnd.choice([Load.R1, Load.R2]))
        col.update(b0=byte(), sk0=2)
    elif action == "drain_shift":
        drain.update(score=rnd.randrange(-(1 << 15), 1 << 15), valid=1)
    elif action == "row_nibble":
        row.update(a0=sbyte(), mode=Mode.C, sq0=1, steps=1)
        col.update(b0=byte(), sk0=0)
    elif action == "tapped_mac":
        row.update(a0=sbyte(), sq0=1, steps=1)
        col.update(b0=byte(), sk0=1)
    elif action != "idle":
        raise ValueError(f"no action {action!r} for the augmented PE")
    col["steps"] = row["steps"]             # the column moves with the slot's steps
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


def netlist_bit(name: str, width: int, i: int) -> str:
    """Bit ``i`` of a ``width``-bit signal, named as Yosys's ``splitnets`` names it."""
    return name if width == 1 else f"{name}_{i}_"


def _bits(flat, ctx):
    # {netlist bit name: 0/1} of the flattened members.
    out = {}
    for path, value in flat:
        name = "__".join(str(p) for p in path)
        value = Value.cast(value)              # a layout's or an enum's view: its bits
        width = len(value)
        raw = int(ctx.get(value)) & ((1 << width) - 1)
        for i in range(width):
            out[netlist_bit(name, width, i)] = (raw >> i) & 1
    return out


def _unit_stimulus(block: str, dut, cfg: Config, action: str, rnd: random.Random, trace=None):
    """An async ``step(ctx)`` that sets one cycle's inputs of a dispatcher block or the softmax unit."""
    if block == "softmax":
        mult, shift = softmax_scale(12 / SOFTMAX_SPAN)
        busy = action == "busy"

        async def step(ctx):
            ctx.set(dut.mult, mult)
            ctx.set(dut.shift, shift)
            ctx.set(dut.scores.valid, int(busy))
            ctx.set(dut.codes.ready, int(busy))
            ctx.set(dut.scores.payload, [rnd.randrange(-SOFTMAX_SPAN, SOFTMAX_SPAN) if busy else 0
                                         for _ in range(cfg.vector_lanes)])
        return step
    if block == "scheduler":
        # The stream holds its string until the queue takes it, as a real producer does.
        offer = dict(in_valid=0, in_string=0, in_last=0)
        # A trace is (strings, last) of the run's stream, offered in order (and again).
        taken = iter(range(1 << 62))

        def draw():
            if action == "run":
                i = next(taken) % len(trace[0])
                return trace[0][i], int(trace[1][i])
            return rnd.getrandbits(cfg.entry_bits), int(rnd.random() < 1 / cfg.queue_depth)

        async def step(ctx):
            if action != "idle" and (not offer["in_valid"] or ctx.get(dut.in_ready)):
                string, last = draw()
                offer.update(in_valid=1, in_string=string, in_last=last)
            for k, v in offer.items():
                ctx.set(getattr(dut, k), v)
        return step
    if block == "window-pe":
        W = dut.cfg.issue_window

        async def step(ctx):
            row, col, drain = _augmented(action, rnd)
            # The gate run starts from reset, so what an action does not move stays at 0.
            moving = row["steps"] != 0
            others = [rnd.randrange(256) for _ in range(W - 2)] if moving else [0] * (W - 2)
            ops = ([row["a0"], row["a1"]], [col["b0"], col["b1"]]) if moving else ([0, 0], [0, 0])
            for w, v in enumerate(ops[0] + others):
                ctx.set(dut.row_in.a[w], int(v) - 256 if int(v) > 127 else int(v))
            for w, v in enumerate(ops[1] + others):
                ctx.set(dut.col_in.b[w], int(v))
            for w in range(W):
                ctx.set(dut.row_in.sq[w], int(row[f"sq{w}"]) if w < 2 else 0)
                ctx.set(dut.col_in.sk[w], int(col[f"sk{w}"]) if w < 2 else 0)
            for port in (dut.row_in, dut.col_in):
                ctx.set(port.sel[0], 0)
                ctx.set(port.sel[1], int(moving))
            ctx.set(dut.row_in.take, int(row["steps"]))
            ctx.set(dut.col_in.take, 0b11 if moving else 0)
            for k in ("mode", "load", "drain"):
                ctx.set(getattr(dut.row_in, k), int(row[k]))
            ctx.set(dut.drain_in.score, drain["score"])
            ctx.set(dut.drain_in.valid, drain["valid"])
        return step
    G, R, C = cfg.group_width, cfg.rows, cfg.cols
    states = lambda n: [rnd.randrange(3) for _ in range(n)]
    if block == "matcher":
        return _matcher_passes(dut, G, R, C, action != "idle", rnd, trace if action == "run" else None)

    async def step(ctx):
        busy = action == "busy"
        ctx.set(dut.wr_en, int(busy))
        ctx.set(dut.wr_chan, rnd.randrange(G) if busy else 0)
        ctx.set(dut.wr_data, {"sq": states(R), "sk": states(C)} if busy else {"sq": [0] * R, "sk": [0] * C})
        ctx.set(dut.mode, rnd.choice(PAIRED_MODES) if busy else Mode.A)
        for s in dut.sets:
            ctx.set(s, rnd.getrandbits(G) if busy else 0)
        # A pass begins about once in eight slots (its set recorded at random), and
        # every other slot issues.
        begin = busy and rnd.random() < 1 / 8
        ctx.set(dut.opening, int(begin))
        ctx.set(dut.advance, int(busy and not begin))
        ctx.set(dut.recorded, rnd.getrandbits(G) if begin else 0)
    return step


def _matcher_passes(dut, G: int, R: int, C: int, busy: bool, rnd: random.Random, trace=None):
    """An async ``step(ctx)`` that runs the matcher through the passes of tile
    groups, one slot a cycle, as the engine does; or holds it idle. Without a
    trace the states and the sets are random; with one (``(sq, sk, sets)`` per
    tile group, :func:`golden.cycle_model.matcher_trace`) they are its tile groups', in turn."""
    # What the engine keeps between slots: the pass, its slot, what the last slot
    # left, which of the trace's tile groups runs, and the sets B, C and D will open on
    # (chosen as pass A begins: pass A writes each channel with its need bits).
    run = {"mode": Mode.A, "slot": 0, "left": 0, "tile": 0, "sets": (0, 0, 0)}
    tile = lambda: trace[run["tile"] % len(trace)]
    channels = lambda: len(tile()[0][0]) if trace else G

    def states(which, n, slot):
        if trace is None:
            return [rnd.randrange(3) for _ in range(n)]
        return [tile()[which][i][slot] for i in range(n)]

    async def step(ctx):
        mode, slot = run["mode"], run["slot"]
        if busy and mode == Mode.A and slot == 0:
            run["sets"] = tuple(rnd.getrandbits(G) for _ in PAIRED_MODES) if trace is None else tile()[2]
        ctx.set(dut.mode, mode if busy else Mode.A)
        writing = busy and mode == Mode.A
        ctx.set(dut.wr_en, int(writing))
        ctx.set(dut.wr_chan, slot if writing else 0)
        ctx.set(dut.wr_data, {"sq": states(0, R, slot) if writing else [0] * R,
                              "sk": states(1, C, slot) if writing else [0] * C})
        ctx.set(dut.wr_need, sum((s >> slot & 1) << k for k, s in enumerate(run["sets"])) if writing else 0)
        opening = busy and mode != Mode.A and slot == 0
        if opening:
            run["left"] = run["sets"][int(mode) - 1]
        ctx.set(dut.opening, int(opening))
        ctx.set(dut.advance, int(busy and not opening))
        ctx.set(dut.recorded, run["left"] if opening else 0)
        ctx.set(dut.sets[0], run["left"] if busy else 0)
        if not busy:
            return
        # The pass ends with its last slot: A after every channel's write, the
        # others when the matcher has nothing more to issue.
        ends = slot == channels() - 1 if mode == Mode.A else not opening and not ctx.get(dut.more)
        if not opening and mode != Mode.A:
            run["left"] = ctx.get(dut.rest[0])
        run["slot"] = 0 if ends else slot + 1
        if ends:
            run["mode"] = Mode((int(mode) + 1) % 4)         # A, B, C, D, and A again
            run["tile"] += mode == Mode.D
    return step


def _pe_step(block: str, dut, action: str, rnd: random.Random):
    """An async ``step(ctx)`` that sets one cycle's inputs of a PE doing ``action``."""
    async def step(ctx):
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
    return step


def stimulus(block: str, cfg: Config, action: str, cycles: int = 256, seed: int = 1, trace=None) -> dict:
    """The input bits ``block`` sees on each of ``cycles`` cycles of ``action``, and
    its outputs after each rising edge, from the RTL in Amaranth's simulator.
    ``trace`` is what a ``run`` action replays (:data:`TRACED`).

    Returns ``{"inputs": [{bit: 0/1}, ...], "outputs": [{bit: 0/1}, ...], "cycles": n}``,
    bits named as in the gate netlist, for a gate-level run of the same action
    (:mod:`synth.gatesim`) and a check that the netlist did what the RTL did.
    """
    if action == "run" and block in TRACED:
        if not trace or not trace[0]:
            raise ValueError(f"{block}'s run action needs a trace of a run's data")
    elif action not in actions(block, cfg):
        raise ValueError(f"{block} has no action {action!r}; it has {', '.join(actions(block, cfg))}")
    rnd = random.Random(seed)
    if block in ("pe", "baseline-pe"):
        dut = PE(cfg) if block == "pe" else BaselinePE(cfg)
        step = _pe_step(block, dut, action, rnd)
    else:
        dut = blocks.build(block, cfg)
        if block == "softmax":
            cycles = max(cycles, 2 * softmax_cycles(softmax_spec(cfg.tokens, cfg.acc_bits), cfg.vector_lanes, 1))
        step = _unit_stimulus(block, dut, cfg, action, rnd, trace)
    members = list(dut.signature.flatten(dut))
    ins = [(p, v) for p, m, v in members if m.flow == wiring.In]
    outs = [(p, v) for p, m, v in members if m.flow == wiring.Out]
    seen = {"inputs": [], "outputs": []}

    async def bench(ctx):
        for _ in range(cycles):
            await step(ctx)
            seen["inputs"].append(_bits(ins, ctx))
            await ctx.tick()
            seen["outputs"].append(_bits(outs, ctx))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return {**seen, "cycles": cycles, "action": action, "block": block}
