"""One layer of a video diffusion transformer on a chip: time and energy,
operation by operation, on the chip's kinds of array (:mod:`sim.chip.kinds`).

The operations (:data:`~sim.chip.chip.OPS`):

* ``qk``: every head's tile groups. The heads are shared between the kinds in
  proportion to how fast each kind's arrays run them, so that both finish
  together. Text tokens that join the self-attention (HunyuanVideo, CogVideoX)
  add dense work on every array.
* ``softmax``: ``softmax_lanes / L`` copies of the measured ``L``-lane unit,
  each on its own rows, three passes over each score.
* ``pv``: ``P V``: on Kaleido's arrays as each head's fast model
  (:mod:`sim.chip.fast_pv`) found the engine runs it (V's folded column tiles,
  or dense), on plain arrays dense; shared between the kinds like Q K^T.
* ``linear``: the QKV and output projections, the MLP, and (Wan2.1) the
  cross-attention to the text. On Kaleido's arrays a layer whose input was
  captured (an activation archive, :mod:`sim.chip.activations`) runs as each
  head's slice of its own input found (:mod:`sim.chip.fast_linear`); with a
  synthetic workload, the layers that take the block's hidden state (the QKV
  projection, the MLP's first layer, Wan2.1's cross-attention query) run as
  each head's slice of it found. The others, and every layer on plain arrays,
  run dense.

What each operation moves, and the resource that bounds it:

* **arrays**: its slots over the arrays, plus the cycles outside them (the
  drain's tail, the scheduler's lead, the softmax unit's rows);
* **global buffer**: operands. A dense stream reads ``rows + cols`` bytes an
  array a slot; broadcast, one read feeds a row (queries) or a column (keys)
  of the arrays' square grid, so the reads shrink by its side. Each channel a
  pass streams moves one byte over every row and column port (a slot that
  pairs two channels moves two over a row port). A head that the matcher pairs
  does not stream: each array's matcher loads its tile group's features
  (``2 rows + 2 cols`` tokens of every channel) into its own buffer once, and
  feeds its array from there; a head run in channel order or dense, or on an
  array without a matcher, streams from the global buffer;
* **accumulation buffer**: scores at their width (:func:`~sim.chip.chip.score_bytes`),
  drained once by a dense tile; a paired head's passes drain partial scores,
  written by the first channel group and read and written again by each later
  one; the softmax unit's reads;
* **DRAM**: weights once per layer, ``Q``, ``K``, ``V`` and the attention's
  output, activations that do not fit in half the global buffer.

An operation takes the longest of the four, its ``bound``. Serially, a layer
is the sum of its operations. Pipelined (the default), the attention runs in
blocks of queries whose scores fill half the accumulation buffer: the arrays'
Q K^T of one block beside the vector unit's softmax of the one before and the
arrays' P V of the one before that; each step lasts as long as its busiest
resource, and the first two and last two steps fill and drain the pipeline.
Nothing hides the Q K^T of the steps that fill it, so it may run another
schedule there (``fill``: each head's fastest, :mod:`sim.chip.qk_schedule`).

Energy: the PEs' actions as :mod:`golden.energy` counts them (each kind's own;
gated arrays cost nothing between their slots but their clock gate), the
dispatcher and softmax units (busy when working, idle otherwise, for the whole
layer), SRAM bytes, the operands' wires, DRAM bits and standing power, and the
logic's leakage by area (:mod:`sim.chip.memories`). What runs for the whole
layer is shared among the operations by their own times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from golden import drain
from golden.energy import workload_energy
from golden.softmax import ROW_PASSES

from .chip import UNITS, Chip, HeadWork, SignOff, score_bytes
from .kinds import Kind, chip_area, head_shares
from .memories import (
    DRAM_PJ_PER_BIT,
    DRAM_REFRESH_W,
    DRAM_STANDBY_W,
    LOGIC_LEAKAGE_MW_PER_MM2,
    WIRE_FJ_PER_BIT_MM,
    feature_pj_per_byte,
    sram_pj_per_byte,
)
from .vdits import VDiT

__all__ = ["layer_cost", "fill_share", "RESOURCES", "ATTENTION"]

#: What bounds an operation: ``compute`` is the arrays' (the vector unit's for softmax).
RESOURCES = ("compute", "global_buffer", "acc_buffer", "dram")
#: The operations the pipelined schedule overlaps.
ATTENTION = ("qk", "softmax", "pv")


@dataclass
class _Work:
    """One kind's share of one operation."""

    slots: float = 0.0              # array slots, summed over the kind's arrays
    low: float = 0.0                # the slots' interval
    high: float = 0.0
    tiles: float = 0.0              # tile-group passes (each drains once)
    drains: float = 0.0             # accumulation-buffer accesses per drained score, summed (dense work)
    full: float = 0.0
    nibble: float = 0.0
    matcher_busy: float = 0.0       # unit-cycles
    scheduler_busy: float = 0.0


