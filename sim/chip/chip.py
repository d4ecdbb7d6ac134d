"""The chip: every parameter of an accelerator of many arrays, its presets, and
what the chip model takes from the rest of the project.

* :class:`Chip`: ``arrays`` arrays at ``clock_mhz``, each the RTL's array
  (``array``, the design point's own :class:`~golden.config.ArrayConfig`: the
  chip and every head's design point share one owner of ``rows x cols``), a
  share of them Kaleido's (``kaleido_share``, the rest plain; ``coupled_share``
  of those with a dispatcher), a softmax vector
  unit of ``softmax_lanes`` lanes, a global buffer and an accumulation buffer
  (SRAM in banks of a width and a number of ports), ``dram_channels`` DDR
  channels, the node the chip is built in, and how it runs (pipelined or
  serial, idle arrays gated or not, operands broadcast or not). :data:`CHIPS`
  has the paper's chip as ``"paper"`` and ``"balanced"``, the same chip with a
  vector unit and an accumulation buffer that keep up with its arrays.
* :class:`SignOff`: a design's blocks as this project's own flow measured them
  (area, energy per action), at the node they were measured at, brought to the
  chip's node by :mod:`sim.chip.node_scaling`.
* :class:`HeadWork`: what one head's ``Q K^T`` costs on one array, from the
  cycle model (exact or estimated, :mod:`sim.chip.fast_cycles`).

:mod:`sim.chip.layer` runs a layer of a model on a chip from these.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace

from golden import drain
from golden.config import ArrayConfig, PEConfig, sum_bits
from golden.cycle_model import scheduler_busy, scheduler_figures, tail_cycles, variant_parts
from golden.errors import ConfigError
from golden.opcount import linear_oracle_macs, oracle_macs, pv_oracle_macs
from golden.reuse import pair_reuse, window_reuse
from golden.softmax import ROW_PASSES
from golden.tiling import pair_tables

from .fast_cycles import estimate_cycles
from .fast_linear import LinearWork, linear_work
from .fast_pv import PvWork, pv_work
from .memories import dram_gbps, sram_bytes_per_cycle
from .node_scaling import delay_factor, energy_factor, node_key, power_factor, scale_area, scale_energy

__all__ = ["Chip", "CHIPS", "CHIP_LIMITS", "SCHEDULES", "ChipError", "chip_from", "balanced", "SignOff", "Unit",
           "HeadWork", "QK_FIELDS", "qk_options", "baseline_head", "kaleido_head", "pv_figures", "linear_figures",
           "DESIGNS", "OPS", "UNITS", "score_bytes"]

#: The two chips an estimate compares (and, beside them, the baseline chip of
#: Kaleido's area).
DESIGNS = ("kaleido", "baseline")
OPS = ("qk", "softmax", "pv", "linear")
#: Where the energy goes: ``wires`` is the operands' trip from the global buffer
#: to the arrays, ``leakage`` the logic's (the SRAM's is not modelled).
UNITS = ("pe_arrays", "dispatcher", "softmax", "sram", "wires", "dram", "leakage")

#: How a layer's attention runs: ``pipelined`` (Q K^T, softmax and P V of
#: successive blocks of queries overlap) or ``serial`` (one after the other, a what-if).
SCHEDULES = ("pipelined", "serial")


class ChipError(ValueError):
    """A chip description that cannot be built."""


#: The largest value each chip field takes: beyond, a figure is not a chip's
#: (an infinite clock, a 100 GHz one, a 10 V supply) and the model would print nonsense.
CHIP_LIMITS = {"arrays": 1 << 24, "softmax_lanes": 1 << 20, "dram_channels": 1024,
               "clock_mhz": 20000.0, "vdd": 2.5, "global_buffer_mib": 1 << 20, "acc_buffer_mib": 1 << 20,
               "dram_mtps": 100000.0, "sram_bank_bits": 8192, "sram_ports": 8}


@dataclass(frozen=True)
class Chip:
    """One accelerator chip; every parameter of the chip model.

    Members
    -------
    arrays : int
        Arrays.
    array : ArrayConfig
        Each array's PEs (``rows``, ``cols``, which the chip reads as its own):
        the design point's part that the RTL is built from, so each head's
        :class:`~golden.config.Config` takes it as it is. A chip file gives
        ``rows`` and ``cols`` (:func:`chip_from`).
    clock_mhz : float
        The chip clock at the chip's node. Not the design point's
        ``clock_mhz``: that is the cell library's sign-off clock the blocks are
        mapped and timed for, which the chip model brings to the node by the delay
        equations and checks against this one.
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
    sram_bank_bits, sram_ports : int
        Each SRAM bank's word and its ports: a bank moves ``sram_ports`` words a
        cycle, and a buffer's banks (:data:`~sim.chip.memories.SRAM_BANK_KIB`
        each) are what it moves a cycle, a bandwidth every operation respects.
    operand_broadcast : bool
        Whether one read of the global buffer feeds every array that needs the
        same operands at once (a row of the arrays' grid shares a tile of
        queries, a column one of keys), or each array reads its own.
    kaleido_share : float
        The share of the arrays that are Kaleido's; the rest are plain. Q K^T's
        heads go to every kind so that all finish together; dense work to all
        arrays. A baseline chip has none.
    coupled_share : float
        The share of the Kaleido arrays coupled to a dispatcher (a matcher, its
        feature buffer and a share of a scheduler), as the paper couples "a
        subset of PE arrays": by default Table 2's 64 x 32 = 2,048 dispatchers
        for 128 x 128 arrays, 1/8. The others run each head in channel order or
        dense (the ``pe`` variant), their operands streamed from the global buffer.
    gate_idle_arrays : bool
        Whether an array's clock is gated while it has no slot to issue
        (softmax, waits on memory): its PEs then spend nothing but their
        leakage, and each array's clock gate its own clock.
    gate_idle_dispatchers : bool
        Whether a dispatcher's clock (each matcher's, each scheduler's) is
        gated while it has no work (its array runs dense, or waits): it then
        spends its clock gate's cycle instead of its idle cycle.
    schedule : str
        ``pipelined`` or ``serial`` (:data:`SCHEDULES`).
    """

    name: str = "paper"
    arrays: int = 128 * 128
    array: ArrayConfig = ArrayConfig()
    clock_mhz: float = 1000.0
    node_nm: int = 16
    vdd: float = 0.8
    flavour: str = "HP"
    softmax_lanes: int = 512
    global_buffer_mib: float = 64.0
    acc_buffer_mib: float = 32.0
    dram_channels: int = 16
    dram_mtps: float = 6400.0
    sram_bank_bits: int = 64
    sram_ports: int = 1
    operand_broadcast: bool = True
    kaleido_share: float = 1.0
    coupled_share: float = 2048 / 16384
    gate_idle_arrays: bool = True
    gate_idle_dispatchers: bool = True
    schedule: str = "pipelined"

    def __post_init__(self):
        for f in ("gate_idle_arrays", "gate_idle_dispatchers", "operand_broadcast"):
            if not isinstance(getattr(self, f), bool):
                raise ChipError(f"chip {f} must be true or false, got {getattr(self, f)!r}")
        if self.schedule not in SCHEDULES:
            raise ChipError(f"chip schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        for f in ("kaleido_share", "coupled_share"):
            share = getattr(self, f)
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
                raise ChipError(f"chip {f} must be a number from 0 to 1, got {share!r}")
        if not isinstance(self.array, ArrayConfig):
            raise ChipError(f"chip array must be an ArrayConfig, got {self.array!r}")
        for f in ("arrays", "softmax_lanes", "dram_channels", "sram_bank_bits", "sram_ports"):
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
        factors = (delay_factor(self.node_nm, self.vdd, self.flavour),
                   energy_factor(self.node_nm, self.vdd, self.flavour),
                   power_factor(self.node_nm, self.vdd, self.flavour))
        if min(factors) <= 0:
            raise ChipError(f"chip vdd {self.vdd:g} V is outside the range the {self.node_nm} nm scaling equations "
                            "fit (a delay, energy or power factor comes out at or below 0)")

    @property
    def rows(self) -> int:
        return self.array.rows

    @property
    def cols(self) -> int:
        return self.array.cols

    @property
    def node(self) -> tuple[int, float]:
        return self.node_nm, self.vdd

    @property
    def pes(self) -> int:
        return self.arrays * self.rows * self.cols

    @property
    def dram_bytes_per_s(self) -> float:
        return dram_gbps(self.dram_channels, self.dram_mtps) * 1e9

    @property
    def global_bytes_per_cycle(self) -> float:
        """What the global buffer's banks move a cycle."""
        return sram_bytes_per_cycle(self.global_buffer_mib, self.sram_bank_bits, self.sram_ports)

    @property
    def acc_bytes_per_cycle(self) -> float:
        """What the accumulation buffer's banks move a cycle."""
        return sram_bytes_per_cycle(self.acc_buffer_mib, self.sram_bank_bits, self.sram_ports)

    @property
    def kaleido_arrays(self) -> int:
        """The Kaleido arrays of a Kaleido chip: its share of the arrays, at least one."""
        return max(1, round(self.kaleido_share * self.arrays)) if self.kaleido_share else 0

    @property
    def coupled_arrays(self) -> int:
        """The Kaleido arrays with a dispatcher: their share, at least one of any."""
        k = self.kaleido_arrays
        return min(k, max(1, round(self.coupled_share * k))) if k and self.coupled_share else 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


