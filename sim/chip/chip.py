"""The chip model: a whole accelerator of many arrays, its buffers and DRAM,
running one layer of a video diffusion transformer, for Kaleido and for the
baseline systolic array.

What it takes:

* a :class:`Chip`: ``arrays`` arrays of ``rows x cols`` PEs at ``clock_mhz``,
  a softmax vector unit of ``softmax_lanes`` lanes, a global buffer and an
  accumulation buffer (SRAM), ``dram_channels`` DDR channels, and the node the
  chip is built in; :data:`CHIPS` has the paper's chip as ``"paper"``;
* a :class:`SignOff` per design: this project's own figures for its blocks
  (area, energy per action, leakage) at the node they were measured at,
  brought to the chip's node by :mod:`sim.chip.node_scaling`;
* a :class:`HeadWork`: what one head's ``Q K^T`` costs on one array, from the
  cycle model (exact or estimated, :mod:`sim.chip.fast_cycles`);
* the model's shape (:class:`sim.chip.vdits.VDiT`) and its token count.

How a layer runs (:func:`layer_cost`), operation by operation, one after the
other; each takes the longer of its compute and its DRAM traffic (the buffers
are double-buffered, so within an operation loads overlap compute):

* ``qk``: every head's tile groups shared by all arrays (Kaleido's passes A-D
  with its dispatcher, the baseline's dense tiles). Text tokens that join the
  self-attention (HunyuanVideo, CogVideoX) add dense work on both designs.
* ``softmax``: ``softmax_lanes / L`` copies of the measured ``L``-lane unit,
  each on its own rows.
* ``pv``: ``P V`` dense on both designs (Kaleido's reuse of ``V`` is not
  modelled at chip scale yet).
* ``linear``: the QKV and output projections, the MLP, and (Wan2.1) the
  cross-attention to the text, dense on both designs (Kaleido's reuse in linear
  layers is not modelled at chip scale yet).

Traffic: the arrays read ``rows + cols`` operand ports a slot (two bytes a port
on Kaleido's PE, one on the baseline's) from the global buffer, and each pass
drains ``rows x cols`` 32-bit partial scores into the accumulation buffer,
read-modify-write. Weights stream from DRAM once per layer and forward pass;
activations that do not fit in half the global buffer go to DRAM and back; the
heads' ``Q``, ``K``, ``V`` come from DRAM, as the projection left them.

Energy: each unit's actions at the chip's node (the PE's as
:mod:`golden.energy` counts them), the dispatcher and softmax units clocked for
the whole layer (busy when working, idle otherwise), SRAM bytes and DRAM bits
(:mod:`sim.chip.memories`), and logic leakage over the layer's time.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace

from golden import drain
from golden.cycle_model import baseline_cycles, scheduler_busy, tail_cycles, variant_parts
from golden.energy import workload_energy
from .fast_cycles import estimate_cycles
from .memories import DRAM_PJ_PER_BIT, dram_gbps, sram_mm2_per_mib, sram_pj_per_byte
from .node_scaling import delay_factor, energy_factor, node_key, power_factor, scale_area, scale_energy, scale_power
from golden.opcount import oracle_macs
from golden.softmax import ROW_PASSES
from golden.reuse import pair_reuse
from .vdits import VDiT

__all__ = ["Chip", "CHIPS", "ChipError", "chip_from", "SignOff", "Unit", "HeadWork", "baseline_head",
           "layer_cost", "chip_area", "kaleido_head", "DESIGNS", "OPS", "UNITS"]

DESIGNS = ("kaleido", "baseline")
OPS = ("qk", "softmax", "pv", "linear")
UNITS = ("pe_arrays", "dispatcher", "softmax", "sram", "dram")

#: Bytes of a partial score drained into the accumulation buffer.
SCORE_BYTES = 4


class ChipError(ValueError):
    """A chip description that cannot be built."""


#: The largest value each chip field takes: beyond, a figure is not a chip's
#: (an infinite clock, a 100 GHz one, a 10 V supply) and the model would print nonsense.
CHIP_LIMITS = {"arrays": 1 << 24, "rows": 256, "cols": 256, "softmax_lanes": 1 << 20, "dram_channels": 1024,
               "clock_mhz": 20000.0, "vdd": 2.5, "global_buffer_mib": 1 << 20, "acc_buffer_mib": 1 << 20,
               "dram_mtps": 100000.0}


@dataclass(frozen=True)
class Chip:
    """One accelerator chip; every parameter of the chip model.

    Members
    -------
    arrays, rows, cols : int
        Arrays, and PEs per array.
    clock_mhz : float
        The chip clock.
    node_nm, vdd, flavour : int, float, str
        The node the chip is built in, its supply voltage, and the HP or LP
        flavour of :mod:`sim.chip.node_scaling`.
    softmax_lanes : int
        Scores the softmax vector unit takes per cycle, all copies together.
    global_buffer_mib, acc_buffer_mib : float
        The two SRAM buffers (each double-buffered; the capacity counts both halves).
    dram_channels : int
        DDR channels.
    dram_mtps : float
        Their transfer rate (MT/s).
    gate_idle_arrays : bool
        Whether the chip gates the arrays' clock while they have no slot to
        issue (softmax, waits on DRAM): their PEs then cost leakage alone. Off
        in the paper's chip; a what-if, with no gate's own cost counted.
    """

    name: str = "paper"
    arrays: int = 128 * 128
    rows: int = 4
    cols: int = 4
    clock_mhz: float = 1000.0
    node_nm: int = 16
    vdd: float = 0.8
    flavour: str = "HP"
    softmax_lanes: int = 512
    global_buffer_mib: float = 64.0
    acc_buffer_mib: float = 32.0
    dram_channels: int = 16
    dram_mtps: float = 6400.0
    gate_idle_arrays: bool = False

    def __post_init__(self):
        if not isinstance(self.gate_idle_arrays, bool):
            raise ChipError(f"chip gate_idle_arrays must be true or false, got {self.gate_idle_arrays!r}")
        for f in ("arrays", "rows", "cols", "softmax_lanes", "dram_channels"):
            v = getattr(self, f)
            # A JSON true is an int to Python; a chip of `true` arrays is a typo.
            if type(v) is not int or v < 1 or v > CHIP_LIMITS.get(f, 1 << 40):
                raise ChipError(f"chip {f} must be an integer from 1 to {CHIP_LIMITS.get(f, 1 << 40):,}, got {v!r}")
        for f in ("clock_mhz", "vdd", "global_buffer_mib", "acc_buffer_mib", "dram_mtps"):
            v, top = getattr(self, f), CHIP_LIMITS[f]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= top:
                raise ChipError(f"chip {f} must be a number above 0 and at most {top:g}, got {v!r}")
        try:
            node_key(self.node_nm, self.flavour)
        except ValueError as exc:
            raise ChipError(f"chip node: {exc}") from None
        # The scaling equations are polynomials of the supply, fitted over a range
        # of it; far outside, a delay or an energy comes out negative.
        factors = (delay_factor(self.node_nm, self.vdd, self.flavour), energy_factor(self.node_nm, self.vdd, self.flavour),
                   power_factor(self.node_nm, self.vdd, self.flavour))
        if min(factors) <= 0:
            raise ChipError(f"chip vdd {self.vdd:g} V is outside the range the {self.node_nm} nm scaling equations "
                            "fit (a delay, energy or power factor comes out at or below 0)")

    @property
    def node(self) -> tuple[int, float]:
        return self.node_nm, self.vdd

    @property
    def pes(self) -> int:
        return self.arrays * self.rows * self.cols

    @property
    def dram_bytes_per_s(self) -> float:
        return dram_gbps(self.dram_channels, self.dram_mtps) * 1e9

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


#: Presets. ``paper``: the chip of the paper's evaluation (128 x 128 arrays of
#: 4 x 4 PEs at 1 GHz in 16 nm, 512 softmax lanes, 64 MB + 32 MB SRAM, 16
#: DDR5-6400 channels).
CHIPS = {"paper": Chip()}


def balanced(chip: Chip, head_dim: int = 128) -> Chip:
    """``chip`` with a vector unit as fast as its arrays: dense, each array makes
    ``rows x cols`` scores every ``head_dim`` slots, and the unit reads each
    score :data:`~golden.softmax.ROW_PASSES` times, a score per lane a cycle."""
    lanes = ROW_PASSES * chip.arrays * chip.rows * chip.cols // head_dim
    return replace(chip, name="balanced", softmax_lanes=lanes)


#: ``balanced``: the paper's chip with the vector unit sized to its arrays' score
#: rate at D = 128 (6,144 lanes against 512).
CHIPS["balanced"] = balanced(CHIPS["paper"])


def chip_from(spec: str) -> Chip:
    """A preset by name, or a JSON file of :class:`Chip` fields (the others from ``paper``)."""
    if spec in CHIPS:
        return CHIPS[spec]
    try:
        with open(spec) as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise ChipError(f"--chip {spec}: neither a preset ({', '.join(CHIPS)}) nor a file") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ChipError(f"--chip {spec}: cannot read it as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ChipError(f"--chip {spec}: expected a JSON object of chip fields")
    known = {f.name for f in fields(Chip)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ChipError(f"--chip {spec}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    try:
        return replace(CHIPS["paper"], **data)
    except TypeError as exc:
        raise ChipError(f"--chip {spec}: {exc}") from None


@dataclass(frozen=True)
class Unit:
    """One block's sign-off figures: ``area_um2``, ``energy_pj`` per action (as
    ``kaleido power`` prints them) and ``leakage_uw``."""

    area_um2: float
    energy_pj: dict
    leakage_uw: float


@dataclass(frozen=True)
class SignOff:
    """A design's measured blocks, at the node they were measured at.

    Members
    -------
    node : (int, float)
        Where they were measured: nm and supply voltage.
    pe : Unit
        The array's PE (actions ``full_mac``, ``nibble_mac`` on Kaleido's,
        ``idle``, ``hand_over``, ``drain_shift``).
    softmax : Unit
        The softmax unit (``busy``, ``idle``), of ``softmax_lanes`` lanes.
    softmax_lanes : int
        Its lanes.
    port_bytes : int
        Bytes each row and column port carries a slot (2 on Kaleido's PE).
    scheduler, matcher : Unit or None
        The dispatcher's parts (``busy``, ``idle``), Kaleido only.
    clusters : int
        Arrays one scheduler feeds.
    """

    node: tuple
    pe: Unit
    softmax: Unit
    softmax_lanes: int
    port_bytes: int = 1
    scheduler: Unit | None = None
    matcher: Unit | None = None
    clusters: int = 1

    def energy(self, unit: Unit, action: str, chip: Chip) -> float:
        """pJ of one action of ``unit`` at the chip's node."""
        e = unit.energy_pj
        value = e[action] if action in e else e["full_mac"]
        return scale_energy(value, self.node, chip.node, chip.flavour)

    def leakage_w(self, unit: Unit, chip: Chip) -> float:
        return scale_power(unit.leakage_uw, self.node, chip.node, chip.flavour) * 1e-6

    def area_mm2(self, unit: Unit, chip: Chip) -> float:
        return scale_area(unit.area_um2, self.node[0], chip.node_nm) * 1e-6


@dataclass
class HeadWork:
    """One head's ``Q K^T`` on one array: engine ``slots`` (the final drain
    included, the tail not) with their interval, the products, tile-group
    ``passes``, the scheduler's ``lead`` and ``scheduler_busy`` cycles, whether
    passes ran with the ``matcher``, and the dense and oracle MAC counts."""

    slots: float
    slots_low: float
    slots_high: float
    full_products: float
    nibble_products: float
    passes: float
    lead: int = 0
    scheduler_busy: int = 0
    matcher: bool = False
    dense_macs: float = 0.0
    oracle_macs: float = 0.0


def baseline_head(tokens: int, head_dim: int, rows: int, cols: int) -> HeadWork:
    """The baseline array's head: dense ``R x C`` token tiles, every channel a slot."""
    tiles = -(-tokens // rows) * -(-tokens // cols)
    slots = drain.uniform_slots(tiles, head_dim, rows)
    macs = tokens * tokens * head_dim
    return HeadWork(slots, slots, slots, macs, 0, tiles, dense_macs=macs, oracle_macs=macs)


def _gemm(m: int, k: int, n: int, chip: Chip) -> tuple[float, float]:
    """Slots (summed over arrays) and tiles of a dense ``[m, k] x [k, n]`` product."""
    tiles = -(-m // chip.rows) * -(-n // chip.cols)
    return tiles * max(k, drain.drain_spacing(chip.rows)), tiles


@dataclass
class _Op:
    slots: float = 0.0              # array slots, summed over arrays
    tiles: float = 0.0              # tile-group passes (each drains once)
    full: float = 0.0
    nibble: float = 0.0
    extra_cycles: float = 0.0       # cycles outside the arrays' slots (tail, lead, softmax)
    sram_bytes: float = 0.0
    dram_bytes: float = 0.0
    matcher_busy: float = 0.0       # unit-cycles
    scheduler_busy: float = 0.0
    softmax_busy: float = 0.0
    interval: tuple = (0.0, 0.0)    # slots' interval


def _ops(model: VDiT, tokens: int, head: HeadWork, sign: SignOff, chip: Chip, softmax_row_cycles: int,
         cross_row_cycles: int = 0) -> dict:
    h, d, hidden = model.heads, model.head_dim, model.hidden
    text = model.text_tokens if model.joint_text else 0
    n_all = tokens + text
    port = (chip.rows + chip.cols) * sign.port_bytes
    tail = drain.tail_cycles(chip.rows, chip.cols)
    half_gb = chip.global_buffer_mib * 2 ** 20 / 2
    ops = {}

    qk = _Op()
    qk.slots = h * head.slots
    qk.interval = (h * head.slots_low, h * head.slots_high)
    qk.tiles, qk.full, qk.nibble = h * head.passes, h * head.full_products, h * head.nibble_products
    if text:                                    # text rows and columns join, dense on both designs
        extra = (n_all * n_all - tokens * tokens) * d
        slots, tiles = _gemm(n_all, d, n_all, chip)
        share = extra / (n_all * n_all * d)
        qk.slots += h * slots * share
        qk.interval = (qk.interval[0] + h * slots * share, qk.interval[1] + h * slots * share)
        qk.tiles += h * tiles * share
        qk.full += h * extra
    # The engines wait for the scheduler's clusters of each head's first channel
    # group (HeadWork.lead: one scheduler per operand stream). A stream's batches
    # are independent, so the chip's schedulers share the 2h streams of a layer
    # and each stream's wait shrinks with the schedulers it gets.
    schedulers = -(-chip.arrays // sign.clusters) if sign.scheduler is not None else 0
    qk.extra_cycles = tail + (head.lead * min(1.0, 2 * h / schedulers) if schedulers else head.lead)
    qk.sram_bytes = qk.slots * port + qk.tiles * chip.rows * chip.cols * 2 * SCORE_BYTES
    qk.dram_bytes = 2 * n_all * hidden                  # Q and K of every head, as the projection left them
    if head.matcher:
        qk.matcher_busy = qk.slots                      # each array's matcher, while its engine runs
    qk.scheduler_busy = h * head.scheduler_busy
    ops["qk"] = qk

    sm = _Op()
    units = max(1, chip.softmax_lanes // sign.softmax_lanes)
    rows = h * n_all
    sm.extra_cycles = -(-rows // units) * softmax_row_cycles
    sm.softmax_busy = rows * softmax_row_cycles         # unit-cycles
    # Every pass reads each score again; the last writes its code.
    sm.sram_bytes = h * n_all * n_all * (ROW_PASSES * SCORE_BYTES + 1)
    if not model.joint_text and cross_row_cycles:
        # The cross-attention's rows, a text token long (Wan2.1): the same unit.
        cross = h * tokens
        sm.extra_cycles += -(-cross // units) * cross_row_cycles
        sm.softmax_busy += cross * cross_row_cycles
        sm.sram_bytes += cross * model.text_tokens * (ROW_PASSES * SCORE_BYTES + 1)
    ops["softmax"] = sm

    pv = _Op()
    slots, tiles = _gemm(n_all, n_all, d, chip)
    pv.slots, pv.tiles, pv.full = h * slots, h * tiles, h * n_all * n_all * d
    pv.interval = (pv.slots, pv.slots)
    pv.extra_cycles = tail
    pv.sram_bytes = pv.slots * port / sign.port_bytes + pv.tiles * chip.rows * chip.cols * SCORE_BYTES
    pv.dram_bytes = n_all * hidden + tokens * hidden    # V in, the attention's output out
    ops["pv"] = pv

    lin = _Op()
    # (m, k, n, whether [k, n] is a weight matrix streamed from DRAM)
    gemms = [(n_all, hidden, 3 * hidden, True), (n_all, hidden, hidden, True), (tokens, hidden, model.mlp, True),
             (tokens, model.mlp, hidden, True)]
    if not model.joint_text:                            # cross-attention to the text (Wan2.1)
        t = model.text_tokens
        gemms += [(tokens, hidden, hidden, True), (t, hidden, 2 * hidden, True), (tokens, hidden, hidden, True)]
        gemms += [(tokens, d, t, False)] * h + [(tokens, t, d, False)] * h
    for m, k, n, weights in gemms:
        slots, tiles = _gemm(m, k, n, chip)
        lin.slots += slots
        lin.tiles += tiles
        lin.full += m * k * n
        lin.extra_cycles += tail
        lin.sram_bytes += slots * port / sign.port_bytes + tiles * chip.rows * chip.cols * SCORE_BYTES
        spill = (m * k + m * n) if m * k > half_gb else 0      # activations that do not stay on chip
        lin.dram_bytes += (k * n if weights else 0) + spill
    lin.interval = (lin.slots, lin.slots)
    ops["linear"] = lin
    return ops


def layer_cost(model: VDiT, tokens: int, head: HeadWork, sign: SignOff, chip: Chip,
               softmax_row_cycles: int, cross_row_cycles: int = 0) -> dict:
    """One layer's forward pass on ``chip`` by the design ``sign`` describes: per operation ``time_s`` (with the
    interval the head's estimate carries), ``compute_s``, ``memory_s``,
    ``energy_j`` split by unit; and the layer's totals."""
    f = chip.clock_mhz * 1e6
    ops = _ops(model, tokens, head, sign, chip, softmax_row_cycles, cross_row_cycles)
    # The PE's actions at the chip's node, counted as golden.energy counts them.
    pe_actions = {a: sign.energy(sign.pe, a, chip) for a in ("full_mac", "nibble_mac", "idle", "hand_over",
                                                            "drain_shift")}
    tail = drain.tail_cycles(chip.rows, chip.cols)
    sram_pj, dram_pj = sram_pj_per_byte(chip.node), DRAM_PJ_PER_BIT
    out, total_time, low_time, high_time = {}, 0.0, 0.0, 0.0
    for name, op in ops.items():
        def seconds(slots):
            compute = (slots / chip.arrays + op.extra_cycles) / f
            return max(compute, op.dram_bytes / chip.dram_bytes_per_s), compute
        time_s, compute_s = seconds(op.slots)
        lo, hi = seconds(op.interval[0])[0], seconds(op.interval[1])[0]
        cycles = time_s * f
        # The arrays' clock runs for the whole operation, or, gated, while they issue slots.
        clocked = (op.slots / chip.arrays + (tail if op.slots else 0)) if chip.gate_idle_arrays else cycles
        # Every array's PE-cycles, products and passes (leakage is the chip's, below).
        pe_pj = workload_energy(clocked * chip.arrays, chip.rows, chip.cols, op.full, op.nibble, op.tiles,
                                pe_actions, 0.0, chip.clock_mhz)["energy_pj"]
        out[name] = {"time_s": time_s, "time_interval_s": [lo, hi], "compute_s": compute_s,
                     "memory_s": op.dram_bytes / chip.dram_bytes_per_s, "cycles": cycles,
                     "sram_bytes": op.sram_bytes, "dram_bytes": op.dram_bytes,
                     "energy_j": {"pe_arrays": pe_pj * 1e-12, "sram": op.sram_bytes * sram_pj * 1e-12,
                                  "dram": op.dram_bytes * 8 * dram_pj * 1e-12},
                     "_op": op}
        total_time, low_time, high_time = total_time + time_s, low_time + lo, high_time + hi
    # Units clocked for the whole layer: idle when not busy, busy when working.
    cycles = total_time * f
    units = max(1, chip.softmax_lanes // sign.softmax_lanes)
    leak = chip.pes * sign.leakage_w(sign.pe, chip) + units * sign.leakage_w(sign.softmax, chip)
    for name, o in out.items():
        op = o.pop("_op")
        sm = sign.softmax.energy_pj
        soft = (op.softmax_busy * (sign.energy(sign.softmax, "busy", chip) - sign.energy(sign.softmax, "idle", chip))
                + units * o["cycles"] * sign.energy(sign.softmax, "idle", chip)) if sm else 0.0
        disp = 0.0
        if sign.matcher is not None:
            m_idle = sign.energy(sign.matcher, "idle", chip)
            m_busy = sign.energy(sign.matcher, "busy", chip)
            disp += chip.arrays * o["cycles"] * m_idle + op.matcher_busy * (m_busy - m_idle)
        if sign.scheduler is not None:
            s_idle = sign.energy(sign.scheduler, "idle", chip)
            schedulers = -(-chip.arrays // sign.clusters)
            disp += schedulers * o["cycles"] * s_idle + op.scheduler_busy * (
                sign.energy(sign.scheduler, "busy", chip) - s_idle)
        o["energy_j"]["softmax"] = soft * 1e-12
        o["energy_j"]["dispatcher"] = disp * 1e-12
        o["energy_j"]["leakage"] = leak * o["time_s"]
        o["energy_total_j"] = sum(o["energy_j"].values())
    if sign.matcher is not None:
        leak_disp = chip.arrays * sign.leakage_w(sign.matcher, chip)
        if sign.scheduler is not None:
            leak_disp += -(-chip.arrays // sign.clusters) * sign.leakage_w(sign.scheduler, chip)
        for o in out.values():
            o["energy_j"]["dispatcher"] += leak_disp * o["time_s"]
            o["energy_total_j"] += leak_disp * o["time_s"]
    by_unit = {u: sum(o["energy_j"].get(u, 0.0) for o in out.values()) for u in UNITS + ("leakage",)}
    return {"ops": out, "time_s": total_time, "time_interval_s": [low_time, high_time],
            "energy_j": sum(o["energy_total_j"] for o in out.values()), "energy_by_unit_j": by_unit,
            "cycles": cycles}


def chip_area(sign: SignOff, chip: Chip) -> dict:
    """mm^2 of the chip's units: PE arrays, dispatcher, softmax, SRAM."""
    units = max(1, chip.softmax_lanes // sign.softmax_lanes)
    disp = 0.0
    if sign.matcher is not None:
        disp += chip.arrays * sign.area_mm2(sign.matcher, chip)
    if sign.scheduler is not None:
        disp += -(-chip.arrays // sign.clusters) * sign.area_mm2(sign.scheduler, chip)
    out = {"pe_arrays": chip.pes * sign.area_mm2(sign.pe, chip), "dispatcher": disp,
           "softmax": units * sign.area_mm2(sign.softmax, chip),
           "sram": (chip.global_buffer_mib + chip.acc_buffer_mib) * sram_mm2_per_mib()}
    out["total"] = sum(out.values())
    return out


def kaleido_head(q, k, cfg, samples: int | None = None, seed: int = 0) -> HeadWork:
    """One head's ``Q K^T`` on Kaleido's array (``cfg``'s PE and dispatcher), from
    the fast cycle model: exact with ``samples=None``, else estimated."""
    est = estimate_cycles(q, k, cfg, samples=samples, seed=seed)
    off = tail_cycles(cfg) + est.lead_cycles
    if est.schedule == "dense":
        passes, sch, mat = baseline_cycles(q.shape[0], k.shape[0], cfg).tiles, False, False
    else:
        (sch, mat), passes = variant_parts(est.ran_as), 4 * est.tiles
    n, d = q.shape
    return HeadWork(est.cycles - off, est.low - off, est.high - off, est.full_products, est.nibble_products,
                    passes, est.lead_cycles, scheduler_busy(q, k, cfg) if sch else 0, mat,
                    dense_macs=n * k.shape[0] * d,
                    oracle_macs=oracle_macs(pair_reuse(q, cfg).states, pair_reuse(k, cfg).states))