@dataclass
class _Op:
    work: dict = field(default_factory=dict)    # kind -> _Work
    extra_cycles: float = 0.0       # cycles outside the arrays' slots (tail, lead, softmax rows)
    global_bytes: float = 0.0       # operand reads from the global buffer
    feature_bytes: float = 0.0      # reads from the matchers' own feature buffers
    acc_bytes: float = 0.0          # accumulation-buffer accesses
    dram_bytes: float = 0.0
    wire_bit_mm: float = 0.0
    softmax_busy: float = 0.0       # unit-cycles
    ran_dense: list = field(default_factory=list)   # linear layers whose windows the chip left unused


def _gemm(m: int, k: int, n: int, chip: Chip) -> tuple[float, float]:
    """Slots (summed over arrays) and tiles of a dense ``[m, k] x [k, n]`` product."""
    tiles = -(-m // chip.rows) * -(-n // chip.cols)
    return tiles * max(k, drain.drain_spacing(chip.rows)), tiles


class _Reads:
    """The global buffer's reads and their wires, broadcast or not."""

    def __init__(self, chip: Chip, edge_mm: float):
        self.side = math.sqrt(chip.arrays) if chip.operand_broadcast else 1.0
        # A broadcast read runs along a row of the grid, the chip's edge; one to a
        # single array half of it, on average.
        self.mm = edge_mm if chip.operand_broadcast else edge_mm / 2

    def add(self, op: _Op, per_array_bytes: float) -> None:
        """``per_array_bytes``: what the arrays need, counted once per array."""
        reads = per_array_bytes / self.side
        op.global_bytes += reads
        op.wire_bit_mm += reads * 8 * self.mm


@dataclass(frozen=True)
class _Rate:
    """What a kind needs of a dense product: shares of its ``slots``, ``tiles``
    (drains), whole products (``macs``) and nibble products (``nibble``), the
    bytes each row and column port carries a slot, and the accumulation
    buffer's ``accesses`` per drained score (2 where later passes add to it)."""

    slots: float = 1.0
    tiles: float = 1.0
    macs: float = 1.0
    row_bytes: float = 1.0
    nibble: float = 0.0
    col_bytes: float = 1.0
    accesses: float = 1.0


def _dense(op: _Op, kinds: dict, chip: Chip, slots: float, tiles: float, macs: float, reads: _Reads,
           rates: dict | None = None) -> None:
    """A dense product spread over every array, each kind a share as fast as it
    runs it (so that all finish together); operands streamed. A kind's rate is
    ``rates[name]`` if given, else its ``dense_factor`` of everything."""
    rates = {name: (rates or {}).get(name) or _Rate(kind.dense_factor, kind.dense_factor, kind.dense_factor)
             for name, kind in kinds.items()}
    speed = {name: kind.arrays / rates[name].slots for name, kind in kinds.items()}
    for name, kind in kinds.items():
        w, r = op.work.setdefault(name, _Work()), rates[name]
        share = speed[name] / sum(speed.values())
        mine = slots * share * r.slots
        w.slots += mine
        w.low += mine
        w.high += mine
        w.tiles += tiles * share * r.tiles
        w.drains += tiles * share * r.tiles * r.accesses
        w.full += macs * share * r.macs
        w.nibble += macs * share * r.nibble
        reads.add(op, mine * (chip.rows * r.row_bytes + chip.cols * r.col_bytes))


def _qk(model: VDiT, tokens: int, kinds: dict, chip: Chip, reads: _Reads) -> _Op:
    h, d = model.heads, model.head_dim
    text = model.text_tokens if model.joint_text else 0
    n_all = tokens + text
    op = _Op()
    shares = head_shares(kinds)
    waits = [0.0]
    for name, kind in kinds.items():
        heads = h * shares[name]                        # this kind's share of the heads
        hw, w = kind.work, op.work.setdefault(name, _Work())
        w.slots, w.low, w.high = heads * hw.slots, heads * hw.slots_low, heads * hw.slots_high
        w.tiles, w.full, w.nibble = heads * hw.passes, heads * hw.full_products, heads * hw.nibble_products
        # A pass drains partial scores that a later channel group reads back and adds
        # to; a score's first group only writes (and a dense tile, drained whole, too).
        w.drains = heads * (2 * hw.passes - hw.first_passes)
        w.scheduler_busy = heads * hw.scheduler_busy
        # The matcher and the paired schedule, on the share of heads that ran them.
        w.matcher_busy = w.slots * float(hw.matcher)    # each array's matcher, while its engine runs
        # Every channel a pass streams moves one operand byte over each row and
        # column port (a slot that pairs two channels moves two on a row port).
        # Where the matcher pairs, each tile group's features are loaded once into
        # its buffer, which feeds them; a head run without the matcher (in order,
        # or dense) streams them from the global buffer.
        port = heads * hw.channel_steps * (chip.rows + chip.cols)
        matched = float(hw.matcher) if kind.sign.matcher is not None else 0.0
        if matched:
            groups = -(-tokens // (2 * chip.rows)) * -(-tokens // (2 * chip.cols))
            reads.add(op, matched * heads * groups * 2 * (chip.rows + chip.cols) * d)
            op.feature_bytes += matched * port
        reads.add(op, (1 - matched) * port)
        if kind.sign.scheduler is not None:
            # The engines wait for the scheduler's clusters of each head's first
            # channel group (HeadWork.lead: one scheduler per operand stream). A
            # stream's batches are independent, so the kind's schedulers share the
            # layer's 2h streams and each stream's wait shrinks with those it gets.
            schedulers = -(-kind.arrays // kind.sign.clusters)
            waits.append(hw.lead * min(1.0, 2 * h / schedulers))
    if text:                                    # text rows and columns join, dense on every array
        extra = (n_all * n_all - tokens * tokens) * d
        slots, tiles = _gemm(n_all, d, n_all, chip)
        share = extra / (n_all * n_all * d)
        _dense(op, kinds, chip, h * slots * share, h * tiles * share, h * extra, reads)
    op.extra_cycles = drain.tail_cycles(chip.rows, chip.cols) + max(waits)
    op.acc_bytes = sum(w.drains for w in op.work.values()) * chip.rows * chip.cols * score_bytes(d)
    op.dram_bytes = 2 * n_all * model.hidden            # Q and K of every head, as the projection left them
    return op


def _softmax(model: VDiT, tokens: int, sign: SignOff, chip: Chip, row_cycles: int, cross_row_cycles: int) -> _Op:
    h = model.heads
    n_all = tokens + (model.text_tokens if model.joint_text else 0)
    op = _Op()
    units = max(1, chip.softmax_lanes // sign.softmax_lanes)
    rows = h * n_all
    op.extra_cycles = -(-rows // units) * row_cycles
    op.softmax_busy = rows * row_cycles                 # unit-cycles
    # Every pass reads each score again; the last writes its code.
    op.acc_bytes = h * n_all * n_all * (ROW_PASSES * score_bytes(model.head_dim) + 1)
    if not model.joint_text and cross_row_cycles:
        # The cross-attention's rows, a text token long (Wan2.1): the same unit.
        cross = h * tokens
        op.extra_cycles += -(-cross // units) * cross_row_cycles
        op.softmax_busy += cross * cross_row_cycles
        op.acc_bytes += cross * model.text_tokens * (ROW_PASSES * score_bytes(model.head_dim) + 1)
    return op


def _pv(model: VDiT, tokens: int, kinds: dict, chip: Chip, reads: _Reads) -> _Op:
    h, d = model.heads, model.head_dim
    text = model.text_tokens if model.joint_text else 0
    n_all = tokens + text
    op = _Op()
    slots, tiles = _gemm(n_all, n_all, d, chip)
    macs = n_all * n_all * d
    row_tiles = -(-n_all // chip.rows)
    rates = {}
    for name, kind in kinds.items():
        w = kind.work
        if w.pv_keys is None or kind.dense_factor != 1.0:
            continue            # dense, or the explore's what-if level
        # The head's own P V~ (sim.chip.fast_pv): its column tiles over their keys,
        # text keys never folded; a folded key's row entry carries two codes.
        rates[name] = _Rate(slots=row_tiles * (w.pv_keys + w.pv_tiles * text) / slots,
                            tiles=row_tiles * w.pv_tiles / tiles, macs=n_all * (w.pv_channel_keys + d * text) / macs,
                            row_bytes=1 + w.pv_shared)
    _dense(op, kinds, chip, h * slots, h * tiles, h * macs, reads, rates)
    op.extra_cycles = drain.tail_cycles(chip.rows, chip.cols)
    op.acc_bytes = sum(w.drains for w in op.work.values()) * chip.rows * chip.cols * score_bytes(n_all)
    op.dram_bytes = n_all * model.hidden + tokens * model.hidden    # V in, the attention's output out
    return op


#: The linear layers whose input is the block's hidden state: a synthetic
#: workload's one slice of it stands for each of them.
HIDDEN_ROLES = ("qkv", "mlp1", "cross_q")


def _linear_factors(w: HeadWork, role: str) -> dict | None:
    """A head's figures for the linear layer ``role``: its own input's, where it
    was captured; the hidden state's slice, for a layer that takes it; else none."""
    if w.linear_roles is not None:
        return w.linear_roles.get(role)
    if role in HIDDEN_ROLES and w.linear_slots is not None:
        return {"linear_slots": w.linear_slots, "linear_passes": w.linear_passes, "linear_full": w.linear_full,
                "linear_nibble": w.linear_nibble, "linear_windows": w.linear_windows}
    return None


def _linear_rates(kinds: dict, m: int, tokens: int, role: str) -> dict:
    """Each Kaleido kind's rate on the linear layer ``role``, ``m`` rows of it
    ``tokens`` video tokens (the rest text, dense): the head's window reuse
    (:mod:`sim.chip.fast_linear`), whose passes drain partial outputs that later
    channel groups add to, and whose columns carry a window's reference and
    partner values."""
    rates = {}
    for name, kind in kinds.items():
        f = _linear_factors(kind.work, role)
        if f is None or kind.dense_factor != 1.0:
            continue
        video, text = tokens / m, (m - tokens) / m
        tiles, windows = video * f["linear_passes"] + text, f["linear_windows"]
        # With windows, an output tile's passes each read and add to what the one
        # before wrote, all but its first: 2 x passes - 1 accesses a tile.
        rates[name] = _Rate(slots=video * f["linear_slots"] + text, tiles=tiles,
                            macs=video * f["linear_full"] + text, nibble=video * f["linear_nibble"],
                            col_bytes=1 + windows, accesses=1 + windows - windows / tiles)
    return rates


def _linear(model: VDiT, tokens: int, kinds: dict, chip: Chip, reads: _Reads) -> _Op:
    h, d, hidden = model.heads, model.head_dim, model.hidden
    n_all = tokens + (model.text_tokens if model.joint_text else 0)
    half_gb = chip.global_buffer_mib * 2 ** 20 / 2
    op = _Op()
    # (m, k, n, whether [k, n] is a weight matrix streamed from DRAM, the layer's
    # role: which input it takes (golden.archive.LINEAR_ROLES; None: the text's, dense))
    gemms = [(n_all, hidden, 3 * hidden, True, "qkv"), (n_all, hidden, hidden, True, "out"),
             (tokens, hidden, model.mlp, True, "mlp1"), (tokens, model.mlp, hidden, True, "mlp2")]
    if not model.joint_text:                            # cross-attention to the text (Wan2.1)
        t = model.text_tokens
        gemms += [(tokens, hidden, hidden, True, "cross_q"), (t, hidden, 2 * hidden, True, None),
                  (tokens, hidden, hidden, True, "cross_out")]
        gemms += [(tokens, d, t, False, None)] * h + [(tokens, t, d, False, None)] * h
    for m, k, n, weights, role in gemms:
        slots, tiles = _gemm(m, k, n, chip)
        before = sum(w.drains for w in op.work.values())
        spill = (m * k + m * n) if m * k > half_gb else 0      # activations that do not stay on chip
        dram = (k * n if weights else 0) + spill
        rates = _linear_rates(kinds, m, min(m, tokens), role) if role else None
        if rates:
            rates = _windows_or_dense(kinds, chip, reads, slots, tiles, m * k * n, dram, rates, k)
            if rates is None:
                op.ran_dense.append(role)
        _dense(op, kinds, chip, slots, tiles, m * k * n, reads, rates)
        # Each output is a sum of k products, stored at its width.
        op.acc_bytes += (sum(w.drains for w in op.work.values()) - before) * chip.rows * chip.cols * score_bytes(k)
        op.extra_cycles += drain.tail_cycles(chip.rows, chip.cols)
        op.dram_bytes += dram
    return op


def _windows_or_dense(kinds: dict, chip: Chip, reads: _Reads, slots: float, tiles: float, macs: float,
                      dram: float, rates: dict, k: int) -> dict | None:
    """``rates`` (the windows) for one linear layer if the chip runs it so, else None
    (dense): by the chip's objective, as Q K^T's schedule is chosen, the layer
    alone at its fewer seconds (its busiest resource: a window's extra drains may
    bound it on the accumulation buffer), then at its fewer joules. So no linear
    layer runs slower than dense. ``k``: the products each output sums."""
    priced = []
    for r in (rates, None):
        sub = _Op(extra_cycles=drain.tail_cycles(chip.rows, chip.cols), dram_bytes=dram)
        _dense(sub, kinds, chip, slots, tiles, macs, reads, r)
        sub.acc_bytes = sum(w.drains for w in sub.work.values()) * chip.rows * chip.cols * score_bytes(k)
        seconds = max(_seconds(sub, chip, sum(w.slots for w in sub.work.values())).values())
        priced.append((seconds, sum(_dynamic_energy(sub, kinds, chip, 0.0).values())))
    (t_w, e_w), (t_d, e_d) = priced
    slower = t_w > t_d * (1 + _SAME) or (t_w >= t_d * (1 - _SAME) and e_w > e_d)
    return None if slower else rates


_SAME = 1e-12       # relative difference below which two times are the same (float noise)


def _seconds(op: _Op, chip: Chip, slots: float) -> dict:
    """Each resource's time for ``op`` (``slots`` over all arrays)."""
    f = chip.clock_mhz * 1e6
    return {"compute": (slots / chip.arrays + op.extra_cycles) / f,
            "global_buffer": op.global_bytes / chip.global_bytes_per_cycle / f,
            "acc_buffer": op.acc_bytes / chip.acc_bytes_per_cycle / f,
            "dram": op.dram_bytes / chip.dram_bytes_per_s}


def _blocks(model: VDiT, tokens: int, chip: Chip) -> int:
    """Blocks of queries the pipelined attention runs: as many rows of scores as
    half the accumulation buffer holds, per head."""
    n_all = tokens + (model.text_tokens if model.joint_text else 0)
    rows = max(1, int(chip.acc_buffer_mib * 2 ** 20 / 2 // (n_all * score_bytes(model.head_dim))))
    return model.heads * -(-n_all // rows)


def _steps(blocks: int) -> dict[tuple, int]:
    """The pipelined attention's steps, as {which of Q K^T, softmax, P V run: how
    many steps}: in step ``i`` the arrays run Q K^T of block ``i`` and P V of
    block ``i - 2``, the vector unit softmax of block ``i - 1``."""
    def active(i):
        return (i < blocks, 1 <= i <= blocks, 2 <= i <= blocks + 1)
    counts = {}
    picked = [i for i in (0, 1, 2) if i < blocks + 2] + [i for i in (blocks - 1, blocks, blocks + 1) if i > 2]
    for i in picked:
        counts[active(i)] = counts.get(active(i), 0) + 1
    if blocks - 4 > 0:                                  # steps 3 .. blocks - 2, all three at once
        counts[active(3)] = counts.get(active(3), 0) + blocks - 4
    return counts


def _filling(running: tuple) -> bool:
    """Whether a pipelined step fills the pipeline: Q K^T runs, P V not yet."""
    return running[0] and not running[2]


def fill_share(blocks: int) -> float:
    """The share of a layer's Q K^T that runs in the steps filling the pipeline."""
    return sum(count for running, count in _steps(blocks).items() if _filling(running)) / blocks


def _layer_time(per_op: dict, chip: Chip, blocks: int, fill: dict | None = None) -> float:
    """The layer's seconds from each operation's resource times ``per_op[name]``;
    ``fill``, Q K^T's in the steps that fill the pipeline, if it runs another
    schedule there."""
    alone = {name: max(t.values()) for name, t in per_op.items()}
    if chip.schedule == "serial":
        return sum(alone.values())
    # Pipelined: a step lasts as long as its busiest resource: the arrays (Q K^T
    # and P V), the vector unit (softmax), or a memory serving all of them.
    total = 0.0
    for running, count in _steps(blocks).items():
        times = dict(per_op, qk=fill) if fill is not None and _filling(running) else per_op
        ops = [o for o, on in zip(ATTENTION, running) if on]
        arrays = sum(times[o]["compute"] for o in ops if o != "softmax")
        vector = times["softmax"]["compute"] if "softmax" in ops else 0.0
        memory = [sum(times[o][r] for o in ops) for r in RESOURCES if r != "compute"]
        total += count * max(arrays, vector, *memory) / blocks
    return total + alone["linear"]


def layer_cost(model: VDiT, tokens: int, kinds: dict[str, Kind], chip: Chip, softmax_row_cycles: int,
               cross_row_cycles: int = 0, fill: dict[str, Kind] | None = None) -> dict:
    """One layer's forward pass on ``chip`` with arrays of ``kinds`` (:func:`kinds_of`).

    ``fill``: the kinds whose heads' Q K^T runs in the pipelined steps that fill
    the pipeline (nothing hides them, so the driver runs its fastest schedule
    there, :mod:`sim.chip.qk_schedule`); by default ``kinds``'.

    Per operation: ``time_s`` (alone, the longest of its resources) with its
    interval, each resource's seconds, its ``bound``, bytes moved and
    ``energy_j`` by unit; and the layer's ``time_s`` (pipelined or serial, as
    the chip runs) with its interval, energy, energy by unit, and cycles."""
    f = chip.clock_mhz * 1e6
    sign = next(iter(kinds.values())).sign              # the softmax unit is the same on every kind
    area = chip_area(kinds, chip)
    reads = _Reads(chip, math.sqrt(area["total"]))
    ops = {"qk": _qk(model, tokens, kinds, chip, reads),
           "softmax": _softmax(model, tokens, sign, chip, softmax_row_cycles, cross_row_cycles),
           "pv": _pv(model, tokens, kinds, chip, reads), "linear": _linear(model, tokens, kinds, chip, reads)}
    ranges = (("time", "slots"), ("low", "low"), ("high", "high"))
    per_op = {e: {n: _seconds(op, chip, sum(getattr(w, a) for w in op.work.values())) for n, op in ops.items()}
              for e, a in ranges}
    blocks = _blocks(model, tokens, chip)
    fill_op = _qk(model, tokens, fill, chip, reads) if fill is not None and chip.schedule != "serial" else None
    filled = {e: _seconds(fill_op, chip, sum(getattr(w, a) for w in fill_op.work.values())) if fill_op else None
              for e, a in ranges}
    time_s = _layer_time(per_op["time"], chip, blocks, filled["time"])
    interval = [_layer_time(per_op[e], chip, blocks, filled[e]) for e in ("low", "high")]
    alone = {n: max(t.values()) for n, t in per_op["time"].items()}
    # What runs for the whole layer is shared among the operations by their own times.
    share = {n: t / sum(alone.values()) for n, t in alone.items()}
    cycles = time_s * f
    out = {}
    for name, op in ops.items():
        t = per_op["time"][name]
        energy = _dynamic_energy(op, kinds, chip, cycles * share[name])
        if name == "qk" and fill_op is not None:
            # The blocks that fill the pipeline ran the fill's schedule.
            w = fill_share(blocks)
            other = _dynamic_energy(fill_op, fill, chip, cycles * share[name])
            energy = {u: (1 - w) * j + w * other[u] for u, j in energy.items()}
        out[name] = {"time_s": alone[name], "time_interval_s": [max(per_op[e][name].values()) for e in ("low", "high")],
                     "compute_s": t["compute"], "memory_s": t["dram"], "global_buffer_s": t["global_buffer"],
                     "acc_buffer_s": t["acc_buffer"], "bound": max(RESOURCES, key=lambda r: t[r]),
                     "cycles": alone[name] * f, "global_buffer_bytes": op.global_bytes, "acc_bytes": op.acc_bytes,
                     "sram_bytes": op.global_bytes + op.acc_bytes + op.feature_bytes, "dram_bytes": op.dram_bytes,
                     "ran_dense": list(op.ran_dense), "energy_j": energy}
    standing = _standing_energy(kinds, chip, area, cycles)
    for name, o in out.items():
        for unit, j in standing.items():
            o["energy_j"][unit] = o["energy_j"].get(unit, 0.0) + j * share[name]
        o["energy_total_j"] = sum(o["energy_j"].values())
    by_unit = {u: sum(o["energy_j"].get(u, 0.0) for o in out.values()) for u in UNITS}
    return {"ops": out, "time_s": time_s, "time_interval_s": interval, "serial_time_s": sum(alone.values()),
            "energy_j": sum(o["energy_total_j"] for o in out.values()), "energy_by_unit_j": by_unit,
            "cycles": cycles, "blocks": blocks}


def _dynamic_energy(op: _Op, kinds: dict, chip: Chip, clocked_cycles: float) -> dict:
    """Joules by unit of what ``op`` does; ``clocked_cycles`` is the op's share of
    the layer, during which ungated arrays run their clock."""
    f = chip.clock_mhz
    tail = drain.tail_cycles(chip.rows, chip.cols)
    pe = dispatcher = 0.0
    for name, kind in kinds.items():
        w, s = op.work.get(name, _Work()), kind.sign
        actions = {a: s.energy(s.pe, a, chip) for a in ("full_mac", "nibble_mac", "idle", "hand_over", "drain_shift")}
        # Gated, an array's clock runs while it issues slots (and drains its tail).
        busy = w.slots + (kind.arrays * tail if w.slots else 0)
        clocked = busy if chip.gate_idle_arrays else max(busy, kind.arrays * clocked_cycles)
        pe += workload_energy(clocked, chip.rows, chip.cols, w.full, w.nibble, w.tiles, actions, 0.0, f)["energy_pj"]
        # A busy cycle costs its busy energy over what the unit spends anyway (its
        # idle clock, or its clock gate's when gated).
        for unit, busy_cycles in ((s.matcher, w.matcher_busy), (s.scheduler, w.scheduler_busy)):
            if unit is not None:
                dispatcher += busy_cycles * (s.energy(unit, "busy", chip) - _dispatcher_standing(s, unit, chip))
    sign = next(iter(kinds.values())).sign
    softmax = op.softmax_busy * (sign.energy(sign.softmax, "busy", chip) - sign.energy(sign.softmax, "idle", chip))
    sram = (op.global_bytes + op.acc_bytes) * sram_pj_per_byte(chip.node) + op.feature_bytes * feature_pj_per_byte(
        chip.node)
    return {"pe_arrays": pe * 1e-12, "dispatcher": dispatcher * 1e-12, "softmax": softmax * 1e-12,
            "sram": sram * 1e-12, "wires": op.wire_bit_mm * WIRE_FJ_PER_BIT_MM * 1e-15,
            "dram": op.dram_bytes * 8 * DRAM_PJ_PER_BIT * 1e-12}


def _dispatcher_standing(s, unit, chip: Chip) -> float:
    """pJ a dispatcher unit spends in a cycle it has no work: its idle clock, or with
    ``chip.gate_idle_dispatchers`` its clock gate's cycle."""
    if chip.gate_idle_dispatchers and s.clock_gate is not None:
        return s.energy(s.clock_gate, "cycle", chip)
    return s.energy(unit, "idle", chip)


def _standing_energy(kinds: dict, chip: Chip, area: dict, cycles: float) -> dict:
    """Joules by unit of what runs for the whole layer's ``cycles``: idle clocks,
    clock gates, DRAM's standby and refresh, and the logic's leakage."""
    sign = next(iter(kinds.values())).sign
    units = max(1, chip.softmax_lanes // sign.softmax_lanes)
    pj = {"softmax": units * cycles * sign.energy(sign.softmax, "idle", chip), "dispatcher": 0.0, "pe_arrays": 0.0}
    for kind in kinds.values():
        s = kind.sign
        if s.matcher is not None:
            pj["dispatcher"] += kind.arrays * cycles * _dispatcher_standing(s, s.matcher, chip)
        if s.scheduler is not None:
            pj["dispatcher"] += -(-kind.arrays // s.clusters) * cycles * _dispatcher_standing(s, s.scheduler, chip)
        if chip.gate_idle_arrays and s.clock_gate is not None:
            pj["pe_arrays"] += kind.arrays * cycles * s.energy(s.clock_gate, "cycle", chip)
    seconds = cycles / (chip.clock_mhz * 1e6)
    logic = area["pe_arrays"] + area["dispatcher"] + area["softmax"]
    out = {u: v * 1e-12 for u, v in pj.items()}
    out["dram"] = chip.dram_channels * (DRAM_STANDBY_W + DRAM_REFRESH_W) * seconds
    out["leakage"] = logic * LOGIC_LEAKAGE_MW_PER_MM2 * 1e-3 * seconds
    return out