#: Presets. ``paper``: the chip of the paper's evaluation (128 x 128 arrays of
#: 4 x 4 PEs at 1 GHz in 16 nm, 512 softmax lanes, 64 MB + 32 MB SRAM, 16
#: DDR5-6400 channels), its SRAM in banks of one 64-bit port (the access the
#: cited SRAM energy is for).
CHIPS = {"paper": Chip()}

def score_bytes(terms: int) -> int:
    """Bytes a sum of ``terms`` int8 products takes in the accumulation buffer:
    its width as the engine drains it (:func:`golden.config.sum_bits`; 24 bits
    for a score of 128 channels), in whole bytes."""
    return -(-sum_bits(PEConfig().data_bits, terms) // 8)


def balanced(chip: Chip, head_dim: int = 128) -> Chip:
    """``chip`` with a vector unit and an accumulation buffer that keep up with its
    arrays run dense. Each array makes ``rows x cols`` scores every ``head_dim``
    slots; the vector unit reads each :data:`~golden.softmax.ROW_PASSES` times,
    a score per lane a cycle; the accumulation buffer takes the arrays' scores
    (drained whole, one access each), the vector unit's reads and its codes,
    and its banks are widened to the first power of two of bits that moves them all."""
    scores = chip.arrays * chip.rows * chip.cols / head_dim
    lanes = int(ROW_PASSES * scores)
    need = (scores + ROW_PASSES * scores) * score_bytes(head_dim) + scores  # drains, the passes' reads, codes
    bits = chip.sram_bank_bits
    while replace(chip, sram_bank_bits=bits).acc_bytes_per_cycle < need:
        bits *= 2
    return replace(chip, name="balanced", softmax_lanes=lanes, sram_bank_bits=bits)


#: ``balanced``: the paper's chip with the vector unit sized to its arrays' score
#: rate at D = 128 (6,144 lanes against 512) and the SRAM's banks widened to carry
#: them (:func:`balanced`).
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
    shape = {f.name for f in fields(ArrayConfig)}
    known = ({f.name for f in fields(Chip)} - {"array"}) | shape
    unknown = sorted(set(data) - known)
    if unknown:
        raise ChipError(f"--chip {spec}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    given = {k: data.pop(k) for k in shape & set(data)}
    for name, v in given.items():
        # A JSON true is an int to Python; an array of `true` rows is a typo.
        if type(v) is not int:
            raise ChipError(f"--chip {spec}: chip {name} must be an integer, got {v!r}")
    paper = CHIPS["paper"]
    try:
        return replace(paper, array=replace(paper.array, **given), **data)
    except ConfigError as exc:
        raise ChipError(f"--chip {spec}: chip {exc}") from None
    except TypeError as exc:
        raise ChipError(f"--chip {spec}: {exc}") from None


@dataclass(frozen=True)
class Unit:
    """One block's sign-off figures: ``area_um2``, ``energy_pj`` per action (as
    ``kaleido power`` prints them) and ``leakage_uw``; ``measured_at_mhz``, the
    clock its energy was measured at (its own where it misses the one it was
    mapped for, :func:`synth.power.energy_per_action`; None where not measured so)."""

    area_um2: float
    energy_pj: dict
    leakage_uw: float
    measured_at_mhz: float | None = None


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
    scheduler, matcher : Unit or None
        The dispatcher's parts (``busy``, ``idle``), Kaleido only.
    clusters : int
        Arrays one scheduler feeds.
    clock_gate : Unit or None
        The gate on an array's clock (action ``cycle``: the gate's own energy a
        cycle of the chip's clock, which it takes whether it opens or not).
    """

    node: tuple
    pe: Unit
    softmax: Unit
    softmax_lanes: int
    scheduler: Unit | None = None
    matcher: Unit | None = None
    clusters: int = 1
    clock_gate: Unit | None = None

    def energy(self, unit: Unit, action: str, chip: Chip) -> float:
        """pJ of one action of ``unit`` at the chip's node."""
        e = unit.energy_pj
        value = e[action] if action in e else e["full_mac"]
        return scale_energy(value, self.node, chip.node, chip.flavour)

    def area_mm2(self, unit: Unit, chip: Chip) -> float:
        return scale_area(unit.area_um2, self.node[0], chip.node_nm) * 1e-6


@dataclass
class HeadWork:
    """One head's ``Q K^T`` on one array: engine ``slots`` (the final drain
    included, the tail not) with their interval, the products, tile-group
    ``passes`` (each drains a tile of scores) of which ``first_passes`` drain a
    score's first channel group (a write; a later group's reads it and adds),
    the ``channel_steps`` streamed (each an operand byte over every row and
    column port), the scheduler's ``lead`` and ``scheduler_busy`` cycles, whether
    passes ran with the ``matcher``, the dense and oracle MAC counts, and whether
    the head ran ``paired`` (Kaleido's passes A-D, each array's matcher loading its
    tile group's features) or dense (operands streamed to the arrays). A step's
    mean head holds, in ``matcher`` and ``paired``, the share of its heads.

    ``P V~`` on the same array, per row tile of queries (:class:`~sim.chip.fast_pv.PvWork`
    as the engine chooses to run it): ``pv_tiles`` column tiles, ``pv_keys`` keys
    stepped through over all of them, ``pv_channel_keys`` products per query;
    ``pv_shared`` whether V's folds run (the share of heads, once averaged).
    None: dense (the baseline's array, or a head computed without ``V``).

    The linear layers whose input is the block's hidden state, on the same
    array, per output tile, as shares of the dense schedule's
    (:class:`~sim.chip.fast_linear.LinearWork`): ``linear_slots``,
    ``linear_passes`` (drains), ``linear_full`` and ``linear_nibble`` products;
    ``linear_windows`` whether the windows ran (the share of heads, once
    averaged). None: dense.

    ``linear_roles``: the same per linear layer, ``{role: {field: value}}``,
    where each layer's own input was captured (an activation archive); a layer
    it names uses its own, the others the ``linear_*`` fields where they take
    the hidden state, or run dense.

    Why the head ran as it did, and what reuse offered: ``qk_dense_cycles`` and
    ``qk_paired_cycles`` (the dense schedule's and the best paired schedule's
    engine cycles, the driver taking the fewer); ``pv_oracle`` and
    ``linear_oracle`` (``{role: share}``), the share of dense MACs the ideal
    reuse leaves (docs/concepts.md, "Operation counts and the oracle bound").

    ``qk_options``: every schedule the head's ``Q K^T`` could run with, each as
    its :data:`QK_FIELDS` (:func:`qk_options`), and ``qk_ran_as`` the one these
    fields hold: the head's fastest, until the chip chooses
    (:mod:`sim.chip.qk_schedule`)."""

    slots: float
    slots_low: float
    slots_high: float
    full_products: float
    nibble_products: float
    passes: float
    channel_steps: float
    first_passes: float
    lead: int = 0
    scheduler_busy: int = 0
    matcher: bool | float = False
    dense_macs: float = 0.0
    oracle_macs: float = 0.0
    paired: bool | float = False
    pv_tiles: float | None = None
    pv_keys: float | None = None
    pv_channel_keys: float | None = None
    pv_shared: float | None = None
    linear_slots: float | None = None
    linear_passes: float | None = None
    linear_full: float | None = None
    linear_nibble: float | None = None
    linear_windows: float | None = None
    linear_roles: dict | None = None
    qk_dense_cycles: float | None = None
    qk_paired_cycles: float | None = None
    pv_oracle: float | None = None
    linear_oracle: dict | None = None
    qk_options: dict | None = None
    qk_ran_as: str | None = None


def baseline_head(tokens: int, head_dim: int, rows: int, cols: int) -> HeadWork:
    """The baseline array's head: dense ``R x C`` token tiles, every channel a slot."""
    tiles = -(-tokens // rows) * -(-tokens // cols)
    slots = drain.uniform_slots(tiles, head_dim, rows)
    macs = tokens * tokens * head_dim
    return HeadWork(slots, slots, slots, macs, 0, tiles, tiles * head_dim, tiles, dense_macs=macs, oracle_macs=macs)


def kaleido_head(q, k, cfg, samples: int | None = None, seed: int = 0, v=None, scale: float | None = None,
                 x=None) -> HeadWork:
    """One head's ``Q K^T`` on Kaleido's array (``cfg``'s PE and dispatcher), from
    the fast cycle model: exact with ``samples=None``, else estimated. With int8
    ``v`` and the softmax ``scale``, its ``P V~`` too (:func:`sim.chip.fast_pv.pv_work`,
    exact); with the int8 slice ``x`` (``[N, D]``) of the block's hidden state,
    the linear layers that take it (:func:`sim.chip.fast_linear.linear_work`, exact);
    with ``{role: int8 [N, D]}``, each layer on its own input."""
    # Each operand's reuse, its pair tables and the scheduler's run are made once here
    # and handed to every model that reads them.
    rq, rk = pair_reuse(q, cfg), pair_reuse(k, cfg)
    natural = (pair_tables(q, cfg, rq), pair_tables(k, cfg, rk))
    lead, busy = scheduler_figures(natural, cfg) if cfg.dispatch.parts[0] else (None, None)
    est = estimate_cycles(q, k, cfg, samples=samples, seed=seed, natural=natural, lead=lead)
    paired = [o["cycles"] for name, o in est.options.items() if name != "dense"]
    options = qk_options(est, q, k, cfg, busy=busy)
    n, d = q.shape
    pv = {}
    if v is not None:
        rv = pair_reuse(v, cfg)
        pv = dict(pv_figures(pv_work(q, k, v, cfg, scale, reuse=(rq, rk, rv)), cfg),
                  pv_oracle=pv_oracle_share(v, cfg, rv.states))
    return HeadWork(**options[est.ran_as], dense_macs=n * k.shape[0] * d,
                    oracle_macs=oracle_macs(rq.states, rk.states),
                    qk_dense_cycles=est.options["dense"]["cycles"], qk_paired_cycles=min(paired) if paired else None,
                    qk_options=options, qk_ran_as=est.ran_as, **pv,
                    **(_linear_fields(x, cfg) if x is not None else {}))


#: :class:`HeadWork`'s fields that say how its ``Q K^T`` ran: one schedule's
#: figures (:func:`qk_options`).
QK_FIELDS = ("slots", "slots_low", "slots_high", "full_products", "nibble_products", "passes", "channel_steps",
             "first_passes", "lead", "scheduler_busy", "matcher", "paired")


def qk_options(est, q, k, cfg, busy: int | None = None) -> dict:
    """``{option: {field: value}}``: :data:`QK_FIELDS` of every schedule the driver
    may run a head's ``Q K^T`` with (a variant's dispatcher parts, and ``dense``),
    from the fast cycle model's estimate ``est`` (``busy``: the scheduler's
    cycles on the head, if the caller has them). The head's own rule, the
    fewest engine cycles, compares ``slots + lead`` (the tail is every option's)."""
    out = {}
    for name, o in est.options.items():
        off = tail_cycles(cfg) + o["lead"]
        if name == "dense":
            sch, mat, passes, first = False, False, o["tiles"], o["first_tiles"]
        else:
            # Passes A-D of each tile group drain one of its four score tiles each.
            (sch, mat), passes, first = variant_parts(name), 4 * o["tiles"], 4 * o["first_tiles"]
        if sch and busy is None:
            busy = scheduler_busy(q, k, cfg)
        out[name] = {"slots": o["cycles"] - off, "slots_low": o["low"] - off, "slots_high": o["high"] - off,
                     "full_products": o["full_products"], "nibble_products": o["nibble_products"],
                     "passes": passes, "channel_steps": o["channel_steps"], "first_passes": first,
                     "lead": o["lead"], "scheduler_busy": busy if sch else 0, "matcher": bool(mat),
                     "paired": name != "dense"}
    return out


def _linear_fields(x, cfg) -> dict:
    """:class:`HeadWork`'s linear fields: one slice of the hidden state (an array),
    or each layer's own (a dict of role to array)."""
    if not isinstance(x, dict):
        return linear_figures(linear_work(x, cfg))
    return {"linear_roles": {role: linear_figures(linear_work(xr, cfg)) for role, xr in sorted(x.items())},
            "linear_oracle": {role: _window_oracle(xr, cfg) for role, xr in sorted(x.items())}}


def _window_oracle(x, cfg) -> float:
    """The share of a linear layer's dense MACs that ideal window reuse leaves."""

    states = window_reuse(x, cfg).states
    return linear_oracle_macs(1, states) / states.size


def linear_figures(work: LinearWork) -> dict:
    """:class:`HeadWork`'s ``linear_*`` fields of a head's slice of the hidden state."""
    return {**work.factors(), "linear_windows": float(work.ran_as != "dense")}


def pv_figures(work: PvWork, cfg) -> dict:
    """:class:`HeadWork`'s ``pv_*`` fields of a head's ``P V~``."""
    if work.shared:
        tiles, keys, chk = len(work.tiles), sum(k for _, k in work.tiles), sum(c * k for c, k in work.tiles)
    else:
        tiles = -(-cfg.head_dim // cfg.cols)
        keys, chk = tiles * cfg.tokens, cfg.head_dim * cfg.tokens
    return {"pv_tiles": tiles, "pv_keys": keys, "pv_channel_keys": chk, "pv_shared": float(work.shared)}


def pv_oracle_share(v, cfg, states=None) -> float:
    """The share of ``P V~``'s dense MACs that ideal reuse of ``v`` (its reuse
    ``states``, if the caller has them) leaves."""
    states = pair_reuse(v, cfg).states if states is None else states
    return pv_oracle_macs(1, states) / states.size
