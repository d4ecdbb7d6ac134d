"""Cycle-level model of one processing element (docs/design.md, "How the PE works").

The augmented PE multiplies with two 4x8 lanes. A lane multiplies a row
operand by one nibble of a column byte, read either as a *low* part (unsigned,
no shift) or a *high* part (signed, shifted left by 4). A full 8x8 product is
lane 0 (low) plus lane 1 (high) on the same operands. A *paired* cycle carries
two channel steps, each with its own row operand, column byte and reuse flags
(the row port and the column port are both two bytes wide): a PE where only
one of them has work runs it alone, on both lanes if it needs them; a PE where
both have work gives each one lane (the dispatcher pairs two steps only where
that fits, :mod:`golden.matcher`).

Which lanes run and which of R0, R1, R2 each lane's product is added into is
decided inside the PE from the pass (mode), the flags that travel with the
operands, and whether the cycle is paired: :func:`decode` is that decision,
written as the table of docs/design.md, "How the PE works". The hand-over (``load``) and the drain
act before the cycle's products are added, so a pass's first step lands in
the freshly handed-over registers.

The drain is a chain that moves *up* each column, against the column operands'
flow: a PE that drains copies R0 into its output register; otherwise it takes
the output register of the PE below. Because PE (i, j) acts one cycle after
PE (i-1, j), a value moving up meets a capture only when two drains of the
same cycle parity are fewer than ``2*rows`` cycles apart (:mod:`golden.drain`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .pe_encoding import Load, Mode, Need, Target, lane_adds, need_lanes
from .pe_kinds import pe_kind_of

__all__ = ["PE_STAGES", "DEFAULT_PE_STAGES", "FPGA_PE_STAGES", "activity_lag",
           "RowIn", "ColIn", "LaneOp", "Decoded", "decode",
           "PEModel", "BaselinePEModel", "step_need", "wrap"]


#: Register stages of a PE from its operands to its accumulators (``Config.pe_stages``):
#: 1; 2, the products registered first; 3, besides, the PE decodes each step's
#: control a cycle ahead, from what it forwards, and multiplies what it forwarded;
#: 4, besides, the lanes' selected operands are registered before the multipliers
#: (an FPGA's DSP block takes its operands from a register: :data:`FPGA_PE_STAGES`).
PE_STAGES = (1, 2, 3, 4)

#: The default depth: the least at which every block and the whole Kaleido engine,
#: with its matcher, meet the chip clock (at one stage the Kaleido PE's multiply and
#: add in one cycle holds the engine near 126 MHz; at two, near 193).
DEFAULT_PE_STAGES = 3

#: The depth of the FPGA variant: on an ECP5 the lane select before a MULT18
#: holds the PE near 100 MHz, so the select gets a cycle of its own.
FPGA_PE_STAGES = 4


def activity_lag(stages: int) -> int:
    """Cycles by which a Kaleido PE's activity (its lanes and enables) follows
    the operands it receives: one from three stages on, where it decodes a
    cycle ahead and multiplies what it forwards."""
    return 1 if stages >= 3 else 0


def step_need(mode: Mode, sq: int, sk: int, kind=3) -> tuple[Need, tuple[Target, ...]]:
    """What one channel step computes in a PE of ``kind`` (a kind, its name or
    a built-in kind's register count), and where it goes:
    :meth:`golden.pe_kinds.PEKindModel.step_need`."""
    return pe_kind_of(kind).step_need(mode, sq, sk)


@dataclass(frozen=True)
class LaneOp:
    on: bool = False
    high: bool = False          # nibble read as a signed high part, shifted by 4
    second: bool = False        # step 2's operands (a1, b1) instead of step 1's (a0, b0)
    row: bool = False           # a ROW product: column byte times lo(row operand)


@dataclass(frozen=True)
class Decoded:
    lanes: tuple[LaneOp, LaneOp]
    enable: tuple[tuple[bool, bool], ...]      # enable[r][lane]: the lane's product
    tap: tuple[tuple[bool, bool], ...] = ()    # tap[r][lane]: the lane's tap (4 registers)


def _decoded(lanes, targets, high_lane) -> Decoded:
    enable = tuple(tuple(lane_adds(t, high_lane[l])[0] and lanes[l].on for l in (0, 1)) for t in targets)
    tap = tuple(tuple(lane_adds(t, high_lane[l])[1] and lanes[l].on for l in (0, 1)) for t in targets)
    return Decoded(tuple(lanes), enable, tap)


def _single(mode: int, sq: int, sk: int, second: bool, kind) -> Decoded:
    # One step on the whole column byte: low part in lane 0, high part in lane 1;
    # a ROW step uses lane 0 alone, on the column byte and the row's low nibble.
    need, tgt = kind.step_need(mode, sq, sk)
    l0 = LaneOp(on=need in (Need.FULL, Need.LO, Need.ROW), second=second, row=need == Need.ROW)
    l1 = LaneOp(on=need in (Need.FULL, Need.HI), high=True, second=second)
    return _decoded((l0, l1), tgt, (False, True))


def decode(mode: int, steps: int, sq0: int, sk0: int, sq1: int, sk1: int,
           kind=3) -> Decoded:
    """Lane operations and accumulate enables of one PE cycle.

    ``steps`` has bit 0 set when channel step 1 is present and bit 1 when step 2
    is (a paired cycle). Step 1 works on ``a0`` and ``b0``, step 2 on ``a1`` and
    ``b1``. When only one present step has work in this PE, it runs as a whole
    step: lane 0 takes its low part (or its ``ROW`` product), lane 1 its high
    part. When both have work, lane 0 takes step 1 and lane 1 step 2, each as
    the one nibble product it needs; a step that would need both lanes then
    adds nothing (the dispatcher never pairs such steps, :mod:`golden.matcher`).
    """
    kind = pe_kind_of(kind)
    regs = kind.registers
    off = Decoded((LaneOp(), LaneOp()), ((False, False),) * regs, ((False, False),) * regs)
    need1 = kind.step_need(mode, sq0, sk0)[0] if steps & 1 else Need.NONE
    need2 = kind.step_need(mode, sq1, sk1)[0] if steps & 2 else Need.NONE
    if need2 == Need.NONE:
        return _single(mode, sq0, sk0, False, kind) if need1 != Need.NONE else off
    if need1 == Need.NONE:
        return _single(mode, sq1, sk1, True, kind)
    lanes, targets = [LaneOp(), LaneOp()], [[Target.NO, Target.NO] for _ in range(regs)]
    highs = [False, False]
    for lane, (sq, sk) in enumerate(((sq0, sk0), (sq1, sk1))):
        need, tgt = kind.step_need(mode, sq, sk)
        if need_lanes(need) != 1:
            continue
        # The lane plays its step's low part (LO, ROW) or high part (HI), and adds as that part would.
        highs[lane] = need == Need.HI
        lanes[lane] = LaneOp(on=True, high=highs[lane], second=lane == 1, row=need == Need.ROW)
        for r in range(regs):
            targets[r][lane] = tgt[r]
    enable = tuple(tuple(lane_adds(targets[r][l], highs[l])[0] and lanes[l].on for l in (0, 1))
                   for r in range(regs))
    tap = tuple(tuple(lane_adds(targets[r][l], highs[l])[1] and lanes[l].on for l in (0, 1))
                for r in range(regs))
    return Decoded(tuple(lanes), enable, tap)


def _signed_nibble(v: int) -> int:
    return v - 16 if v & 8 else v


def _lane(a0: int, a1: int, b0: int, b1: int, op: LaneOp) -> tuple[int, int]:
    """(product, tap) of one lane. The lane multiplies an 8-bit operand by a
    nibble; the tap is the part of the product from the 8-bit operand's high
    nibble."""
    if not op.on:
        return 0, 0
    a, b = (a1, b1) if op.second else (a0, b0)
    if op.row:                           # the column byte times the row's low nibble
        wide, nib, scale = (b & 0xFF) - 256 if b & 0x80 else b & 0xFF, a & 0xF, 1
    elif op.high:                        # the column byte's high nibble, signed, shifted
        wide, nib, scale = a, _signed_nibble((b >> 4) & 0xF), 16
    else:
        wide, nib, scale = a, b & 0xF, 1
    tap = 16 * _signed_nibble((wide >> 4) & 0xF) * nib * scale
    return wide * nib * scale, tap


def wrap(v: int, bits: int) -> int:
    """Two's complement wrap of ``v`` to ``bits`` bits (what a register holds)."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


@dataclass
class RowIn:
    """What travels along a row: operands, their flags, and the cycle's control."""

    a0: int = 0
    a1: int = 0
    sq0: int = 0
    sq1: int = 0
    mode: int = 0
    steps: int = 0
    load: int = Load.KEEP
    drain: bool = False


@dataclass
class ColIn:
    """What travels down a column: the column bytes and their flags."""

    b0: int = 0                 # column operand of step 1 (and of a single step)
    b1: int = 0                 # column operand of step 2 in a paired cycle
    sk0: int = 0
    sk1: int = 0
    steps: int = 0              # the slot's steps (the row's, or more): the column moves with them


@dataclass(frozen=True)
class _Action:
    """What reaches a PE's registers in one cycle: the drain, the hand-over and
    each register's addend. With ``s`` PE stages it reaches them ``s - 1``
    cycles after its operands arrive."""

    drain: bool = False
    load: int = Load.KEEP
    adds: tuple = ()


@dataclass
class PEModel:
    """One augmented PE, cycle by cycle. ``tick`` is one rising clock edge.

    With ``stages = 2`` the cycle's products, enables, hand-over and drain are
    registered first and act on the accumulators one edge later; with 3, two
    edges later; with 4, three. ``kind`` is the PE's kind (:mod:`golden.pe_kinds`): a kind,
    its name, or a built-in kind's register count."""

    acc_bits: int
    kind: object = 3
    r: list = None
    out: int = 0
    out_valid: bool = False
    stages: int = 1

    @property
    def accumulators(self) -> int:
        return self.kind.registers

    def __post_init__(self):
        self.kind = pe_kind_of(self.kind)
        if self.r is None:
            self.r = [0] * self.accumulators
        self._pending = [_Action(adds=(0,) * self.accumulators)] * (self.stages - 1)

    def tick(self, row: RowIn, col: ColIn, out_in: int = 0, out_in_valid: bool = False):
        dec = decode(row.mode, row.steps, row.sq0, col.sk0, row.sq1, col.sk1, self.kind)
        lanes = [_lane(row.a0, row.a1, col.b0, col.b1, dec.lanes[lane]) for lane in (0, 1)]
        adds = tuple(sum(lanes[l][0] for l in (0, 1) if dec.enable[k][l])
                     + sum(lanes[l][1] for l in (0, 1) if dec.tap[k][l]) for k in range(self.accumulators))
        action = _Action(bool(row.drain), row.load, adds)
        if self.stages > 1:
            self._pending.append(action)
            action = self._pending.pop(0)
        regs = list(self.r)
        if action.drain:
            self.out, self.out_valid = regs[0], True
        elif out_in_valid or self.out_valid:       # an idle link keeps its invalid score
            self.out, self.out_valid = out_in, out_in_valid
        r3 = regs[3] if self.kind.taps else 0
        if action.load == Load.CLEAR:
            regs = [0] * self.accumulators
        elif action.load == Load.R1:
            regs[0], regs[1] = regs[1], r3
        elif action.load == Load.R2:
            regs[0] = regs[2]
        self.r = [wrap(regs[k] + action.adds[k], self.acc_bits) for k in range(self.accumulators)]


@dataclass
class BaselinePEModel:
    """The plain output-stationary 8-bit MAC, with the same drain chain (and, with
    ``stages`` above 1, its product, clear and drain reaching the accumulator
    ``stages - 1`` cycles late)."""

    acc_bits: int
    acc: int = 0
    out: int = 0
    out_valid: bool = False
    stages: int = 1
    _pending: list = field(default=None, init=False, repr=False)   # [(product, clear, drain)] in flight

    def __post_init__(self):
        self._pending = [(0, False, False)] * (self.stages - 1)

    def tick(self, a: int, b: int, valid: bool, clear: bool, drain: bool,
             out_in: int = 0, out_in_valid: bool = False):
        action = (a * b if valid else 0, bool(clear), bool(drain))
        if self.stages > 1:
            self._pending.append(action)
            action = self._pending.pop(0)
        prod, clear, drain = action
        if drain:
            self.out, self.out_valid = self.acc, True
        elif out_in_valid or self.out_valid:       # an idle link keeps its invalid score
            self.out, self.out_valid = out_in, out_in_valid
        acc = 0 if clear else self.acc
        self.acc = wrap(acc + prod, self.acc_bits)
